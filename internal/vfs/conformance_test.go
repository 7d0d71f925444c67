package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// implementations returns every FS under test with a fresh directory to work in.
func implementations(t *testing.T) map[string]func(t *testing.T) (FS, string) {
	return map[string]func(t *testing.T) (FS, string){
		"os":  func(t *testing.T) (FS, string) { return Default, t.TempDir() },
		"mem": func(t *testing.T) (FS, string) { return NewMem(), "/data" },
		"errorfs(mem)": func(t *testing.T) (FS, string) {
			return NewErrorFS(NewMem(), InjectorFunc(func(Op) error { return nil })), "data"
		},
		"errorfs(os)": func(t *testing.T) (FS, string) {
			return NewErrorFS(Default, FailNth(OpAll, -1)), t.TempDir()
		},
		"sparse(mem)": func(t *testing.T) (FS, string) { return NewSparse(NewMem(), 1<<30), "/data" },
	}
}

// TestConformance runs the same behavioural checks on every implementation:
// the store must not be able to tell them apart (except for durability).
func TestConformance(t *testing.T) {
	for name, mk := range implementations(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range conformanceCases {
				t.Run(tc.name, func(t *testing.T) {
					fsys, dir := mk(t)
					if err := fsys.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					tc.fn(t, fsys, dir)
				})
			}
		})
	}
}

var conformanceCases = []struct {
	name string
	fn   func(t *testing.T, fsys FS, dir string)
}{
	{"ReadWriteAt", testReadWriteAt},
	{"CreateTruncatesExisting", testCreateTruncates},
	{"TruncateGrowShrink", testTruncate},
	{"OpenMissing", testOpenMissing},
	{"ReadOnlyRejectsWrite", testReadOnly},
	{"ListSortedAndStat", testListStat},
	{"RenameReplaces", testRename},
	{"RemoveAndRemoveAll", testRemove},
	{"SyncAndSyncDir", testSync},
	{"WritebackIsOnlyAHint", testWriteback},
	{"DiskUsage", testDiskUsage},
	{"LockExclusive", testLock},
	{"Helpers", testHelpers},
	{"ConcurrentDistinctRanges", testConcurrent},
}

func mustCreate(t *testing.T, fsys FS, name string, data []byte) File {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 {
		if n, err := f.WriteAt(data, 0); err != nil || n != len(data) {
			t.Fatalf("WriteAt = %d, %v", n, err)
		}
	}
	return f
}

func readAll(t *testing.T, f File) []byte {
	t.Helper()
	size, err := f.Size()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, size)
	if n, err := f.ReadAt(buf, 0); n != len(buf) || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	return buf
}

func testReadWriteAt(t *testing.T, fsys FS, dir string) {
	name := filepath.Join(dir, "f")
	f := mustCreate(t, fsys, name, []byte("hello"))
	defer f.Close()
	if f.Name() != name {
		t.Fatalf("Name = %q, want %q", f.Name(), name)
	}
	// A write past the end leaves a zero-filled hole.
	if _, err := f.WriteAt([]byte("XY"), 8000); err != nil {
		t.Fatal(err)
	}
	if size, _ := f.Size(); size != 8002 {
		t.Fatalf("size = %d, want 8002", size)
	}
	got := readAll(t, f)
	want := make([]byte, 8002)
	copy(want, "hello")
	copy(want[8000:], "XY")
	if !bytes.Equal(got, want) {
		t.Fatal("content mismatch after sparse write")
	}
	// Reading across the end returns the available prefix and io.EOF.
	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 7996)
	if n != 6 || err != io.EOF {
		t.Fatalf("ReadAt past end = %d, %v; want 6, EOF", n, err)
	}
	if !bytes.Equal(buf[:6], []byte{0, 0, 0, 0, 'X', 'Y'}) {
		t.Fatalf("ReadAt past end bytes = %q", buf[:6])
	}
	// Overwrite inside, spanning a page boundary.
	span := bytes.Repeat([]byte{7}, 5000)
	if _, err := f.WriteAt(span, 3); err != nil {
		t.Fatal(err)
	}
	got = readAll(t, f)
	copy(want[3:], span)
	if !bytes.Equal(got, want) {
		t.Fatal("content mismatch after overwrite")
	}
}

