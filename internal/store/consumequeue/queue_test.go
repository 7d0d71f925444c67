package consumequeue

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testPerFile = 10 // units per file in tests: 200-byte files

func openTestSet(t *testing.T, fs vfs.FS) *Set {
	t.Helper()
	s, err := OpenSet("/store/consumequeue", Options{FS: fs, UnitsPerFile: testPerFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// unitFor is the unit the tests store for queue offset i: record i is 100
// bytes at commitlog offset 1000 + 100*i.
func unitFor(i int64) Unit { return Unit{Offset: 1000 + 100*i, Size: 100, TagsCode: i * 7} }

func appendRange(t *testing.T, q *Queue, from, to int64) {
	t.Helper()
	for i := from; i < to; i++ {
		if !q.Append(i, unitFor(i)) {
			t.Fatalf("append %d refused", i)
		}
	}
	if err := q.Commit(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, q *Queue, from int64) []Unit {
	t.Helper()
	var out []Unit
	for off := from; off < q.MaxOffset(); {
		us, err := q.Read(off, 4)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		if us.Len() == 0 {
			t.Fatalf("read %d: empty below max %d", off, q.MaxOffset())
		}
		for i := 0; i < us.Len(); i++ {
			out = append(out, us.At(i))
		}
		off += int64(us.Len())
		us.Release()
	}
	return out
}

func TestUnitGolden(t *testing.T) {
	u := Unit{Offset: 0x0102030405060708, Size: 0x090a0b0c, TagsCode: -2}
	b := u.AppendTo(nil)
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}
	if !bytes.Equal(b, want) {
		t.Fatalf("got % x", b)
	}
	got, err := ParseUnit(b)
	if err != nil || got != u {
		t.Fatalf("parse %+v %v", got, err)
	}
	if _, err := ParseUnit(b[:19]); !errors.Is(err, ErrShortUnit) {
		t.Fatalf("short: %v", err)
	}
	if !filler.Valid() || !filler.IsFiller() || (Unit{}).Valid() || (Unit{Offset: -1, Size: 1}).Valid() {
		t.Fatal("validity rules")
	}
}

func TestAppendReadAcrossFiles(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("TopicA", 3)
	appendRange(t, q, 0, 25)
	if q.MinOffset() != 0 || q.MaxOffset() != 25 {
		t.Fatalf("min %d max %d", q.MinOffset(), q.MaxOffset())
	}
	got := readAll(t, q, 0)
	for i, u := range got {
		if u != unitFor(int64(i)) {
			t.Fatalf("unit %d = %+v", i, u)
		}
	}
	// A read stops at the file end.
	us, err := q.Read(8, 5)
	if err != nil || us.Len() != 2 || us.First != 8 {
		t.Fatalf("read at file end: len %d err %v", us.Len(), err)
	}
	us.Release()
	names, _ := fs.List("/store/consumequeue/TopicA/3")
	want := []string{"00000000000000000000", "00000000000000000200", "00000000000000000400"}
	if len(names) != 3 || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
		t.Fatalf("files %v", names)
	}
	st, _ := fs.Stat("/store/consumequeue/TopicA/3/00000000000000000400")
	if st.Size() != testPerFile*UnitSize {
		t.Fatalf("file not full size: %d", st.Size())
	}
	if q.MaxPhysicOffset() != unitFor(24).End() {
		t.Fatalf("max physic %d", q.MaxPhysicOffset())
	}
	// Past the end: empty, no error.
	us, err = q.Read(25, 4)
	if err != nil || us.Len() != 0 {
		t.Fatalf("past end: %d %v", us.Len(), err)
	}
}

func TestDuplicatesIgnored(t *testing.T) {
	s := openTestSet(t, vfs.NewMem())
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 5)
	if q.Append(4, unitFor(4)) {
		t.Fatal("duplicate by commitlog offset accepted")
	}
	if q.Append(2, Unit{Offset: 99999, Size: 10}) {
		t.Fatal("unit below the queue end accepted")
	}
	if q.MaxOffset() != 5 {
		t.Fatalf("max %d", q.MaxOffset())
	}
}

func TestFrontPaddingAndGap(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("T", 1)
	appendRange(t, q, 25, 28)
	if q.MinOffset() != 25 || q.MaxOffset() != 28 {
		t.Fatalf("min %d max %d", q.MinOffset(), q.MaxOffset())
	}
	names, _ := fs.List("/store/consumequeue/T/1")
	if len(names) != 1 || names[0] != "00000000000000000400" {
		t.Fatalf("files %v", names)
	}
	data, _ := vfs.ReadFile(fs, "/store/consumequeue/T/1/00000000000000000400")
	for i := 0; i < 5; i++ {
		if u := unitAt(data, i*UnitSize); !u.IsFiller() {
			t.Fatalf("unit %d not filler: %+v", i, u)
		}
	}
	// Reopen: recovery keeps the fillers, CorrectMinOffset skips them.
	if err := q.Flush(0); err != nil {
		t.Fatal(err)
	}
	s2 := openTestSet(t, fs.CrashClone())
	q2 := s2.Get("T", 1)
	if err := q2.CorrectMinOffset(0); err != nil {
		t.Fatal(err)
	}
	if q2.MinOffset() != 25 || q2.MaxOffset() != 28 || q2.MaxPhysicOffset() != unitFor(27).End() {
		t.Fatalf("after reopen min %d max %d maxPhysic %d", q2.MinOffset(), q2.MaxOffset(), q2.MaxPhysicOffset())
	}
	// A gap is filled with fillers so offsets stay aligned.
	if !q2.Append(30, unitFor(30)) {
		t.Fatal("append after gap refused")
	}
	if err := q2.Commit(); err != nil {
		t.Fatal(err)
	}
	u, err := q2.UnitAt(30)
	if err != nil || u != unitFor(30) {
		t.Fatalf("unit 30 %+v %v", u, err)
	}
	if u, _ := q2.UnitAt(28); !u.IsFiller() {
		t.Fatalf("gap unit %+v", u)
	}
}

func TestRecoverLosesOnlyUnflushed(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 17)
	if err := s.Flush(0); err != nil {
		t.Fatal(err)
	}
	appendRange(t, q, 17, 19) // not flushed, same file
	s2 := openTestSet(t, fs.CrashClone())
	q2 := s2.Get("T", 0)
	if q2 == nil || q2.MaxOffset() != 17 {
		t.Fatalf("recovered max %d", q2.MaxOffset())
	}
	// Filling a file makes it durable before the next one is created.
	appendRange(t, q, 19, 23)
	s4 := openTestSet(t, fs.CrashClone())
	if m := s4.Get("T", 0).MaxOffset(); m != 20 {
		t.Fatalf("after a file rolled: max %d, want 20", m)
	}
	// Without a crash everything is there.
	s3 := openTestSet(t, fs)
	if m := s3.Get("T", 0).MaxOffset(); m != 23 {
		t.Fatalf("reopen without crash: max %d", m)
	}
}

