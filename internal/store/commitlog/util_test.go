package commitlog

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// logLines collects a logger's text output; safe for concurrent use.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count is the number of lines containing s.
func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logLines) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// manualClock is a clock the test moves (the allocator's retry back-off
// and store timestamps).
type manualClock struct{ ns atomic.Int64 }

func newManualClock() *manualClock {
	c := &manualClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *manualClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *manualClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
