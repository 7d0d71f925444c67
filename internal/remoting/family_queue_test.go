package remoting

import "testing"

// TestFamilyQueueFIFOAndLimit drives the family's queue directly through
// interleaved offers and takes (growth, sliding to the front, draining to
// empty): order is kept, the limit holds, and Queued follows.
func TestFamilyQueueFIFOAndLimit(t *testing.T) {
	f := &Family{limit: 7, workers: 2, wake: make(chan struct{}, 2)}
	next, want := int64(1), int64(1)
	push := func() bool {
		ok := f.offer(task{enqueued: next})
		if ok {
			next++
		}
		return ok
	}
	pop := func() {
		t.Helper()
		tk, ok := f.take()
		if !ok || tk.enqueued != want {
			t.Fatalf("take: got %d %v, want %d", tk.enqueued, ok, want)
		}
		want++
	}
	for round := range 50 {
		for push() {
		}
		if got := f.Queued(); got != 7 {
			t.Fatalf("round %d: queued %d at the limit", round, got)
		}
		for range round%7 + 1 {
			pop()
		}
	}
	for f.Queued() > 0 {
		pop()
	}
	if _, ok := f.take(); ok {
		t.Fatal("take from an empty queue")
	}
	if len(f.wake) != 2 {
		t.Fatalf("wake tokens %d, want one per worker", len(f.wake))
	}
}
