package consumequeue

import (
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// TestReadAheadServesSequentialReads: after one read the following units
// come from the block, without a file read, and equal what the file holds.
func TestReadAheadServesSequentialReads(t *testing.T) {
	s, err := OpenSet("/store/consumequeue", Options{FS: vfs.NewMem(), UnitsPerFile: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 100)
	us, err := q.Read(0, 4)
	if err != nil || us.Len() != 4 {
		t.Fatalf("read 0: %d units, %v", us.Len(), err)
	}
	us.Release()
	if q.ra.n != 100*UnitSize || q.ra.pos != 0 {
		t.Fatalf("block after the first read: pos %d, %d bytes", q.ra.pos, q.ra.n)
	}
	// The block is what is used: change it and the read shows it.
	mark := unitFor(1000)
	copy(q.ra.buf[8*UnitSize:], mark.AppendTo(nil))
	us, _ = q.Read(6, 4)
	if us.Len() != 4 || us.At(2) != mark || us.At(0) != unitFor(6) {
		t.Fatalf("read 6 from the block: %+v", us.At(2))
	}
	us.Release()
	// A generation change (what Truncate does) makes it stale.
	q.bumpGen()
	q.bumpGen()
	if got := readAll(t, q, 0); len(got) != 100 || got[8] != unitFor(8) {
		t.Fatalf("after a generation change: %d units, unit 8 %+v", len(got), got[8])
	}
}

// TestReadAheadAfterTruncate: units re-appended after a truncation are
// read as written, not as the block held them before.
func TestReadAheadAfterTruncate(t *testing.T) {
	s, err := OpenSet("/store/consumequeue", Options{FS: vfs.NewMem(), UnitsPerFile: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 50)
	if got := readAll(t, q, 0); len(got) != 50 {
		t.Fatalf("%d units", len(got))
	}
	if err := q.Truncate(unitFor(19).End()); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 20 {
		t.Fatalf("max %d", q.MaxOffset())
	}
	// Other units at the same queue offsets: records of another size.
	for i := int64(20); i < 30; i++ {
		if !q.Append(i, Unit{Offset: unitFor(19).End() + 50*(i-20), Size: 50, TagsCode: 1}) {
			t.Fatalf("append %d refused", i)
		}
	}
	if err := q.Commit(); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, q, 0)
	if len(got) != 30 || got[19] != unitFor(19) || got[20].Size != 50 || got[29].Size != 50 {
		t.Fatalf("after truncate and re-append: %d units, 19 %+v, 20 %+v", len(got), got[19], got[20])
	}
}

// TestReadAheadReleased: closing the queues gives their blocks back to the
// global bound.
func TestReadAheadReleased(t *testing.T) {
	before := readAheadTotal.Load()
	s, err := OpenSet("/store/consumequeue", Options{FS: vfs.NewMem(), UnitsPerFile: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for id := int32(0); id < 3; id++ {
		q := s.GetOrCreate("T", id)
		appendRange(t, q, 0, 10)
		readAll(t, q, 0)
	}
	if got := readAheadTotal.Load() - before; got != 3*readAheadBytes {
		t.Fatalf("3 queues read: %d bytes of blocks", got)
	}
	s.Close()
	if got := readAheadTotal.Load() - before; got != 0 {
		t.Fatalf("after Close: %d bytes of blocks", got)
	}
}
