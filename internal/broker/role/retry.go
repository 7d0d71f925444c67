package role

import "time"

// backoff spaces out a repeated action: wait returns min, 2*min, ... up
// to max; due is true at once and then after each such wait; reset starts
// over.
type backoff struct {
	min, max time.Duration
	step     time.Duration // the last wait returned; 0: none yet
	at       time.Time     // when due is true again
}

func (b *backoff) wait() time.Duration {
	if b.step == 0 {
		b.step = b.min
	} else {
		b.step = min(2*b.step, b.max)
	}
	return b.step
}

func (b *backoff) due(now time.Time) bool {
	if now.Before(b.at) {
		return false
	}
	b.at = now.Add(b.wait())
	return true
}

func (b *backoff) reset() { b.step, b.at = 0, time.Time{} }

// failureLogEvery is how often a loop that keeps failing the same way logs
// it again.
const failureLogEvery = 30 * time.Second

// failureLog rate-limits the warning of a loop that fails repeatedly: the
// first failure, a failure with another message, and then one every
// failureLogEvery are logged, with the count since the last log.
type failureLog struct {
	last    string
	at      time.Time
	count   int
	failing bool
}

// failed records a failure; ok says whether to log it now, n how many
// failures that log stands for.
func (f *failureLog) failed(err error, now time.Time) (n int, ok bool) {
	f.count++
	msg := err.Error()
	if f.failing && msg == f.last && now.Sub(f.at) < failureLogEvery {
		return 0, false
	}
	n, f.count = f.count, 0
	f.failing, f.last, f.at = true, msg, now
	return n, true
}

// recovered records a success and reports whether it ends a run of
// failures.
func (f *failureLog) recovered() bool {
	was := f.failing
	*f = failureLog{}
	return was
}
