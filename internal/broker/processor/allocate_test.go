package processor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
)

func queues(n int) []protocol.MessageQueue {
	out := make([]protocol.MessageQueue, n)
	for i := range out {
		out[i] = protocol.MessageQueue{Topic: "T", BrokerName: "b", QueueID: int32(i)}
	}
	return out
}

func ids(qs []protocol.MessageQueue) []int32 {
	out := []int32{}
	for _, q := range qs {
		out = append(out, q.QueueID)
	}
	return out
}

// TestAllocateStrategiesJavaCases: the shares Java's
// AllocateMessageQueueAveragely(ByCircle) give for 8 queues and 3 clients,
// and for more clients than queues.
func TestAllocateStrategiesJavaCases(t *testing.T) {
	cids := []string{"c0", "c1", "c2"}
	for _, c := range []struct {
		name string
		f    allocateFunc
		n    int
		want [][]int32
	}{
		{"AVG 8/3", allocateAveragely, 8, [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7}}},
		{"AVG_BY_CIRCLE 8/3", allocateAveragelyByCircle, 8, [][]int32{{0, 3, 6}, {1, 4, 7}, {2, 5}}},
		{"AVG 2/3", allocateAveragely, 2, [][]int32{{0}, {1}, {}}},
		{"AVG_BY_CIRCLE 2/3", allocateAveragelyByCircle, 2, [][]int32{{0}, {1}, {}}},
	} {
		for i, cid := range cids {
			if got := ids(c.f(cid, queues(c.n), cids)); !slices.Equal(got, c.want[i]) {
				t.Errorf("%s %s: %v, want %v", c.name, cid, got, c.want[i])
			}
		}
	}
	if got := allocateAveragely("stranger", queues(4), cids); got == nil || len(got) != 0 {
		t.Errorf("a client not in the list gets %v, want an empty (not nil) share", got)
	}
}

// TestAllocateStrategiesPartition: for every size, the shares are disjoint
// and cover every queue.
func TestAllocateStrategiesPartition(t *testing.T) {
	for name, f := range allocateStrategies {
		for n := 1; n <= 20; n++ {
			for c := 1; c <= 7; c++ {
				var cids []string
				for i := range c {
					cids = append(cids, fmt.Sprintf("c%d", i))
				}
				seen := map[int32]int{}
				for _, cid := range cids {
					for _, q := range f(cid, queues(n), cids) {
						seen[q.QueueID]++
					}
				}
				if len(seen) != n {
					t.Fatalf("%s %d queues %d clients: %d queues assigned", name, n, c, len(seen))
				}
				for q, k := range seen {
					if k != 1 {
						t.Fatalf("%s %d queues %d clients: queue %d assigned %d times", name, n, c, q, k)
					}
				}
			}
		}
	}
}

// TestAllocateForPop: Java's allocate4Pop cases.
func TestAllocateForPop(t *testing.T) {
	cids := []string{"c0", "c1", "c2", "c3"}
	// popShareQueueNum <= 0 or >= clients-1: every queue, queue id -1.
	for _, share := range []int{-1, 0, 3} {
		got := allocateForPop(allocateAveragely, "c1", queues(8), cids, share)
		if len(got) != 8 || got[0].QueueID != -1 {
			t.Fatalf("share %d: %v", share, got)
		}
	}
	// Own share plus the next client's.
	if got := ids(allocateForPop(allocateAveragely, "c3", queues(8), cids, 1)); !slices.Equal(got, []int32{6, 7, 0, 1}) {
		t.Fatalf("share 1: %v", got)
	}
	// More clients than queues: one queue each, in turn.
	if got := ids(allocateForPop(allocateAveragely, "c3", queues(3), cids, 1)); !slices.Equal(got, []int32{0}) {
		t.Fatalf("more clients than queues: %v", got)
	}
}