func testCreateTruncates(t *testing.T, fsys FS, dir string) {
	name := filepath.Join(dir, "f")
	f := mustCreate(t, fsys, name, []byte("0123456789"))
	f.Close()
	f = mustCreate(t, fsys, name, nil)
	defer f.Close()
	if size, _ := f.Size(); size != 0 {
		t.Fatalf("size after re-Create = %d", size)
	}
	if _, err := fsys.Create(filepath.Join(dir, "nodir", "f")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Create in missing dir: %v", err)
	}
}

func testTruncate(t *testing.T, fsys FS, dir string) {
	f := mustCreate(t, fsys, filepath.Join(dir, "f"), bytes.Repeat([]byte{1}, 10000))
	defer f.Close()
	if err := f.Truncate(4100); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(12000); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, f)
	if len(got) != 12000 {
		t.Fatalf("len = %d", len(got))
	}
	for i, b := range got {
		want := byte(0)
		if i < 4100 {
			want = 1
		}
		if b != want {
			t.Fatalf("byte %d = %d, want %d (grown part must read zeros)", i, b, want)
		}
	}
}

func testOpenMissing(t *testing.T, fsys FS, dir string) {
	for _, open := range []func(string) (File, error){fsys.Open, fsys.OpenReadWrite} {
		if _, err := open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("open missing: %v", err)
		}
	}
	if _, err := fsys.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat missing: %v", err)
	}
}

func testReadOnly(t *testing.T, fsys FS, dir string) {
	name := filepath.Join(dir, "f")
	mustCreate(t, fsys, name, []byte("abc")).Close()
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("WriteAt on a read-only file succeeded")
	}
	rw, err := fsys.OpenReadWrite(name)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := rw.WriteAt([]byte("X"), 1); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, f); string(got) != "aXc" {
		t.Fatalf("read-only handle sees %q, want aXc", got)
	}
}

func testListStat(t *testing.T, fsys FS, dir string) {
	for _, n := range []string{"00000000000000001024", "00000000000000000000", "b"} {
		mustCreate(t, fsys, filepath.Join(dir, n), []byte(n)).Close()
	}
	if err := fsys.MkdirAll(filepath.Join(dir, "a", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"00000000000000000000", "00000000000000001024", "a", "b"}
	if !slices.Equal(names, want) {
		t.Fatalf("List = %v, want %v", names, want)
	}
	fi, err := fsys.Stat(filepath.Join(dir, "b"))
	if err != nil || fi.IsDir() || fi.Size() != 1 || fi.Name() != "b" {
		t.Fatalf("Stat(b) = %+v, %v", fi, err)
	}
	fi, err = fsys.Stat(filepath.Join(dir, "a"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("Stat(a) = %+v, %v", fi, err)
	}
	if _, err := fsys.List(filepath.Join(dir, "b")); err == nil {
		t.Fatal("List of a file succeeded")
	}
	if err := fsys.MkdirAll(filepath.Join(dir, "b", "x"), 0o755); err == nil {
		t.Fatal("MkdirAll through a file succeeded")
	}
}

func testRename(t *testing.T, fsys FS, dir string) {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mustCreate(t, fsys, a, []byte("new")).Close()
	mustCreate(t, fsys, b, []byte("old-content")).Close()
	if err := fsys.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("old name still there: %v", err)
	}
	f, err := fsys.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := readAll(t, f); string(got) != "new" {
		t.Fatalf("renamed content = %q", got)
	}
	if err := fsys.Rename(filepath.Join(dir, "missing"), b); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename missing: %v", err)
	}
}

