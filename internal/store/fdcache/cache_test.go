package fdcache

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// countingFS counts the descriptors open on the inner FS, independently of
// the cache's own bookkeeping.
type countingFS struct {
	vfs.FS
	open, peak atomic.Int64
}

type countedFile struct {
	vfs.File
	fs     *countingFS
	closed atomic.Bool
}

func (c *countingFS) track(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	n := c.open.Add(1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return &countedFile{File: f, fs: c}, nil
}

func (c *countingFS) Create(name string) (vfs.File, error) { return c.track(c.FS.Create(name)) }
func (c *countingFS) OpenReadWrite(name string) (vfs.File, error) {
	return c.track(c.FS.OpenReadWrite(name))
}

func (f *countedFile) Close() error {
	if !f.closed.Swap(true) {
		f.fs.open.Add(-1)
	}
	return f.File.Close()
}

func createFiles(t *testing.T, c *Cache, prefix string, n int) []*File {
	t.Helper()
	files := make([]*File, n)
	for i := range files {
		f, err := c.Create(fmt.Sprintf("/d/%s%03d", prefix, i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{byte(i)}, 0); err != nil {
			t.Fatal(err)
		}
		f.Release()
		files[i] = f
	}
	return files
}

// TestCapAndLRU: with more files than the cap, at most Max descriptors are
// ever open, every file still reads back, and the least recently used file
// is the one closed.
func TestCapAndLRU(t *testing.T) {
	mem := vfs.NewMem()
	_ = mem.MkdirAll("/d", 0o755)
	cfs := &countingFS{FS: mem}
	c := New(cfs, 8)
	files := createFiles(t, c, "", 50)
	for round := 0; round < 3; round++ {
		for i, f := range files {
			var b [1]byte
			if _, err := f.ReadAt(b[:], 0); err != nil || b[0] != byte(i) {
				t.Fatalf("file %d: %v %d", i, err, b[0])
			}
		}
	}
	if p := cfs.peak.Load(); p > 8 {
		t.Fatalf("peak open %d > cap 8", p)
	}
	st := c.Stats()
	if st.PeakOpen > 8 || st.Open != int(cfs.open.Load()) || st.Open != 8 {
		t.Fatalf("stats %+v, fs open %d", st, cfs.open.Load())
	}
	// Open now: 42..49, 42 the least recently used. Using 42 makes 43 the
	// one a new open evicts.
	read := func(i int) {
		if _, err := files[i].ReadAt(make([]byte, 1), 0); err != nil {
			t.Fatal(err)
		}
	}
	opens := c.Stats().Opens
	read(42)
	read(0)
	read(42)
	if got := c.Stats().Opens; got != opens+1 {
		t.Fatalf("opens %d, want %d: a recently used file was closed", got, opens+1)
	}
	read(43)
	if got := c.Stats().Opens; got != opens+2 {
		t.Fatalf("opens %d, want %d: the least recently used file stayed open", got, opens+2)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if cfs.open.Load() != 0 {
		t.Fatalf("%d descriptors open after Close", cfs.open.Load())
	}
}

// TestHeldFilesStayOpen: files held beyond the cap stay usable; the count
// returns to the cap as they are released.
func TestHeldFilesStayOpen(t *testing.T) {
	mem := vfs.NewMem()
	_ = mem.MkdirAll("/d", 0o755)
	cfs := &countingFS{FS: mem}
	c := New(cfs, 4)
	files := createFiles(t, c, "", 10)
	for _, f := range files[:6] {
		if err := f.Hold(); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range files[:6] {
		var b [1]byte
		if _, err := f.ReadAt(b[:], 0); err != nil || b[0] != byte(i) {
			t.Fatalf("held file %d: %v", i, err)
		}
	}
	if n := cfs.open.Load(); n != 6 {
		t.Fatalf("open %d, want the 6 held", n)
	}
	for _, f := range files[:6] {
		f.Release()
	}
	if n := cfs.open.Load(); n != 4 {
		t.Fatalf("open %d after release, want 4", n)
	}
	_ = c.Close()
}

// TestEvictionSyncsDirtyFiles: a written file closed by eviction is
// durable (a crash keeps it) and its Sync does not reopen it.
func TestEvictionSyncsDirtyFiles(t *testing.T) {
	mem := vfs.NewMem()
	_ = vfs.MkdirAllSync(mem, "/d", 0o755)
	c := New(mem, 4)
	files := createFiles(t, c, "", 4) // written, not synced
	if err := mem.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	opens := c.Stats().Opens
	more := make([]*File, 4)
	for i := range more {
		f, err := c.Create(fmt.Sprintf("/d/x%d", i))
		if err != nil {
			t.Fatal(err)
		}
		f.Release()
		more[i] = f
	}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Stats().Opens; got != opens+4 {
		t.Fatalf("Sync of evicted files reopened them: opens %d, want %d", got, opens+4)
	}
	crashed := mem.CrashClone()
	for i := range files {
		f, err := crashed.Open(fmt.Sprintf("/d/%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		if _, err := f.ReadAt(b[:], 0); err != nil || b[0] != byte(i) {
			t.Fatalf("file %d after crash: %v %d", i, err, b[0])
		}
		f.Close()
	}
	_ = c.Close()
}

// TestFailedSyncAtEvictionIsSticky: when the sync before an eviction's
// close fails, the file's next Sync reports it (through a new descriptor
// an fsync would succeed and hide the loss).
func TestFailedSyncAtEvictionIsSticky(t *testing.T) {
	var fail atomic.Bool
	efs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if fail.Load() && op.Kind == vfs.OpSync && strings.HasSuffix(op.Path, "/000") {
			return vfs.ErrInjected
		}
		return nil
	}))
	_ = efs.MkdirAll("/d", 0o755)
	c := New(efs, 4)
	files := createFiles(t, c, "", 1)
	fail.Store(true)
	createFiles(t, c, "x", 4) // evicts /d/000
	if c.Stats().Evictions == 0 {
		t.Fatal("nothing evicted")
	}
	fail.Store(false)
	for i := 0; i < 2; i++ {
		if err := files[0].Sync(); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("sync %d after a failed eviction sync: %v", i, err)
		}
	}
	_ = c.Close()
}

// TestForget: a forgotten file is closed without a sync and refuses use;
// a held one closes on its last Release.
func TestForget(t *testing.T) {
	mem := vfs.NewMem()
	_ = mem.MkdirAll("/d", 0o755)
	cfs := &countingFS{FS: mem}
	c := New(cfs, 4)
	files := createFiles(t, c, "", 2)
	files[0].Forget()
	if n := cfs.open.Load(); n != 1 {
		t.Fatalf("open %d after Forget of an idle file", n)
	}
	if _, err := files[0].ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrForgotten) {
		t.Fatalf("read after Forget: %v", err)
	}
	_ = files[1].Hold()
	files[1].Forget()
	if n := cfs.open.Load(); n != 1 {
		t.Fatal("held file closed by Forget")
	}
	files[1].Release()
	if n := cfs.open.Load(); n != 0 {
		t.Fatalf("open %d after the last Release of a forgotten file", n)
	}
	_ = c.Close()
}

