package lifecycle

import (
	"context"
	"runtime/pprof"
	"sync"
)

type state uint8

const (
	idle state = iota
	running
	closed
)

// Loop is one owned background goroutine with its stop handshake; see the
// package documentation. The zero value is ready to use.
type Loop struct {
	mu     sync.Mutex
	state  state
	cancel context.CancelFunc
	done   chan struct{} // closed when run has returned (or Close came first)

	kickOnce sync.Once
	kick     chan struct{}
}

// Start runs run on a new goroutine labelled rocketd=name. The context passed
// to run is cancelled by Close. Start reports false, and runs nothing, when
// the Loop was already started or closed.
func (l *Loop) Start(name string, run func(ctx context.Context)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != idle {
		return false
	}
	l.state = running
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	done := l.doneLocked()
	go pprof.Do(ctx, pprof.Labels("rocketd", name), func(ctx context.Context) {
		defer close(done)
		run(ctx)
	})
	return true
}

// Kick wakes the loop if it is waiting on Kicked; kicks that arrive while
// one is pending coalesce. It never blocks.
func (l *Loop) Kick() {
	select {
	case l.kickChan() <- struct{}{}:
	default:
	}
}

// Kicked is the channel the loop selects on to be woken by Kick.
func (l *Loop) Kicked() <-chan struct{} { return l.kickChan() }

func (l *Loop) kickChan() chan struct{} {
	l.kickOnce.Do(func() { l.kick = make(chan struct{}, 1) })
	return l.kick
}

// Cancel asks the loop to stop and returns at once, for an owner that
// gives a group of loops one grace period before it acts (closing the
// connection one is stuck on) and then Closes them. Like Close, it keeps a
// Loop that never started from starting.
func (l *Loop) Cancel() {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.state {
	case idle:
		close(l.doneLocked())
	case running:
		l.cancel()
	}
	l.state = closed
}

// Close stops the loop and waits until its goroutine has returned. Every
// call, concurrent or later, waits the same way; a Loop never started is
// closed at once and will not start.
func (l *Loop) Close() {
	l.Cancel()
	<-l.Done()
}

// Done is closed once the loop's goroutine has returned, or at Close when
// it never started.
func (l *Loop) Done() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.doneLocked()
}

// Started reports whether Start has run the loop (it may have ended since).
func (l *Loop) Started() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cancel != nil
}

func (l *Loop) doneLocked() chan struct{} {
	if l.done == nil {
		l.done = make(chan struct{})
	}
	return l.done
}
