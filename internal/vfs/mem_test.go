package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
)

func memWrite(t *testing.T, m *MemFS, name string, data []byte, sync bool) File {
	t.Helper()
	f, err := m.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func memContent(t *testing.T, m *MemFS, name string) ([]byte, bool) {
	t.Helper()
	b, err := ReadFile(m, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

func TestMemCrashDropsUnsyncedData(t *testing.T) {
	m := NewMem()
	if err := MkdirAllSync(m, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f := memWrite(t, m, "/d/f", []byte("durable"), true)
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	// Unsynced overwrite and append are lost; the file's size comes back too.
	if _, err := f.WriteAt([]byte("XX-and-more"), 5); err != nil {
		t.Fatal(err)
	}
	c := m.CrashClone()
	if got, ok := memContent(t, c, "/d/f"); !ok || string(got) != "durable" {
		t.Fatalf("after crash: %q, %v", got, ok)
	}
	// The original is untouched by the clone and vice versa.
	if got, _ := memContent(t, m, "/d/f"); string(got) != "durabXX-and-more" {
		t.Fatalf("original after clone: %q", got)
	}
	memWrite(t, c, "/d/g", []byte("clone only"), true).Close()
	if _, ok := memContent(t, m, "/d/g"); ok {
		t.Fatal("a write to the clone reached the original")
	}
	// Once synced, the new content survives.
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, _ := memContent(t, m.CrashClone(), "/d/f"); string(got) != "durabXX-and-more" {
		t.Fatalf("after sync+crash: %q", got)
	}
	// An unsynced truncate is undone; a synced one is kept.
	if err := f.Truncate(3); err != nil {
		t.Fatal(err)
	}
	if got, _ := memContent(t, m.CrashClone(), "/d/f"); string(got) != "durabXX-and-more" {
		t.Fatalf("unsynced truncate survived: %q", got)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(10); err != nil { // grown part reads zeros, even after the crash
		t.Fatal(err)
	}
	f.Sync()
	if got, _ := memContent(t, m.CrashClone(), "/d/f"); !bytes.Equal(got, append([]byte("dur"), make([]byte, 7)...)) {
		t.Fatalf("synced shrink+grow: %q", got)
	}
	f.Close()
}

func TestMemCrashDirectoryEntries(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/a/b", 0o755); err != nil {
		t.Fatal(err)
	}
	// Synced data under a directory whose entry was never synced is lost.
	memWrite(t, m, "/a/b/f", []byte("x"), true).Close()
	if err := m.SyncDir("/a/b"); err != nil {
		t.Fatal(err)
	}
	c := m.CrashClone()
	if names, _ := c.List("/"); len(names) != 0 {
		t.Fatalf("unsynced mkdir survived: %v", names)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CrashClone().Stat("/a/b"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("/a/b survived without SyncDir(/a): %v", err)
	}
	if err := m.SyncDir("/a"); err != nil {
		t.Fatal(err)
	}
	if got, ok := memContent(t, m.CrashClone(), "/a/b/f"); !ok || string(got) != "x" {
		t.Fatalf("fully synced file lost: %q %v", got, ok)
	}

	// A file synced but its create not made durable is lost.
	memWrite(t, m, "/a/b/new", []byte("y"), true).Close()
	if _, ok := memContent(t, m.CrashClone(), "/a/b/new"); ok {
		t.Fatal("create without SyncDir survived")
	}
	// A remove without SyncDir is undone, with the durable content.
	if err := m.Remove("/a/b/f"); err != nil {
		t.Fatal(err)
	}
	if got, ok := memContent(t, m.CrashClone(), "/a/b/f"); !ok || string(got) != "x" {
		t.Fatalf("unsynced remove: %q %v", got, ok)
	}
	// A rename without SyncDir is undone; after SyncDir it is complete.
	if err := m.Rename("/a/b/new", "/a/b/renamed"); err != nil {
		t.Fatal(err)
	}
	c = m.CrashClone()
	if names, _ := c.List("/a/b"); !slices.Equal(names, []string{"f"}) {
		t.Fatalf("before SyncDir: %v", names)
	}
	if err := m.SyncDir("/a/b"); err != nil {
		t.Fatal(err)
	}
	c = m.CrashClone()
	if names, _ := c.List("/a/b"); !slices.Equal(names, []string{"renamed"}) {
		t.Fatalf("after SyncDir: %v", names)
	}
	if got, _ := memContent(t, c, "/a/b/renamed"); string(got) != "y" {
		t.Fatalf("renamed content: %q", got)
	}
	// Recovering twice from the same image gives the same state.
	c2 := c.CrashClone()
	if got, _ := memContent(t, c2, "/a/b/renamed"); string(got) != "y" {
		t.Fatal("crash of a crash image lost data")
	}
}

func TestMemWriteFileAtomicSurvivesCrash(t *testing.T) {
	m := NewMem()
	if err := MkdirAllSync(m, "/store/config", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(m, "/store/config/topics.json", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if got, ok := memContent(t, m.CrashClone(), "/store/config/topics.json"); !ok || string(got) != "v1" {
		t.Fatalf("atomic write lost: %q %v", got, ok)
	}
}

func TestMemCrashKeepsRandomUnsyncedPages(t *testing.T) {
	m := NewMem()
	f := memWrite(t, m, "/seg", make([]byte, 64*memChunk), true)
	m.SyncDir("/")
	data := bytes.Repeat([]byte{0xAB}, 64*memChunk)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := m.CrashCloneWith(CrashOptions{UnsyncedPagePercent: 50, Rand: rand.New(rand.NewPCG(7, 7))})
	got, _ := memContent(t, c, "/seg")
	kept := 0
	for i := 0; i < len(got); i += memChunk {
		page := got[i : i+memChunk]
		switch {
		case bytes.Equal(page, data[:memChunk]):
			kept++
		case bytes.Equal(page, make([]byte, memChunk)):
		default:
			t.Fatalf("page %d is neither old nor new: pages are kept whole", i/memChunk)
		}
	}
	if kept == 0 || kept == 64 {
		t.Fatalf("kept %d of 64 pages at 50%%", kept)
	}
	if a, b := m.CrashCloneWith(CrashOptions{UnsyncedPagePercent: 100}), m.CrashClone(); true {
		if got, _ := memContent(t, a, "/seg"); !bytes.Equal(got, data) {
			t.Fatal("100% must keep every page")
		}
		if got, _ := memContent(t, b, "/seg"); !bytes.Equal(got, make([]byte, 64*memChunk)) {
			t.Fatal("0% must keep none")
		}
	}
}

func TestMemSparseLargeFile(t *testing.T) {
	m := NewMem()
	f, err := m.Create("/seg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const gib = 1 << 30
	if err := f.Truncate(gib); err != nil { // a preallocated 1 GiB segment costs nothing
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("end"), gib-3); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := f.ReadAt(buf, gib-6); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "\x00\x00\x00end" {
		t.Fatalf("tail = %q", buf)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if len(f.(*memFile).n.data.chunks) != 1 {
		t.Fatal("MemFS stored zero pages")
	}
}

func TestMemCapacity(t *testing.T) {
	m := NewMem()
	m.SetCapacity(10 * memChunk)
	d, _ := m.DiskUsage("/")
	if d.Total != 10*memChunk || d.Avail != d.Total || d.Used != 0 {
		t.Fatalf("DiskUsage = %+v", d)
	}
	f := memWrite(t, m, "/a", make([]byte, 8*memChunk), false)
	defer f.Close()
	if d, _ := m.DiskUsage("/"); d.Avail != 2*memChunk || d.UsedPercent() != 80 {
		t.Fatalf("DiskUsage = %+v (%v%%)", d, d.UsedPercent())
	}
	if _, err := f.WriteAt(make([]byte, 3*memChunk), 8*memChunk); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past capacity: %v", err)
	}
	if err := f.Truncate(11 * memChunk); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("truncate past capacity: %v", err)
	}
	// Freeing space lets writes resume.
	g := memWrite(t, m, "/b", make([]byte, memChunk), false)
	g.Close()
	if err := m.Remove("/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 2*memChunk), 8*memChunk); err != nil {
		t.Fatalf("write within capacity: %v", err)
	}
	if d, _ := m.DiskUsage("/"); d.Avail != 0 {
		t.Fatalf("avail = %d, want 0", d.Avail)
	}
	m.SetCapacity(0)
	if d, _ := m.DiskUsage("/"); d.Total != memUnlimited {
		t.Fatalf("unlimited total = %d", d.Total)
	}
}

func TestMemConcurrentCrashClone(t *testing.T) {
	// Writers keep going while clones are taken: every clone must be a
	// consistent image (no race, each page old or new).
	m := NewMem()
	f := memWrite(t, m, "/f", make([]byte, 16*memChunk), true)
	m.SyncDir("/")
	done := make(chan struct{})
	go func() {
		defer close(done)
		page := bytes.Repeat([]byte{1}, memChunk)
		for i := range 200 {
			f.WriteAt(page, int64(i%16)*memChunk)
			if i%10 == 0 {
				f.Sync()
			}
		}
	}()
	for range 20 {
		c := m.CrashClone()
		if got, ok := memContent(t, c, "/f"); !ok || len(got) != 16*memChunk {
			t.Fatalf("clone lost the file: %d %v", len(got), ok)
		}
	}
	<-done
	f.Close()
}

func TestMemCrashTornPages(t *testing.T) {
	m := NewMem()
	old := bytes.Repeat([]byte{0x11}, 32*memChunk)
	f := memWrite(t, m, "/seg", old, true)
	m.SyncDir("/")
	cur := bytes.Repeat([]byte{0x22}, 32*memChunk)
	if _, err := f.WriteAt(cur, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	image := func(seed uint64) []byte {
		c := m.CrashCloneWith(CrashOptions{UnsyncedPagePercent: 100, TornPages: true, Rand: rand.New(rand.NewPCG(seed, 0))})
		got, _ := memContent(t, c, "/seg")
		return got
	}
	got := image(3)
	torn := 0
	for p := 0; p < len(got); p += memChunk {
		page := got[p : p+memChunk]
		cut := bytes.IndexByte(page, 0x11)
		if cut < 0 {
			cut = memChunk
		}
		if cut%memSector != 0 || !bytes.Equal(page[:cut], cur[:cut]) || !bytes.Equal(page[cut:], old[:memChunk-cut]) {
			t.Fatalf("page %d is not a sector prefix of new data over old data", p/memChunk)
		}
		if cut != 0 && cut != memChunk {
			torn++
		}
	}
	if torn == 0 {
		t.Fatal("no page was torn")
	}
	if !bytes.Equal(image(3), got) {
		t.Fatal("the same seed gave a different crash image")
	}
}

func TestMemSetModTime(t *testing.T) {
	m := NewMem()
	f := memWrite(t, m, "/a", []byte("x"), false)
	defer f.Close()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := m.SetModTime("/a", old); err != nil {
		t.Fatal(err)
	}
	if fi, err := m.Stat("/a"); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("Stat after SetModTime: %v %v", fi, err)
	}
	if _, err := f.WriteAt([]byte("y"), 1); err != nil {
		t.Fatal(err)
	}
	if fi, _ := m.Stat("/a"); !fi.ModTime().After(old) {
		t.Fatalf("a write kept the old time %v", fi.ModTime())
	}
	if err := m.SetModTime("/missing", old); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SetModTime of a missing file: %v", err)
	}
}
