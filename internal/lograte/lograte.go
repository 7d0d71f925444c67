// Package lograte keeps a loop that fails the same way every round from
// flooding the log: a Limiter lets one line through per interval and counts
// the ones it held back, which the next line reports.
package lograte

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// DefaultEvery is the interval of a zero Limiter.
const DefaultEvery = 10 * time.Second

// Limiter lets at most one log line through per Every. The zero value is
// ready to use (DefaultEvery); it is safe for concurrent use.
type Limiter struct {
	Every time.Duration

	last       atomic.Int64 // unix nanos of the last line let through; 0: none yet
	suppressed atomic.Int64 // lines held back since then
}

// Allow reports whether a line may be logged now and how many were held
// back before it.
func (l *Limiter) Allow() (ok bool, suppressed int64) { return l.AllowAt(time.Now()) }

// AllowAt is Allow at the given time, for loops that drive a clock of
// their own (and tests that drive a fake one).
func (l *Limiter) AllowAt(t time.Time) (ok bool, suppressed int64) {
	every := l.Every
	if every <= 0 {
		every = DefaultEvery
	}
	now := t.UnixNano()
	last := l.last.Load()
	if last != 0 && now-last < int64(every) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return false, 0
	}
	return true, l.suppressed.Swap(0)
}

// Log logs msg at level when Allow lets it through, adding the count of
// held-back lines as "suppressed" when there were some.
func (l *Limiter) Log(log *slog.Logger, level slog.Level, msg string, args ...any) {
	ok, n := l.Allow()
	if !ok {
		return
	}
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	log.Log(context.Background(), level, msg, args...)
}

// Reset lets the next line through at once (the condition it reports has
// ended and a new one begins).
func (l *Limiter) Reset() {
	l.last.Store(0)
	l.suppressed.Store(0)
}
