package store

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

// segmentCreations counts the creations of CommitLog segment files, and
// those of the first segment while a put runs.
type segmentCreations struct {
	total      atomic.Int64
	firstInPut atomic.Int64
	putRunning atomic.Bool
}

func (c *segmentCreations) MaybeError(op vfs.Op) error {
	if op.Kind == vfs.OpCreate && strings.Contains(op.Path, "/"+CommitLogDir+"/") && strings.HasSuffix(op.Path, ".tmp") {
		c.total.Add(1)
		if c.putRunning.Load() && strings.HasSuffix(op.Path, segment.Name(0)+".tmp") {
			c.firstInPut.Add(1)
		}
	}
	return nil
}

// TestOpenPreparesFirstSegment: a fresh SYNC_FLUSH store has its first
// segment zero-filled before Open returns, so the first put creates no
// file; the one after is prepared in the background.
func TestOpenPreparesFirstSegment(t *testing.T) {
	mem := vfs.NewMem()
	rec := &segmentCreations{}
	cfg := testConfig(vfs.NewErrorFS(mem, rec))
	cfg.FlushSync = true
	s := openStore(t, cfg)
	if _, err := mem.Stat(filepath.Join(testDir, CommitLogDir, segment.Name(0))); err != nil {
		t.Fatalf("first segment not prepared by Open: %v", err)
	}
	if n := rec.total.Load(); n != 1 {
		t.Fatalf("%d segments created by Open, want 1", n)
	}
	if len(s.log.Segments()) != 0 {
		t.Fatal("the prepared segment is part of the log before any put")
	}
	rec.putRunning.Store(true)
	res := put(t, s, newRecord("T", 0, []byte("first"), nil))
	rec.putRunning.Store(false)
	if res.WroteOffset != 0 {
		t.Fatalf("first put at %d", res.WroteOffset)
	}
	if n := rec.firstInPut.Load(); n != 0 {
		t.Fatalf("the first put created its segment itself (%d times)", n)
	}
	wait.For(t, 10*time.Second, "next segment prepared", func() bool {
		_, err := mem.Stat(filepath.Join(testDir, CommitLogDir, segment.Name(cfg.SegmentSize)))
		return err == nil
	})
}

// TestDiskFullSegmentPreparation: on a disk without room for the first
// segment Open still succeeds; puts are refused with CreateMappedFileFailed
// and a reason that says the disk is full, without writing; once space is
// back the next put succeeds by itself.
func TestDiskFullSegmentPreparation(t *testing.T) {
	mem := vfs.NewMem()
	rec := &segmentCreations{}
	cfg := testConfig(vfs.NewErrorFS(mem, rec))
	cfg.FlushSync = true
	mem.SetCapacity(32 << 10) // less than a 64 KiB segment
	s := openStore(t, cfg)
	for i := 0; i < 3; i++ {
		res := s.PutMessage(context.Background(), newRecord("T", 0, []byte("x"), nil), PutOptions{})
		if res.Status != CreateMappedFileFailed {
			t.Fatalf("put %d on a full disk: %s", i, res.Status)
		}
	}
	if why := s.RefusalReason(); !strings.Contains(why, "disk full") {
		t.Fatalf("refusal reason %q does not say the disk is full", why)
	}
	if n := rec.total.Load(); n != 0 {
		t.Fatalf("%d segment files started on a full disk", n)
	}
	mem.SetCapacity(0)
	res := put(t, s, newRecord("T", 0, []byte("again"), nil))
	if res.WroteOffset != 0 {
		t.Fatalf("put after space came back at %d", res.WroteOffset)
	}
	if why := s.RefusalReason(); why != "" {
		t.Fatalf("refusal reason %q after success", why)
	}
}

// TestDiskFullNextSegment: the first segment fits but the next does not.
// Puts go on into the first segment (no refusal reason yet); the put that
// needs the next one is refused with "disk full", not stored; once space is
// back puts continue in the next segment.
func TestDiskFullNextSegment(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.FlushSync = true
	d, err := mem.DiskUsage("/")
	if err != nil {
		t.Fatal(err)
	}
	// Room for segment 0 and its margin (72 KiB), not for segment 1 after it.
	mem.SetCapacity(d.Used + 72<<10 + 60<<10)
	s := openStore(t, cfg)
	log := s.log
	body := bodyFor(1, 8<<10)
	put(t, s, newRecord("T", 0, body, nil)) // takes segment 0; segment 1 is asked for
	wait.For(t, 10*time.Second, "failed prefetch of the next segment", func() bool { return log.RollErr() != nil })
	if why := s.RefusalReason(); why != "" {
		t.Fatalf("refusal reason %q while the first segment has room", why)
	}
	var refused PutResult
	for i := 0; i < 20; i++ {
		res := s.PutMessage(context.Background(), newRecord("T", 0, body, nil), PutOptions{})
		if res.Status != PutOK {
			refused = res
			break
		}
	}
	if refused.Status != CreateMappedFileFailed {
		t.Fatalf("put needing the next segment: %s", refused.Status)
	}
	if why := s.RefusalReason(); !strings.Contains(why, "disk full") {
		t.Fatalf("refusal reason %q does not say the disk is full", why)
	}
	mem.SetCapacity(0)
	if res := put(t, s, newRecord("T", 0, body, nil)); res.WroteOffset != cfg.SegmentSize {
		t.Fatalf("put after space came back at %d, want %d", res.WroteOffset, cfg.SegmentSize)
	}
}
