package consumequeue

import (
	"fmt"
	"testing"

	"github.com/rocketd/rocketd/internal/store/fdcache"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestManyQueuesFewDescriptors: 300 queues of three files each through a
// cache of 8 descriptors. Appends, reads, flushes, a crash image of the
// flushed state and recovery all work, and no more than 8 files are open at
// any time.
func TestManyQueuesFewDescriptors(t *testing.T) {
	const queues, perQueue, capacity = 300, 3*testPerFile - 2, 8
	mem := vfs.NewMem()
	files := fdcache.New(mem, capacity)
	s, err := OpenSet("/store/consumequeue", Options{FS: mem, UnitsPerFile: testPerFile, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	for round := int64(0); round < perQueue; round += 7 {
		for i := 0; i < queues; i++ {
			appendRange(t, s.GetOrCreate(fmt.Sprintf("T%d", i), 0), round, min(round+7, perQueue))
		}
	}
	for i := 0; i < queues; i += 17 {
		if got := readAll(t, s.Get(fmt.Sprintf("T%d", i), 0), 0); len(got) != perQueue || got[perQueue-1] != unitFor(perQueue-1) {
			t.Fatalf("queue %d: %d units", i, len(got))
		}
	}
	if err := s.Flush(0); err != nil {
		t.Fatal(err)
	}
	for _, q := range s.Queues() {
		if q.Dirty() {
			t.Fatalf("%s dirty after a full flush", q.Topic())
		}
	}
	if st := files.Stats(); st.PeakOpen > capacity || st.Evictions == 0 {
		t.Fatalf("stats %+v: want peak <= %d and evictions", st, capacity)
	}
	crashed := mem.CrashClone()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := files.Close(); err != nil {
		t.Fatal(err)
	}

	files2 := fdcache.New(crashed, capacity)
	s2, err := OpenSet("/store/consumequeue", Options{FS: crashed, UnitsPerFile: testPerFile, Files: files2})
	if err != nil {
		t.Fatal(err)
	}
	defer files2.Close()
	defer s2.Close()
	if _, err := s2.Recover(); err != nil {
		t.Fatal(err)
	}
	if n := len(s2.Queues()); n != queues {
		t.Fatalf("%d queues after the crash, want %d", n, queues)
	}
	for _, q := range s2.Queues() {
		if q.MaxOffset() != perQueue {
			t.Fatalf("%s: max %d after the crash, want %d", q.Topic(), q.MaxOffset(), perQueue)
		}
	}
	if got := readAll(t, s2.Get("T123", 0), 0); got[perQueue-1] != unitFor(perQueue-1) {
		t.Fatalf("T123 after the crash: last %+v", got[len(got)-1])
	}
	if st := files2.Stats(); st.PeakOpen > capacity {
		t.Fatalf("recovery opened %d files at once, cap %d", st.PeakOpen, capacity)
	}
}
