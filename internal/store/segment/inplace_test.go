package segment

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// countingHandles opens each file only while an operation uses it and
// counts the opens: a stand-in for a descriptor cache.
type countingHandles struct {
	fs vfs.FS

	mu     sync.Mutex
	opens  int
	closed map[string]int
}

type lazyHandle struct {
	h    *countingHandles
	path string
}

func (h *countingHandles) Open(path string) Handle { return &lazyHandle{h, path} }

func (h *countingHandles) Create(path string) (Handle, error) {
	vf, err := h.fs.Create(path)
	if err != nil {
		return nil, err
	}
	return &lazyHandle{h, path}, vf.Close()
}

func (l *lazyHandle) do(op func(vfs.File) error) error {
	l.h.mu.Lock()
	l.h.opens++
	l.h.mu.Unlock()
	vf, err := l.h.fs.OpenReadWrite(l.path)
	if err != nil {
		return err
	}
	return errors.Join(op(vf), vf.Close())
}

func (l *lazyHandle) ReadAt(p []byte, off int64) (n int, err error) {
	err = l.do(func(vf vfs.File) (e error) { n, e = vf.ReadAt(p, off); return e })
	return n, err
}

func (l *lazyHandle) WriteAt(p []byte, off int64) (n int, err error) {
	err = l.do(func(vf vfs.File) (e error) { n, e = vf.WriteAt(p, off); return e })
	return n, err
}

func (l *lazyHandle) Sync() error { return l.do(func(vf vfs.File) error { return vf.Sync() }) }

func (l *lazyHandle) Truncate(size int64) error {
	return l.do(func(vf vfs.File) error { return vf.Truncate(size) })
}

func (l *lazyHandle) Close() error {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	if l.h.closed == nil {
		l.h.closed = map[string]int{}
	}
	l.h.closed[l.path]++
	return nil
}

// TestCreateInPlaceWithHandles: a queue of small files created in place
// through the owner's handles. Open of a missing directory is an empty
// queue and makes nothing; Roll makes the directory and the file (no
// ".tmp", OnCreate counted), sized; reads and writes go through the
// handles; a reopen loads the files by stat without opening them; Close
// closes each handle once.
func TestCreateInPlaceWithHandles(t *testing.T) {
	mem := vfs.NewMem()
	h := &countingHandles{fs: mem}
	created := 0
	cfg := Config{Dir: "/s/t/0", FS: mem, Size: 200, Handles: h, CreateInPlace: true,
		OnCreate: func() { created++ }}
	q, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 {
		t.Fatalf("len %d", q.Len())
	}
	if _, err := mem.Stat("/s"); err == nil {
		t.Fatal("Open made the directory")
	}
	// An empty queue rolls to its start rounded down to the file size.
	f, err := q.Roll(450)
	if err != nil {
		t.Fatal(err)
	}
	if f.Start() != 400 || created != 1 {
		t.Fatalf("start %d, created %d", f.Start(), created)
	}
	if names, _ := mem.List("/s/t/0"); len(names) != 1 || names[0] != Name(400) {
		t.Fatalf("files %v", names)
	}
	if fi, err := mem.Stat(filepath.Join("/s/t/0", Name(400))); err != nil || fi.Size() != 200 {
		t.Fatalf("file not sized: %v %v", fi, err)
	}
	if _, err := f.WriteAt([]byte("unit"), 60); err != nil {
		t.Fatal(err)
	}
	f.SetWrote(64)
	if _, err := q.Roll(0); err != nil {
		t.Fatal(err)
	}
	_ = q.Close()
	if h.closed[filepath.Join("/s/t/0", Name(400))] != 1 || h.closed[filepath.Join("/s/t/0", Name(600))] != 1 {
		t.Fatalf("closes %v", h.closed)
	}

	opens := h.opens
	q, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if q.Len() != 2 || h.opens != opens {
		t.Fatalf("reopen: len %d, %d opens", q.Len(), h.opens-opens)
	}
	b := make([]byte, 4)
	if _, err := q.Find(460).ReadAt(b, 60); err != nil || string(b) != "unit" {
		t.Fatalf("read %q %v", b, err)
	}

	// New: an empty queue without a look at the directory.
	n, err := New(cfg)
	if err != nil || n.Len() != 0 {
		t.Fatalf("New: %v", err)
	}
	_ = n.Close()
	if _, err := New(Config{Dir: "d", FS: mem, Size: 200}); err == nil {
		t.Fatal("New without CreateInPlace accepted")
	}
}

