package vfs

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

func TestSparseFillsByWrittenPages(t *testing.T) {
	s := NewSparse(NewMem(), 4*sparsePage)
	if err := s.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := s.Create("/d/seg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A large size is a hole: it costs nothing.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.DiskUsage("/d"); d.Used != 0 || d.Avail != 4*sparsePage {
		t.Fatalf("after truncate: %+v", d)
	}
	// 1.5 pages written take two blocks; rewriting them takes none.
	data := bytes.Repeat([]byte{1}, sparsePage*3/2)
	for range 2 {
		if n, err := f.WriteAt(data, 0); err != nil || n != len(data) {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	if d, _ := s.DiskUsage("/d"); d.Used != 2*sparsePage || d.UsedPercent() != 50 {
		t.Fatalf("after writes: %+v", d)
	}
	// Three more pages do not fit: the prefix that fits is written (short
	// write) and the rest fails with ENOSPC.
	big := bytes.Repeat([]byte{2}, 3*sparsePage)
	n, err := f.WriteAt(big, 2*sparsePage)
	if !errors.Is(err, syscall.ENOSPC) || n != 2*sparsePage {
		t.Fatalf("write past capacity: %d %v", n, err)
	}
	got := make([]byte, 3*sparsePage)
	if _, err := f.ReadAt(got, 2*sparsePage); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:2*sparsePage], big[:2*sparsePage]) || !bytes.Equal(got[2*sparsePage:], make([]byte, sparsePage)) {
		t.Fatal("short write did not write exactly its prefix")
	}
	// Renaming keeps the blocks; removing gives them back.
	if err := s.Rename("/d/seg", "/d/seg2"); err != nil {
		t.Fatal(err)
	}
	if s.Used() != 4*sparsePage {
		t.Fatalf("used after rename: %d", s.Used())
	}
	if err := s.Remove("/d/seg2"); err != nil {
		t.Fatal(err)
	}
	if s.Used() != 0 {
		t.Fatalf("used after remove: %d", s.Used())
	}
	// Raising the capacity lets writes through again.
	s.SetCapacity(0)
	g, err := s.Create("/d/other")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.WriteAt(bytes.Repeat([]byte{3}, 8*sparsePage), 0); err != nil {
		t.Fatal(err)
	}
}