// TestConcurrentUse: many goroutines reading and writing many files through
// a small cache; no descriptor is closed under a user (every operation
// succeeds) and the cap holds up to the number of concurrent users.
func TestConcurrentUse(t *testing.T) {
	mem := vfs.NewMem()
	_ = mem.MkdirAll("/d", 0o755)
	cfs := &countingFS{FS: mem}
	const capacity, workers = 8, 4
	c := New(cfs, capacity)
	files := createFiles(t, c, "", 40)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 400; i++ {
				f := files[(i*7+w*13)%len(files)]
				if _, err := f.WriteAt([]byte{1, 2}, int64(8+w*2)); err != nil {
					errs <- err
					return
				}
				if _, err := f.ReadAt(make([]byte, 2), int64(8+w*2)); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					if err := f.Sync(); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if p := cfs.peak.Load(); p > capacity {
		t.Fatalf("peak %d > cap %d", p, capacity)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := cfs.open.Load(); n != 0 {
		t.Fatalf("%d open after Close", n)
	}
}

// gateFS holds WriteAt on its files until release is closed, once armed.
type gateFS struct {
	vfs.FS
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

type gateFile struct {
	vfs.File
	fs *gateFS
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	f, err := g.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &gateFile{f, g}, nil
}

func (g *gateFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := g.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return &gateFile{f, g}, nil
}

func (f *gateFile) WriteAt(b []byte, off int64) (int, error) {
	if f.fs.armed.CompareAndSwap(true, false) {
		close(f.fs.entered)
		<-f.fs.release
	}
	return f.File.WriteAt(b, off)
}

// TestWriteDuringSyncStaysDirty: a write still in progress when a Sync
// starts is not covered by it, so the file is synced again when evicted
// and the write survives a crash.
func TestWriteDuringSyncStaysDirty(t *testing.T) {
	mem := vfs.NewMem()
	_ = vfs.MkdirAllSync(mem, "/d", 0o755)
	g := &gateFS{FS: mem, entered: make(chan struct{}), release: make(chan struct{})}
	c := New(g, 4)
	f, err := c.Create("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	f.Release()
	if err := mem.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	g.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := f.WriteAt([]byte("late"), 0)
		done <- err
	}()
	<-g.entered
	if err := f.Sync(); err != nil { // runs while the write is held
		t.Fatal(err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	createFiles(t, c, "x", 4) // evicts /d/a
	crashed := mem.CrashClone()
	cf, err := crashed.Open("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	b := make([]byte, 4)
	if _, err := cf.ReadAt(b, 0); err != nil || string(b) != "late" {
		t.Fatalf("write made during a Sync lost at eviction: %q %v", b, err)
	}
	_ = c.Close()
}
