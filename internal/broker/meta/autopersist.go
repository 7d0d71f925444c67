package meta

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/lograte"
)

// autoPersist is the owned goroutine behind StartAutoPersist: it calls
// persist every interval until stop, which waits for it to exit. Start
// after stop does nothing, so a closed table is never written by a
// forgotten ticker.
type autoPersist struct {
	mu      sync.Mutex
	stopped bool
	loop    lifecycle.Loop
	errLog  lograte.Limiter // a full disk fails every tick
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
	started := a.loop.Start("meta-persist-"+name, func(ctx context.Context) {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := persist(); err != nil {
					a.errLog.Log(log, slog.LevelError, "meta: periodic persist", "file", name, "err", err)
				} else {
					a.errLog.Reset()
				}
			}
		}
	})
	if !started {
		return errAutoPersistRunning
	}
	return nil
}

// stop ends the loop (if any) and waits for it. It reports whether this
// call was the first stop.
func (a *autoPersist) stop() bool {
	a.mu.Lock()
	first := !a.stopped
	a.stopped = true
	a.mu.Unlock()
	a.loop.Close()
	return first
}

// Periodic calls a persist function every interval on an owned goroutine
// (the loop behind StartAutoPersist, for a file outside the tables: the
// broker's transactionMetrics). Its failures are logged rate-limited.
type Periodic struct {
	auto    autoPersist
	persist func() error
}

// StartPeriodic starts calling persist every interval; name labels the
// goroutine and the log lines.
func StartPeriodic(name string, interval time.Duration, persist func() error, log *slog.Logger) (*Periodic, error) {
	p := &Periodic{persist: persist}
	if err := p.auto.start(name, interval, persist, log); err != nil {
		return nil, err
	}
	return p, nil
}

// Stop ends the goroutine and waits for it (no last call).
func (p *Periodic) Stop() { p.auto.stop() }

// Close stops the goroutine and calls persist a last time (the first
// Close only; later ones return nil).
func (p *Periodic) Close() error {
	if !p.auto.stop() {
		return nil
	}
	return p.persist()
}
