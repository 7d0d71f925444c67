package pop

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// reviveCounts records what a ReviveObserver is told.
type reviveCounts struct {
	mu  sync.Mutex
	put map[string]int // "group topic CK|ACK status"
	got map[string]int // "group topic queue CK|ACK"
}

func kind(ck bool) string {
	if ck {
		return "CK"
	}
	return "ACK"
}

func (r *reviveCounts) RevivePut(group, topic string, ck bool, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.put[fmt.Sprint(group, " ", topic, " ", kind(ck), " ", status)]++
}

func (r *reviveCounts) ReviveGot(group, topic string, queueID int32, ck bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[fmt.Sprint(group, " ", topic, " ", queueID, " ", kind(ck))]++
}

func (r *reviveCounts) snapshot() (put, got string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.put), fmt.Sprint(r.got)
}

// TestReviveLogObserved: a pop's check point and an ack are counted when
// put into the revive log and when the revive service reads them back
// (from the handle's revive queue); a record written after the last
// round is the queue's revive lag until the next round reads it.
func TestReviveLogObserved(t *testing.T) {
	obs := &reviveCounts{put: map[string]int{}, got: map[string]int{}}
	f := newFixture(t)
	_ = f.svc.Close()
	f.obs = obs
	f.svc = f.newService()

	for _, l := range f.svc.ReviveLags(time.Now()) {
		if l.Messages != 0 || l.LatencyMs != 0 {
			t.Fatalf("before the first round: %+v", l)
		}
	}
	f.put(testTopic, "m0", "m1")
	got, _ := f.pop(Request{InvisibleTime: 10_000})
	if len(got) != 2 {
		t.Fatalf("popped %v", bodies(got))
	}
	f.ack(got[0])
	f.waitRevive()
	q := got[0].handle.ReviveQid
	put, read := obs.snapshot()
	if want := "map[G T ACK PUT_OK:1 G T CK PUT_OK:1]"; put != want {
		t.Fatalf("puts %s, want %s", put, want)
	}
	if read != "map[]" {
		t.Fatalf("read before a round: %s", read)
	}
	f.svc.Revive(f.now.Add(time.Second))
	put, read = obs.snapshot()
	if want := fmt.Sprintf("map[G T %d ACK:1 G T %d CK:1]", q, q); read != want {
		t.Fatalf("read %s, want %s", read, want)
	}
	for _, l := range f.svc.ReviveLags(time.Now()) {
		if l.Messages != 0 || l.LatencyMs != 0 {
			t.Fatalf("after a round: %+v", l)
		}
	}

	// A check point written after the round waits in its revive queue.
	f.put(testTopic, "m2")
	got2, _ := f.pop(Request{InvisibleTime: 10_000})
	if len(got2) != 1 {
		t.Fatalf("popped %v", bodies(got2))
	}
	f.waitRevive()
	q2 := got2[0].handle.ReviveQid
	before := time.Now()
	for _, l := range f.svc.ReviveLags(before.Add(time.Second)) {
		switch {
		case l.QueueID == q2 && (l.Messages != 1 || l.LatencyMs < 1000 || l.LatencyMs > 60_000):
			t.Fatalf("queue %d with an unread check point: %+v", l.QueueID, l)
		case l.QueueID != q2 && l.Messages != 0:
			t.Fatalf("queue %d: %+v", l.QueueID, l)
		}
	}
	f.svc.Revive(f.now.Add(2 * time.Second))
	for _, l := range f.svc.ReviveLags(time.Now()) {
		if l.Messages != 0 || l.LatencyMs != 0 {
			t.Fatalf("after the next round: %+v", l)
		}
	}
}
