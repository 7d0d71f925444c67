package store

import (
	"slices"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// openExpiredStore opens a store where topic Old's only messages lie in
// segments the retention already deleted, while T's queues reach past the
// CommitLog's min offset; rmq_sys_Old is as expired as Old.
func openExpiredStore(t *testing.T) (*Store, vfs.FS) {
	t.Helper()
	mem := vfs.NewMem()
	clock := newSteppedClock()
	cfg := testConfig(mem)
	cfg.Clock = clock.Now
	cfg.DeleteWhen = otherHour(clock.Now())
	s := openStore(t, cfg)
	put(t, s, newRecord("Old", 0, []byte("old"), nil))
	put(t, s, newRecord("rmq_sys_Old", 0, []byte("old"), nil))
	fillSegments(t, s, 200)
	clock.Advance(DefaultFileReservedTime + time.Hour)
	fillSegments(t, s, 200) // young segments
	s.DeleteExpiredManually()
	var lastMin int64 = -1
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() == 0 {
		t.Fatal("no segment expired")
	}
	return s, mem
}

func TestCleanExpiredConsumeQueues(t *testing.T) {
	s, mem := openExpiredStore(t)
	if s.MaxOffset("Old", 0) != 1 {
		t.Fatalf("Old max offset %d, want 1", s.MaxOffset("Old", 0))
	}
	keepSys := func(topic string) bool { return topic == "rmq_sys_Old" }
	n, err := s.CleanExpiredConsumeQueues(keepSys)
	if err != nil || n != 1 {
		t.Fatalf("cleaned %d queues (%v), want 1", n, err)
	}
	if _, found := s.Queues()["Old"]; found {
		t.Error("Old's queue still listed")
	}
	if names, _ := mem.List(testDir + "/consumequeue"); slices.Contains(names, "Old") {
		t.Errorf("Old's directory left: %v", names)
	}
	if _, found := s.Queues()["rmq_sys_Old"]; !found {
		t.Error("a kept topic's queue was destroyed")
	}
	for q := int32(0); q < 2; q++ {
		if s.MaxOffset("T", q) == 0 {
			t.Errorf("T queue %d destroyed", q)
		}
	}
	// As in Java, the queue starts again at 0.
	if res := put(t, s, newRecord("Old", 0, []byte("new"), nil)); res.QueueOffset != 0 {
		t.Errorf("next message of the cleaned queue at queue offset %d, want 0", res.QueueOffset)
	}
	wait.For(t, 10*time.Second, "Old's new message dispatched", func() bool { return s.MaxOffset("Old", 0) == 1 })
	// A second call finds nothing more.
	if n, err := s.CleanExpiredConsumeQueues(keepSys); err != nil || n != 0 {
		t.Errorf("second clean: %d %v", n, err)
	}
}

func TestCleanUnusedTopics(t *testing.T) {
	s, _ := openExpiredStore(t)
	keep := func(topic string) bool { return topic == "T" || topic == "rmq_sys_Old" }
	n, err := s.CleanUnusedTopics(keep)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d topics (%v), want 1", n, err)
	}
	qs := s.Queues()
	if _, found := qs["Old"]; found {
		t.Error("Old kept")
	}
	if _, found := qs["T"]; !found {
		t.Error("T deleted")
	}
	if _, found := qs["rmq_sys_Old"]; !found {
		t.Error("rmq_sys_Old deleted")
	}
}
