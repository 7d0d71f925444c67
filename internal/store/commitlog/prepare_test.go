package commitlog

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// firstSegmentCreations counts creations of the segment file named name.
type firstSegmentCreations struct {
	name string
	n    atomic.Int64
}

func (c *firstSegmentCreations) MaybeError(op vfs.Op) error {
	if op.Kind == vfs.OpCreate && strings.HasSuffix(op.Path, c.name+".tmp") {
		c.n.Add(1)
	}
	return nil
}

// TestPrepareSegment: on a fresh log PrepareSegment creates the first
// segment before any put and the first put takes it; on a log whose last
// segment has room it does nothing (Start already asked for the next one).
func TestPrepareSegment(t *testing.T) {
	mem := vfs.NewMem()
	rec := &firstSegmentCreations{name: segment.Name(0)}
	cfg := testConfig(vfs.NewErrorFS(mem, rec), true)
	l := openLog(t, cfg)
	prepared, err := l.PrepareSegment()
	if err != nil || !prepared {
		t.Fatalf("PrepareSegment on a fresh log: %v %v", prepared, err)
	}
	if rec.n.Load() != 1 || len(l.Segments()) != 0 {
		t.Fatalf("after PrepareSegment: %d creations, segments %v", rec.n.Load(), l.Segments())
	}
	res := l.Put(context.Background(), newRecord("T", 0, []byte("x"), ""), PutOptions{})
	if res.Status != PutOK || res.WroteOffset != 0 {
		t.Fatalf("first put: %v at %d", res.Status, res.WroteOffset)
	}
	if n := rec.n.Load(); n != 1 {
		t.Fatalf("the first segment was created %d times", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened with room in the last segment: nothing to wait for, and the
	// next segment is prepared in the background.
	l = openLog(t, cfg)
	defer l.Close()
	if prepared, err := l.PrepareSegment(); err != nil || prepared {
		t.Fatalf("PrepareSegment with room left: %v %v", prepared, err)
	}
	wait.For(t, 10*time.Second, "the next segment prepared in the background", func() bool {
		_, err := mem.Stat(filepath.Join(cfg.Dir, segment.Name(cfg.SegmentSize)))
		return err == nil
	})
}
