package pace

import (
	"context"
	"time"
)

// coarse is how far ahead of the due time a wait hands over from the
// context-aware timer to the precise one: long waits stay cancellable, and
// the precise timer covers at most this much.
const coarse = 20 * time.Millisecond

// WaitUntil blocks until due or until ctx ends; it reports whether due was
// reached. A due time in the past returns at once.
func (w *Waiter) WaitUntil(ctx context.Context, due time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	if d := time.Until(due) - coarse; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	if d := time.Until(due); d > 0 {
		w.wait(d)
	}
	return ctx.Err() == nil
}