func TestRecoverZeroesStaleTail(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 8)
	if err := s.Flush(0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Tear unit 3: units 4..7 are stale once recovery stops at 3.
	path := "/store/consumequeue/T/0/00000000000000000000"
	f, _ := fs.OpenReadWrite(path)
	f.WriteAt(make([]byte, UnitSize), 3*UnitSize)
	f.Sync()
	f.Close()
	s2 := openTestSet(t, fs)
	q2 := s2.Get("T", 0)
	if q2.MaxOffset() != 3 {
		t.Fatalf("max %d", q2.MaxOffset())
	}
	data, _ := vfs.ReadFile(fs, path)
	if !bytes.Equal(data[3*UnitSize:], make([]byte, len(data)-3*UnitSize)) {
		t.Fatal("stale units left after the end")
	}
	// Appending unit 3 again and reopening must not resurrect 4..7.
	appendRange(t, q2, 3, 4)
	q2.Flush(0)
	s3 := openTestSet(t, fs.CrashClone())
	if m := s3.Get("T", 0).MaxOffset(); m != 4 {
		t.Fatalf("max after reopen %d", m)
	}
}

func TestTruncate(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 25)
	// Keep units whose record ends at or before the end of record 13.
	if err := s.Truncate(unitFor(13).End() + 50); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 14 || q.MaxPhysicOffset() != unitFor(13).End() {
		t.Fatalf("max %d maxPhysic %d", q.MaxOffset(), q.MaxPhysicOffset())
	}
	names, _ := fs.List("/store/consumequeue/T/0")
	if len(names) != 2 {
		t.Fatalf("files %v", names)
	}
	// Truncating at a file boundary deletes the emptied file too.
	if err := q.Truncate(unitFor(9).End()); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 10 {
		t.Fatalf("max %d", q.MaxOffset())
	}
	appendRange(t, q, 10, 12)
	if got := readAll(t, q, 0); len(got) != 12 || got[11] != unitFor(11) {
		t.Fatalf("after re-append: %d units", len(got))
	}
	// Truncate everything.
	if err := q.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 0 || q.MinOffset() != 0 {
		t.Fatalf("empty: min %d max %d", q.MinOffset(), q.MaxOffset())
	}
	appendRange(t, q, 0, 2)
	if q.MaxOffset() != 2 {
		t.Fatal("append after full truncation")
	}
}