func testRemove(t *testing.T, fsys FS, dir string) {
	sub := filepath.Join(dir, "sub")
	if err := fsys.MkdirAll(filepath.Join(sub, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(sub, "deep", "f")
	f := mustCreate(t, fsys, name, []byte("data"))
	if err := fsys.Remove(sub); err == nil {
		t.Fatal("Remove of a non-empty directory succeeded")
	}
	if err := fsys.Remove(name); err != nil {
		t.Fatal(err)
	}
	// An open handle keeps working after its name is removed (POSIX).
	if got := readAll(t, f); string(got) != "data" {
		t.Fatalf("read after remove = %q", got)
	}
	f.Close()
	if err := fsys.Remove(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second Remove: %v", err)
	}
	mustCreate(t, fsys, name, []byte("x")).Close()
	if err := fsys.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(sub); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
	if err := fsys.RemoveAll(filepath.Join(dir, "never", "was")); err != nil {
		t.Fatalf("RemoveAll of a missing path: %v", err)
	}
}

func testSync(t *testing.T, fsys FS, dir string) {
	f := mustCreate(t, fsys, filepath.Join(dir, "f"), []byte("x"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err == nil {
		t.Fatal("second Close succeeded")
	}
	if err := fsys.SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}

func testDiskUsage(t *testing.T, fsys FS, dir string) {
	d, err := fsys.DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Total == 0 || d.Avail > d.Total || d.Used > d.Total {
		t.Fatalf("DiskUsage = %+v", d)
	}
	if p := d.UsedPercent(); p < 0 || p > 100 {
		t.Fatalf("UsedPercent = %v for %+v", p, d)
	}
}

func testLock(t *testing.T, fsys FS, dir string) {
	name := filepath.Join(dir, "lock")
	l1, err := fsys.Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Lock(name); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	if err := l1.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := fsys.Lock(name)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	l2.Close()
}

func testHelpers(t *testing.T, fsys FS, dir string) {
	deep := filepath.Join(dir, "x", "y", "z")
	if err := MkdirAllSync(fsys, deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAllSync(fsys, deep, 0o755); err != nil {
		t.Fatalf("second MkdirAllSync: %v", err)
	}
	name := filepath.Join(deep, "checkpoint")
	for _, content := range []string{"first version", "v2"} {
		if err := WriteFileAtomic(fsys, name, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(fsys, name)
		if err != nil || string(got) != content {
			t.Fatalf("ReadFile = %q, %v; want %q", got, err, content)
		}
	}
	names, _ := fsys.List(deep)
	if !slices.Equal(names, []string{"checkpoint"}) {
		t.Fatalf("temporary file left behind: %v", names)
	}
}

func testConcurrent(t *testing.T, fsys FS, dir string) {
	f := mustCreate(t, fsys, filepath.Join(dir, "f"), nil)
	defer f.Close()
	const writers, chunk = 8, 3000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := bytes.Repeat([]byte{byte(w + 1)}, chunk)
			if _, err := f.WriteAt(buf, int64(w*chunk)); err != nil {
				t.Error(err)
			}
			if err := f.Sync(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got := readAll(t, f)
	for i, b := range got {
		if b != byte(i/chunk+1) {
			t.Fatalf("byte %d = %d", i, b)
		}
	}
}

// testWriteback: Writeback (started, then waited for) succeeds on a written
// range and beyond the end, and changes neither content nor size.
func testWriteback(t *testing.T, fsys FS, dir string) {
	data := bytes.Repeat([]byte("writeback"), 1000)
	f := mustCreate(t, fsys, filepath.Join(dir, "wb"), data)
	defer f.Close()
	for _, wait := range []bool{false, true} {
		if err := Writeback(f, 0, int64(len(data)), wait); err != nil {
			t.Fatalf("Writeback(wait=%v) = %v", wait, err)
		}
		if err := Writeback(f, int64(len(data)), 1<<20, wait); err != nil {
			t.Fatalf("Writeback past the end (wait=%v) = %v", wait, err)
		}
	}
	got := make([]byte, len(data))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("content changed by Writeback (err %v)", err)
	}
	if size, err := f.Size(); err != nil || size != int64(len(data)) {
		t.Fatalf("Size = %d, %v; want %d", size, err, len(data))
	}
	if _, ok := f.(Writebacker); !ok && fsys == Default && runtime.GOOS == "linux" {
		t.Error("the OS file does not implement Writebacker")
	}
}
