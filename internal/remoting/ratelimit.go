package remoting

import (
	"sync/atomic"
	"time"
)

// warnLimiter lets at most one warning a second through. Bad frames come
// from the network: a misbehaving or hostile peer opening connection after
// connection must not flood the log (nats rateLimitWarn).
type warnLimiter struct {
	last       atomic.Int64 // unix nanos of the last warning let through
	suppressed atomic.Int64 // warnings held back since then
}

// allow reports whether a warning may be logged now, and how many were
// held back before it.
func (w *warnLimiter) allow() (bool, int64) {
	now := time.Now().UnixNano()
	last := w.last.Load()
	if now-last < int64(time.Second) || !w.last.CompareAndSwap(last, now) {
		w.suppressed.Add(1)
		return false, 0
	}
	return true, w.suppressed.Swap(0)
}
