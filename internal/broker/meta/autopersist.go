package meta

import (
	"context"
	"errors"
	"log/slog"
	"runtime/pprof"
	"sync"
	"time"
)

// autoPersist is the owned goroutine behind StartAutoPersist: it calls
// persist every interval until stop, which waits for it to exit. Start
// after stop does nothing, so a closed table is never written by a
// forgotten ticker.
type autoPersist struct {
	mu      sync.Mutex
	quit    chan struct{}
	done    chan struct{}
	stopped bool
}

// errAutoPersistRunning is returned by start when a loop already runs.
var errAutoPersistRunning = errors.New("meta: auto-persist already running")

// errClosed is returned by start after stop.
var errClosed = errors.New("meta: closed")

func (a *autoPersist) start(name string, interval time.Duration, persist func() error, log *slog.Logger) error {
	if interval <= 0 {
		return errors.New("meta: auto-persist interval must be positive")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return errClosed
	}
	if a.quit != nil {
		return errAutoPersistRunning
	}
	a.quit, a.done = make(chan struct{}), make(chan struct{})
	quit, done := a.quit, a.done
	go pprof.Do(context.Background(), pprof.Labels("rocketd", "meta-persist-"+name), func(context.Context) {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if err := persist(); err != nil {
					log.Error("meta: periodic persist", "file", name, "err", err)
				}
			}
		}
	})
	return nil
}

// stop ends the loop (if any) and waits for it. It reports whether this
// call was the first stop.
func (a *autoPersist) stop() bool {
	a.mu.Lock()
	first := !a.stopped
	a.stopped = true
	quit, done := a.quit, a.done
	a.quit = nil
	a.mu.Unlock()
	if quit != nil {
		close(quit)
		<-done
	}
	return first
}