func TestDeleteBelowAndMinOffset(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 35)
	// Hold a read across the deletion: it stays usable.
	held, err := q.Read(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteBelow(unitFor(22).Offset)
	if err != nil || n != 2 {
		t.Fatalf("deleted %d err %v", n, err)
	}
	if held.At(2) != unitFor(2) {
		t.Fatal("held read changed")
	}
	held.Release()
	if q.MinOffset() != 22 || q.MaxOffset() != 35 {
		t.Fatalf("min %d max %d", q.MinOffset(), q.MaxOffset())
	}
	if _, err := q.Read(5, 1); !errors.Is(err, ErrFileMissing) {
		t.Fatalf("read of deleted file: %v", err)
	}
	if q.RollNextFile(5) != 10 {
		t.Fatal("roll next file")
	}
	// The last file is never deleted, even when all below.
	if _, err := q.DeleteBelow(1 << 40); err != nil {
		t.Fatal(err)
	}
	if names, _ := fs.List("/store/consumequeue/T/0"); len(names) != 1 {
		t.Fatalf("files %v", names)
	}
	if q.MinOffset() != q.MaxOffset() {
		t.Fatalf("all below: min %d max %d", q.MinOffset(), q.MaxOffset())
	}
}

func TestSetLoadIgnoresStrays(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	appendRange(t, s.GetOrCreate("A", 0), 0, 3)
	appendRange(t, s.GetOrCreate("A", 7), 0, 1)
	appendRange(t, s.GetOrCreate("%RETRY%g", 0), 0, 2)
	s.Flush(0)
	vfs.MkdirAllSync(fs, "/store/consumequeue/A/notanumber", 0o755)
	f, _ := fs.Create("/store/consumequeue/A/0/junk.tmp")
	f.Close()
	s2 := openTestSet(t, fs)
	topics := s2.Topics()
	if len(topics) != 2 || len(topics["A"]) != 2 || len(topics["%RETRY%g"]) != 1 {
		t.Fatalf("topics %v", topics)
	}
	if s2.Get("A", 7).MaxOffset() != 1 {
		t.Fatal("queue 7")
	}
	if err := s2.RemoveTopic("A"); err != nil {
		t.Fatal(err)
	}
	if s2.Get("A", 0) != nil {
		t.Fatal("topic not removed")
	}
	if _, err := fs.Stat(filepath.Join("/store/consumequeue", "A")); err == nil {
		t.Fatal("topic dir left")
	}
}

func TestWriteErrorKeepsPending(t *testing.T) {
	mem := vfs.NewMem()
	fail := true
	efs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if fail && op.Kind == vfs.OpWrite {
			return vfs.ErrInjected
		}
		return nil
	}))
	s := openTestSet(t, efs)
	q := s.GetOrCreate("T", 0)
	q.Append(0, unitFor(0))
	if err := q.Commit(); err == nil {
		t.Fatal("commit succeeded on failing disk")
	}
	if q.MaxOffset() != 0 || !q.HasPending() {
		t.Fatal("failed commit became visible or lost its units")
	}
	fail = false
	if err := q.Commit(); err != nil || q.MaxOffset() != 1 {
		t.Fatalf("retry: %v max %d", err, q.MaxOffset())
	}
}

// TestCrashBeforeAnyFlush: files created and filled but never flushed
// explicitly must not come back as "full" after a crash (recovery trusts
// files before the last three without scanning them).
func TestCrashBeforeAnyFlush(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 47) // 5 files, no Flush
	s2 := openTestSet(t, fs.CrashClone())
	q2 := s2.Get("T", 0)
	got := readAll(t, q2, q2.MinOffset())
	for i, u := range got {
		if u != unitFor(int64(i)) {
			t.Fatalf("unit %d after crash: %+v", i, u)
		}
	}
	if len(got) < 40 {
		t.Fatalf("full files lost: %d units", len(got))
	}
}

func TestCommitAfterRemoveTopicDropsUnits(t *testing.T) {
	fs := vfs.NewMem()
	s := openTestSet(t, fs)
	q := s.GetOrCreate("T", 0)
	appendRange(t, q, 0, 3)
	q.Append(3, unitFor(3)) // staged by the writer when the topic goes
	if err := s.RemoveTopic("T"); err != nil {
		t.Fatal(err)
	}
	if err := q.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat("/store/consumequeue/T"); err == nil {
		t.Fatal("deleted topic directory resurrected")
	}
}

