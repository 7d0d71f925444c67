package store

import (
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/lograte"
)

// TestFlushErrorLogIsRateLimited: a sticky queue sync failure comes back on
// every flush tick; the flush loop's limiter logs it once per interval and
// counts the rest.
func TestFlushErrorLogIsRateLimited(t *testing.T) {
	var l lograte.Limiter // the flush loop's: the default interval
	now := time.Unix(1000, 0)
	logged, held := 0, int64(0)
	for i := 0; i < 100; i++ { // 100 ticks of 200 ms: 20 s
		if ok, n := l.AllowAt(now); ok {
			logged++
			held += n
		}
		now = now.Add(200 * time.Millisecond)
	}
	if logged != 2 || held != 49 {
		t.Fatalf("logged %d lines reporting %d held back, want 2 and 49", logged, held)
	}
}
