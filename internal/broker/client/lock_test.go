package client

import (
	"slices"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

func mqs(ids ...int32) []protocol.MessageQueue {
	out := make([]protocol.MessageQueue, len(ids))
	for i, id := range ids {
		out[i] = protocol.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: id}
	}
	return out
}

func TestLocks(t *testing.T) {
	clock := newFakeClock()
	l := NewLocks(60*time.Second, clock.Now)

	if got := l.TryLockBatch("cg", "c1", mqs(0, 1)); !slices.Equal(got, mqs(0, 1)) {
		t.Fatalf("c1 lock of free queues = %v", got)
	}
	// c2 gets only the free queue; c1's are live.
	if got := l.TryLockBatch("cg", "c2", mqs(0, 1, 2)); !slices.Equal(got, mqs(2)) {
		t.Fatalf("c2 lock = %v", got)
	}
	// Another group is independent.
	if got := l.TryLockBatch("other", "c2", mqs(0)); !slices.Equal(got, mqs(0)) {
		t.Fatalf("other group = %v", got)
	}
	if owner, ok := l.Owner("cg", mqs(1)[0]); !ok || owner != "c1" {
		t.Fatalf("owner = %q %v", owner, ok)
	}

	// c1 renews queue 0 at 50 s; at 61 s queue 1 has expired, 0 has not.
	clock.Advance(50 * time.Second)
	if got := l.TryLockBatch("cg", "c1", mqs(0)); !slices.Equal(got, mqs(0)) {
		t.Fatalf("renewal = %v", got)
	}
	clock.Advance(11 * time.Second)
	if !l.IsLocked("cg", "c1", mqs(0)[0]) || l.IsLocked("cg", "c1", mqs(1)[0]) {
		t.Fatal("IsLocked disagrees with the renewal times")
	}
	if got := l.TryLockBatch("cg", "c2", mqs(0, 1)); !slices.Equal(got, mqs(1)) {
		t.Fatalf("c2 takeover of the expired queue = %v", got)
	}

	// Only the owner unlocks.
	l.UnlockBatch("cg", "c2", mqs(0))
	if owner, _ := l.Owner("cg", mqs(0)[0]); owner != "c1" {
		t.Fatalf("non-owner unlocked: owner now %q", owner)
	}
	l.UnlockBatch("cg", "c1", mqs(0))
	if _, ok := l.Owner("cg", mqs(0)[0]); ok {
		t.Fatal("owner's unlock did not release")
	}
	if got := l.TryLockBatch("cg", "c2", mqs(0)); !slices.Equal(got, mqs(0)) {
		t.Fatalf("lock after unlock = %v", got)
	}
}

func TestLocksDropExpired(t *testing.T) {
	clock := newFakeClock()
	l := NewLocks(time.Minute, clock.Now)
	l.TryLockBatch("cg", "c1", mqs(0, 1, 2))
	clock.Advance(30 * time.Second)
	l.TryLockBatch("cg", "c1", mqs(2))
	clock.Advance(31 * time.Second)
	l.dropExpired()
	l.mu.Lock()
	n, groups := len(l.groups["cg"]), len(l.groups)
	l.mu.Unlock()
	if n != 1 || groups != 1 {
		t.Fatalf("%d entries, %d groups left; want the renewed one only", n, groups)
	}
	clock.Advance(time.Minute)
	l.dropExpired()
	l.mu.Lock()
	groups = len(l.groups)
	l.mu.Unlock()
	if groups != 0 {
		t.Fatal("an all-expired group is kept")
	}
}
