package ha

import (
	"sync"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/store"
)

// waiter is one SYNC_MASTER put waiting for a slave's ack to reach end.
// done is buffered: whoever completes it never blocks.
type waiter struct {
	end  int64
	done chan store.PutStatus
}

// waiterList holds the waiting puts. It is short (at most one entry per
// concurrent producer), so completion scans it.
type waiterList struct {
	mu sync.Mutex
	ws []*waiter
}

// add registers a waiter for end, unless acked already covers it (then it
// returns nil). Checking acked under the lock closes the race with
// complete, which runs after acked moved.
func (l *waiterList) add(end int64, acked *atomic.Int64) *waiter {
	w := &waiter{end: end, done: make(chan store.PutStatus, 1)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if acked.Load() >= end {
		return nil
	}
	l.ws = append(l.ws, w)
	return w
}

// complete finishes every waiter whose end is at or below acked.
func (l *waiterList) complete(acked int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.ws[:0]
	for _, w := range l.ws {
		if w.end <= acked {
			w.done <- store.PutOK
		} else {
			kept = append(kept, w)
		}
	}
	clear(l.ws[len(kept):])
	l.ws = kept
}

// remove takes w out after its wait ended; when complete got to it first it
// returns that status and true.
func (l *waiterList) remove(w *waiter) (store.PutStatus, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, x := range l.ws {
		if x == w {
			n := copy(l.ws[i:], l.ws[i+1:])
			l.ws[i+n] = nil
			l.ws = l.ws[:i+n]
			return 0, false
		}
	}
	select {
	case st := <-w.done:
		return st, true
	default:
		return 0, false
	}
}

// failAll completes every waiter with st (shutdown).
func (l *waiterList) failAll(st store.PutStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.ws {
		w.done <- st
	}
	l.ws = nil
}
