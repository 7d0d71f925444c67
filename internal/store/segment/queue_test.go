package segment

import (
	"bytes"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

const testSize = 64 << 10

func openQueue(t *testing.T, fs vfs.FS, dir string, zero bool) *Queue {
	t.Helper()
	q, err := Open(Config{Dir: dir, FS: fs, Size: testSize, ZeroFill: zero})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestName(t *testing.T) {
	if got := Name(1073741824); got != "00000000001073741824" {
		t.Fatalf("Name = %q", got)
	}
	off, err := ParseName("00000000002147483648")
	if err != nil || off != 2147483648 {
		t.Fatalf("ParseName = %d, %v", off, err)
	}
	for _, bad := range []string{"", "123", "0000000000000000000a", "000000000000000000000", "-0000000000000000001"} {
		if _, err := ParseName(bad); err == nil {
			t.Errorf("ParseName(%q) accepted", bad)
		}
	}
}

func TestRollFindReload(t *testing.T) {
	for _, started := range []bool{false, true} {
		fs := vfs.NewMem()
		q := openQueue(t, fs, "/store/commitlog", true)
		if started {
			q.Start()
		}
		if q.Last() != nil || q.Find(0) != nil {
			t.Fatal("empty queue has files")
		}
		for i := 0; i < 4; i++ {
			f, err := q.Roll(0)
			if err != nil {
				t.Fatal(err)
			}
			if f.Start() != int64(i)*testSize || f.Wrote() != 0 {
				t.Fatalf("roll %d: start %d wrote %d", i, f.Start(), f.Wrote())
			}
			if _, err := f.WriteAt([]byte{byte(i + 1)}, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct{ off, start int64 }{{0, 0}, {testSize - 1, 0}, {testSize, testSize}, {4*testSize - 1, 3 * testSize}} {
			if f := q.Find(c.off); f == nil || f.Start() != c.start {
				t.Fatalf("Find(%d) = %v, want start %d", c.off, f, c.start)
			}
		}
		if q.Find(4*testSize) != nil || q.Find(-1) != nil {
			t.Fatal("Find outside the queue returned a file")
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		names, _ := fs.List("/store/commitlog")
		// A started allocator may have left the prepared fifth file; Close
		// removes it.
		if len(names) != 4 || names[3] != Name(3*testSize) {
			t.Fatalf("files after close: %v", names)
		}

		q = openQueue(t, fs, "/store/commitlog", true)
		if q.Len() != 4 {
			t.Fatalf("reload: %d files", q.Len())
		}
		for i, f := range q.Files() {
			if f.Wrote() != testSize || f.Committed() != testSize || f.Flushed() != testSize {
				t.Fatalf("reloaded file %d not full", i)
			}
			b := make([]byte, 2)
			if _, err := f.ReadAt(b, 0); err != nil || b[0] != byte(i+1) || b[1] != 0 {
				t.Fatalf("file %d content %v, %v", i, b, err)
			}
		}
		_ = q.Close()
	}
}

func TestAllocatorPreparesNext(t *testing.T) {
	fs := vfs.NewMem()
	q := openQueue(t, fs, "cl", false)
	q.Start()
	defer q.Close()
	if _, err := q.Roll(0); err != nil {
		t.Fatal(err)
	}
	// The allocator prepares the second file in the background.
	wait.For(t, 5*time.Second, "the next file preallocated", func() bool {
		_, err := fs.Stat(filepath.Join("cl", Name(testSize)))
		return err == nil
	})
	f, err := q.Roll(0)
	if err != nil || f.Start() != testSize {
		t.Fatalf("roll: %v %v", f, err)
	}
}

func TestOpenRejectsBadDirectories(t *testing.T) {
	fs := vfs.NewMem()
	q := openQueue(t, fs, "d", false)
	for i := 0; i < 3; i++ {
		if _, err := q.Roll(0); err != nil {
			t.Fatal(err)
		}
	}
	_ = q.Close()

	// A leftover preallocation is removed; a foreign name is ignored.
	f, _ := fs.Create(filepath.Join("d", Name(3*testSize)+tmpSuffix))
	_ = f.Close()
	f, _ = fs.Create(filepath.Join("d", "README"))
	_ = f.Close()
	q = openQueue(t, fs, "d", false)
	if q.Len() != 3 {
		t.Fatalf("len %d", q.Len())
	}
	_ = q.Close()
	if _, err := fs.Stat(filepath.Join("d", Name(3*testSize)+tmpSuffix)); err == nil {
		t.Fatal("tmp file kept")
	}

	// A short last file is extended; a short file in the middle is refused.
	vf, _ := fs.OpenReadWrite(filepath.Join("d", Name(2*testSize)))
	_ = vf.Truncate(testSize / 2)
	_ = vf.Close()
	q = openQueue(t, fs, "d", false)
	if q.Len() != 3 {
		t.Fatalf("len %d after extending the last file", q.Len())
	}
	_ = q.Close()
	if fi, err := fs.Stat(filepath.Join("d", Name(2*testSize))); err != nil || fi.Size() != testSize {
		t.Fatalf("last file not extended: %v %v", fi, err)
	}
	vf, _ = fs.OpenReadWrite(filepath.Join("d", Name(testSize)))
	_ = vf.Truncate(testSize / 2)
	_ = vf.Close()
	if _, err := Open(Config{Dir: "d", FS: fs, Size: testSize}); err == nil {
		t.Fatal("short middle file accepted")
	}
	_ = fs.Remove(filepath.Join("d", Name(testSize)))
	// Gap.
	if _, err := Open(Config{Dir: "d", FS: fs, Size: testSize}); err == nil {
		t.Fatal("gap accepted")
	}
}

func TestTruncate(t *testing.T) {
	fs := vfs.NewMem()
	q := openQueue(t, fs, "d", false)
	defer q.Close()
	for i := 0; i < 4; i++ {
		f, err := q.Roll(0)
		if err != nil {
			t.Fatal(err)
		}
		f.SetWrote(testSize)
	}
	if err := q.Truncate(testSize + 100); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 2 {
		t.Fatalf("len %d after truncate", q.Len())
	}
	last := q.Last()
	if last.Start() != testSize || last.Wrote() != 100 || last.Committed() != 100 || last.Flushed() != 100 {
		t.Fatalf("last: start %d positions %d/%d/%d", last.Start(), last.Wrote(), last.Committed(), last.Flushed())
	}
	names, _ := fs.List("d")
	if len(names) != 2 {
		t.Fatalf("files on disk %v", names)
	}
	// Truncating at a file boundary keeps the file that starts there, empty.
	if err := q.Truncate(testSize); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 2 || q.Last().Wrote() != 0 || q.First().Wrote() != testSize {
		t.Fatalf("boundary truncate: len %d", q.Len())
	}
	// Roll continues after the last file.
	f, err := q.Roll(0)
	if err != nil || f.Start() != 2*testSize {
		t.Fatalf("roll after truncate: %v %v", f, err)
	}
}

func TestDeleteRespectsHolders(t *testing.T) {
	fs := vfs.NewMem()
	q := openQueue(t, fs, "d", false)
	defer q.Close()
	for i := 0; i < 4; i++ {
		if _, err := q.Roll(0); err != nil {
			t.Fatal(err)
		}
	}
	held := q.FindHeld(10)
	if held == nil {
		t.Fatal("FindHeld failed")
	}
	// Not expired yet: nothing deleted.
	if rm, err := q.DeleteExpired(time.Now().Add(-time.Hour), false, 10); rm.Files != 0 || err != nil {
		t.Fatalf("deleted %+v, %v", rm, err)
	}
	rm, err := q.DeleteExpired(time.Now().Add(time.Hour), false, 2)
	if rm != (Removed{Files: 2}) || err != nil {
		t.Fatalf("deleted %+v, %v", rm, err)
	}
	if q.First().Start() != 2*testSize {
		t.Fatalf("first after delete: %d", q.First().Start())
	}
	// The held file is still readable and still on disk.
	if _, err := fs.Stat(held.Path()); err != nil {
		t.Fatal("held file removed from disk")
	}
	if _, err := held.ReadAt(make([]byte, 8), 0); err != nil {
		t.Fatalf("read of held removed file: %v", err)
	}
	if held.Hold() != true {
		t.Fatal("second hold failed")
	}
	held.Release()
	held.Release()
	if _, err := fs.Stat(held.Path()); err == nil {
		t.Fatal("released removed file still on disk")
	}
	if held.Hold() {
		t.Fatal("Hold succeeded on a closed file")
	}
	// Force deletes regardless of time but never the last file.
	if rm, _ := q.DeleteExpired(time.Time{}, true, 10); rm.Files != 1 || q.Len() != 1 {
		t.Fatalf("forced delete %+v, len %d", rm, q.Len())
	}
	if n, _ := q.DeleteBelow(1 << 40); n != 0 {
		t.Fatal("DeleteBelow removed the last file")
	}
}

func TestStickyErrors(t *testing.T) {
	var failing sync.Map
	inj := vfs.InjectorFunc(func(op vfs.Op) error {
		if _, ok := failing.Load(op.Kind); ok {
			return vfs.ErrInjected
		}
		return nil
	})
	fs := vfs.NewErrorFS(vfs.NewMem(), inj)
	q := openQueue(t, fs, "d", false)
	defer q.Close()
	f, err := q.Roll(0)
	if err != nil {
		t.Fatal(err)
	}
	failing.Store(vfs.OpSync, true)
	if err := f.Sync(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("sync: %v", err)
	}
	failing.Delete(vfs.OpSync)
	if err := f.Sync(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("sync after a failure must stay failed: %v", err)
	}
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("write after a failed sync succeeded")
	}
	// A failed creation reports an error and leaves no file behind.
	failing.Store(vfs.OpTruncate, true)
	if _, err := q.Roll(0); err == nil {
		t.Fatal("roll succeeded with failing truncate")
	}
	failing.Delete(vfs.OpTruncate)
	names, _ := fs.List("d")
	if len(names) != 1 {
		t.Fatalf("files: %v", names)
	}
}

func TestCrashDuringPreallocation(t *testing.T) {
	// Crash at every mutating operation of two rolls: the directory always
	// reopens, and holds only complete files.
	for k := int64(0); ; k++ {
		mem := vfs.NewMem()
		trig := vfs.CrashAt(vfs.OpMutating, k)
		q, err := Open(Config{Dir: "d", FS: vfs.NewErrorFS(mem, trig), Size: testSize, ZeroFill: true})
		if err == nil {
			for i := 0; i < 2 && err == nil; i++ {
				var f *File
				if f, err = q.Roll(0); err == nil {
					_, err = f.WriteAt(bytes.Repeat([]byte{7}, 16), 0)
				}
			}
			_ = q.Close()
		}
		if !trig.Fired() {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		img := mem.CrashClone()
		q2, err := Open(Config{Dir: "d", FS: img, Size: testSize})
		if err != nil {
			t.Fatalf("k=%d: reopen: %v", k, err)
		}
		for _, f := range q2.Files() {
			if f.Start()%testSize != 0 {
				t.Fatalf("k=%d: bad start", k)
			}
		}
		_ = q2.Close()
	}
}

// TestDeleteExpiredForcedReportsUnexpired: with force, head files go
// whatever their age, but the ones not yet expired (or of unknown age) are
// counted and spanned apart, and their removal is not logged as expiry.
func TestDeleteExpiredForcedReportsUnexpired(t *testing.T) {
	now := time.Now()
	mem := vfs.NewMem()
	var failStat atomic.Pointer[string] // a path whose Stat fails
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if p := failStat.Load(); p != nil && op.Kind == vfs.OpStat && op.Path == *p {
			return vfs.ErrInjected
		}
		return nil
	}))
	var logs bytes.Buffer // only this goroutine deletes, so only it logs
	q, err := Open(Config{Dir: "d", FS: fs, Size: testSize, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for i := 0; i < 6; i++ {
		if _, err := q.Roll(0); err != nil {
			t.Fatal(err)
		}
	}
	files := q.Files()
	if err := mem.SetModTime(files[0].Path(), now.Add(-100*time.Hour)); err != nil { // expired
		t.Fatal(err)
	}
	for _, f := range files[1:] {
		if err := mem.SetModTime(f.Path(), now.Add(-time.Hour)); err != nil { // young
			t.Fatal(err)
		}
	}
	unreadable := files[3].Path()
	failStat.Store(&unreadable)
	cutoff := now.Add(-72 * time.Hour)

	// Without force only the expired head file goes.
	rm, err := q.DeleteExpired(cutoff, false, 10)
	if err != nil || rm != (Removed{Files: 1}) {
		t.Fatalf("unforced: %+v %v", rm, err)
	}
	if !strings.Contains(logs.String(), "why=expired") {
		t.Fatalf("expired removal not logged as such:\n%s", logs.String())
	}
	logs.Reset()

	// With force, young files go too, up to max; a file whose age cannot
	// be read counts as unexpired and its Stat error is reported.
	rm, err = q.DeleteExpired(cutoff, true, 3)
	want := Removed{Files: 3, Unexpired: 3, UnexpiredFrom: testSize, UnexpiredTo: 4 * testSize}
	if rm != want {
		t.Fatalf("forced: %+v, want %+v", rm, want)
	}
	if !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("forced: stat error %v", err)
	}
	if strings.Contains(logs.String(), "why=expired") || strings.Count(logs.String(), whyForced) != 3 {
		t.Fatalf("forced removals logged as:\n%s", logs.String())
	}
	if q.First().Start() != 4*testSize {
		t.Fatalf("first after forced delete: %d", q.First().Start())
	}
}