// TestAllowGaps: with AllowGaps a file missing in the middle is tolerated;
// Find finds the files around the gap and nothing in it; a misaligned file
// is still refused.
func TestAllowGaps(t *testing.T) {
	mem := vfs.NewMem()
	cfg := Config{Dir: "d", FS: mem, Size: testSize}
	q := openQueue(t, mem, "d", false)
	for i := 0; i < 4; i++ {
		if _, err := q.Roll(0); err != nil {
			t.Fatal(err)
		}
	}
	_ = q.Close()
	if err := mem.Remove(filepath.Join("d", Name(testSize))); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(cfg); err == nil {
		t.Fatal("gap accepted without AllowGaps")
	}
	cfg.AllowGaps = true
	q, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.Len() != 3 {
		t.Fatalf("len %d", q.Len())
	}
	for off, want := range map[int64]int64{0: 0, testSize + 5: -1, 2*testSize + 5: 2 * testSize, 4*testSize - 1: 3 * testSize, 4 * testSize: -1} {
		f := q.Find(off)
		switch {
		case want < 0 && f != nil:
			t.Errorf("Find(%d) = file %d, want none", off, f.Start())
		case want >= 0 && (f == nil || f.Start() != want):
			t.Errorf("Find(%d) = %v, want file %d", off, f, want)
		}
	}
	_ = q.Close()
	f, _ := mem.Create(filepath.Join("d", Name(5*testSize+1)))
	_ = f.Truncate(testSize)
	_ = f.Close()
	if _, err := Open(cfg); err == nil {
		t.Fatal("misaligned file accepted")
	}
}

// TestTruncateDropEmpty: unlike Truncate, a file starting exactly at the
// cut goes too, down to an empty queue; the next Roll starts where asked.
func TestTruncateDropEmpty(t *testing.T) {
	mem := vfs.NewMem()
	q := openQueue(t, mem, "d", false)
	defer q.Close()
	for i := 0; i < 3; i++ {
		f, err := q.Roll(0)
		if err != nil {
			t.Fatal(err)
		}
		f.SetWrote(testSize)
	}
	if err := q.TruncateDropEmpty(2 * testSize); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 2 || q.Last().End() != 2*testSize || q.Last().Wrote() != testSize {
		t.Fatalf("len %d", q.Len())
	}
	if err := q.TruncateDropEmpty(testSize + 10); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 2 || q.Last().Wrote() != 10 {
		t.Fatalf("inside a file: len %d wrote %d", q.Len(), q.Last().Wrote())
	}
	if err := q.TruncateDropEmpty(0); err != nil {
		t.Fatal(err)
	}
	if names, _ := mem.List("d"); q.Len() != 0 || len(names) != 0 {
		t.Fatalf("len %d, files %v", q.Len(), names)
	}
	if f, err := q.Roll(3 * testSize); err != nil || f.Start() != 3*testSize {
		t.Fatalf("roll after: %v %v", f, err)
	}
}

// TestView: View sees the list in order without copying it.
func TestView(t *testing.T) {
	q := openQueue(t, vfs.NewMem(), "d", false)
	defer q.Close()
	for i := 0; i < 3; i++ {
		if _, err := q.Roll(0); err != nil {
			t.Fatal(err)
		}
	}
	var starts []int64
	q.View(func(files []*File) {
		for _, f := range files {
			starts = append(starts, f.Start())
		}
	})
	if len(starts) != 3 || starts[0] != 0 || starts[2] != 2*testSize {
		t.Fatalf("starts %v", starts)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		q.View(func(files []*File) { _ = len(files) })
	}); allocs != 0 {
		t.Fatalf("View allocates %.0f times", allocs)
	}
}

// TestStartAfterClose: a queue that never started its allocator can be
// closed, and is not started afterwards.
func TestStartAfterClose(t *testing.T) {
	q := openQueue(t, vfs.NewMem(), "d", false)
	_ = q.Close()
	q.Start() // refused: goleak would see the allocator otherwise
	if q.PrepareErr() != nil {
		t.Fatal("prepare error on a closed queue")
	}
	if err := q.Prepare(0); err == nil {
		t.Fatal("Prepare without an allocator succeeded")
	}
}
