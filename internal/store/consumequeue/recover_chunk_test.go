package consumequeue

import (
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// TestRecoverAcrossScanChunks: recovery reads files in chunks; a queue
// whose end lies beyond the first chunks (here 5,000 units of a
// full-size 300,000-unit file) recovers every unit: a chunk must never cut
// a unit in two and take the cut for the end.
func TestRecoverAcrossScanChunks(t *testing.T) {
	const units = 5000
	mem := vfs.NewMem()
	open := func() *Set {
		s, err := OpenSet("/cq", Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recover(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	appendRange(t, s.GetOrCreate("T", 0), 0, units)
	if err := s.Flush(0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open()
	defer s.Close()
	q := s.Get("T", 0)
	if q.MaxOffset() != units {
		t.Fatalf("recovered %d units, want %d", q.MaxOffset(), units)
	}
	if u, err := q.UnitAt(units - 1); err != nil || u != unitFor(units-1) {
		t.Fatalf("last unit %+v, %v", u, err)
	}
}