// TestFirstUnsyncedAndLaggards: the first unsynced unit of each queue bounds
// what is durable; a full flush of the laggards moves the bound.
func TestFirstUnsyncedAndLaggards(t *testing.T) {
	s := openTestSet(t, vfs.NewMem())
	if _, dirty, err := s.FirstUnsynced(); err != nil || dirty {
		t.Fatalf("empty set: dirty %v %v", dirty, err)
	}
	a, b := s.GetOrCreate("A", 0), s.GetOrCreate("B", 0)
	appendRange(t, a, 0, 3) // a's units point at 1000, 1100, 1200
	if err := s.Flush(0); err != nil {
		t.Fatal(err)
	}
	appendRange(t, a, 3, 5) // unsynced from 1300
	appendRange(t, b, 0, 2) // unsynced from 1000
	if p, dirty, err := a.FirstUnsynced(); err != nil || !dirty || p != 1300 {
		t.Fatalf("queue A: %d %v %v, want 1300", p, dirty, err)
	}
	if p, dirty, err := s.FirstUnsynced(); err != nil || !dirty || p != 1000 {
		t.Fatalf("set: %d %v %v, want 1000 (queue B)", p, dirty, err)
	}
	// Only B's units are older than 1200: syncing the laggards syncs B.
	if n, err := s.FlushLaggards(1200, 10); err != nil || n != 1 {
		t.Fatalf("FlushLaggards: %d %v, want 1", n, err)
	}
	if _, dirty, _ := b.FirstUnsynced(); dirty {
		t.Fatal("queue B still unsynced")
	}
	if p, dirty, err := s.FirstUnsynced(); err != nil || !dirty || p != 1300 {
		t.Fatalf("set after the laggard: %d %v %v, want 1300", p, dirty, err)
	}
	// The limit holds.
	if n, err := s.FlushLaggards(1<<40, 0); err != nil || n != 0 {
		t.Fatalf("limit 0: %d %v", n, err)
	}
}

// exactFirstUnsynced is FirstUnsynced read from the file (no marks).
func exactFirstUnsynced(t *testing.T, q *Queue) (int64, bool) {
	t.Helper()
	q.marksMu.Lock()
	saved := q.marks
	q.marks = nil
	q.marksMu.Unlock()
	p, dirty, err := q.FirstUnsynced()
	if err != nil {
		t.Fatal(err)
	}
	q.marksMu.Lock()
	q.marks = saved
	q.marksMu.Unlock()
	return p, dirty
}

// TestFirstUnsyncedFromMarks: the flusher's bound comes from the commits'
// marks, without reading the file: exact where a commit began at the first
// unsynced unit, a lower bound otherwise (more commits than marks), never
// above the exact value; marks stay bounded and do not survive a Truncate.
func TestFirstUnsyncedFromMarks(t *testing.T) {
	s := openTestSet(t, vfs.NewMem())
	q := s.GetOrCreate("A", 0)
	check := func(exactWanted bool) {
		t.Helper()
		want, wdirty := exactFirstUnsynced(t, q)
		got, dirty, err := q.FirstUnsynced()
		if err != nil || dirty != wdirty || got > want || exactWanted && got != want {
			t.Fatalf("FirstUnsynced %d %v %v, exact %d %v", got, dirty, err, want, wdirty)
		}
	}
	next := int64(0)
	commitOne := func() {
		appendRange(t, q, next, next+1)
		next++
	}
	for range 5 {
		commitOne()
		check(true)
	}
	if err := q.Flush(0); err != nil {
		t.Fatal(err)
	}
	check(true)
	// More commits than marks while nothing is synced: still a bound.
	for range 3 * maxMarks {
		commitOne()
		check(true) // the first unsynced unit keeps its mark
	}
	if n := len(q.marks); n > maxMarks {
		t.Fatalf("%d marks, want <= %d", n, maxMarks)
	}
	if err := q.Flush(0); err != nil {
		t.Fatal(err)
	}
	commitOne()
	check(false)
	if n := len(q.marks); n > 2 {
		t.Fatalf("%d marks after a flush, want the old ones dropped", n)
	}
	// Across a file roll (testPerFile units a file) and after a Truncate.
	for next < 2*testPerFile+3 {
		commitOne()
	}
	check(false)
	if err := q.Truncate(unitFor(next - 4).End()); err != nil {
		t.Fatal(err)
	}
	next -= 3
	check(true)
	commitOne()
	check(true)
}
