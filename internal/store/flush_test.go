package store

import (
	"testing"
	"time"
)

// TestFlushErrorLogIsRateLimited: a sticky queue sync failure comes back on
// every flush tick; it is logged once per flushErrLogEvery.
func TestFlushErrorLogIsRateLimited(t *testing.T) {
	var r rateLimit
	now := time.Unix(1000, 0)
	logged := 0
	for i := 0; i < 100; i++ { // 100 ticks of 200 ms: 20 s
		if r.allow(now) {
			logged++
		}
		now = now.Add(200 * time.Millisecond)
	}
	if logged != 2 || r.failures != 100 {
		t.Fatalf("logged %d of %d failures, want 2", logged, r.failures)
	}
}
