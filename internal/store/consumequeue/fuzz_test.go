package consumequeue

import (
	"bytes"
	"testing"

	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/vfs"
)

// FuzzUnits feeds arbitrary bytes to the unit reader (recovery's scanner):
// the valid prefix never exceeds the input, each unit in it is valid and the
// one after is not, and re-encoding the prefix gives the same bytes.
func FuzzUnits(f *testing.F) {
	var valid []byte
	for i := int64(0); i < 3; i++ {
		valid = unitFor(i).AppendTo(valid)
	}
	f.Add(valid)
	f.Add([]byte{})
	f.Add(valid[:UnitSize+7])
	f.Add(append(filler.AppendTo(nil), valid...))
	f.Add(append(valid, make([]byte, UnitSize)...))
	f.Add(Unit{Offset: -1, Size: 5}.AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := ValidPrefix(b)
		if n*UnitSize > len(b) {
			t.Fatalf("prefix %d units beyond %d bytes", n, len(b))
		}
		var re []byte
		for i := 0; i < n; i++ {
			u, err := ParseUnit(b[i*UnitSize:])
			if err != nil || !u.Valid() {
				t.Fatalf("unit %d: %+v %v", i, u, err)
			}
			re = u.AppendTo(re)
		}
		if !bytes.Equal(re, b[:n*UnitSize]) {
			t.Fatal("re-encoding differs")
		}
		if (n+1)*UnitSize <= len(b) {
			if u, _ := ParseUnit(b[n*UnitSize:]); u.Valid() {
				t.Fatalf("scan stopped at a valid unit %+v", u)
			}
		}
		// Two halves: the prefix of the first half is a prefix of the whole.
		h := len(b) / 2
		if m := ValidPrefix(b[:h]); m > n {
			t.Fatalf("half %d > whole %d", m, n)
		}
	})
}

// FuzzRecover recovers a queue whose last file holds arbitrary bytes: it
// never fails or panics, every unit it keeps is valid, the bytes after the
// end are zero, and recovering again gives the same queue.
func FuzzRecover(f *testing.F) {
	var valid []byte
	for i := int64(0); i < 6; i++ {
		valid = unitFor(i).AppendTo(valid)
	}
	f.Add(valid)
	f.Add(append(valid[:45], valid[60:]...))
	f.Add(append(filler.AppendTo(nil), valid...))
	f.Add(append(append(valid[:40], make([]byte, 20)...), valid[60:]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		const per = 10
		if len(data) > per*UnitSize {
			data = data[:per*UnitSize]
		}
		fs := vfs.NewMem()
		dir := "/cq/T/0"
		if err := vfs.MkdirAllSync(fs, dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file, _ := fs.Create(dir + "/" + segment.Name(0))
		file.Truncate(per * UnitSize)
		file.WriteAt(data, 0)
		file.Close()
		open := func() *Queue {
			s, err := OpenSet("/cq", Options{FS: fs, UnitsPerFile: per})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Recover(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.Get("T", 0)
		}
		padded := append(append([]byte(nil), data...), make([]byte, per*UnitSize-len(data))...)
		q := open()
		n := q.MaxOffset()
		if n != int64(ValidPrefix(padded)) {
			t.Fatalf("max %d for %d valid units", n, ValidPrefix(padded))
		}
		content, _ := vfs.ReadFile(fs, dir+"/"+segment.Name(0))
		if !bytes.Equal(content[n*UnitSize:], make([]byte, len(content)-int(n*UnitSize))) {
			t.Fatal("bytes after the recovered end are not zero")
		}
		if q2 := open(); q2.MaxOffset() != n || q2.MaxPhysicOffset() != q.MaxPhysicOffset() {
			t.Fatalf("second recovery: max %d vs %d", q2.MaxOffset(), n)
		}
	})
}
