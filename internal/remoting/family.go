package remoting

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// Family is a processor family: a bounded queue feeding a fixed number of
// worker goroutines (Java's per-processor executor with a bounded
// BlockingQueue). When the queue is full the request is answered with
// SYSTEM_BUSY at once instead of waiting, so a slow family pushes back on
// its clients without holding up the connection's reader.
type Family struct {
	name         string
	workers      int
	tasks        chan task
	s            *Server
	once         sync.Once
	maxQueueWait atomic.Int64 // nanoseconds; 0 = no limit
	busy         atomic.Int32 // workers running a handler
}

// task is one request on its way to a handler.
type task struct {
	conn     *Conn
	req      *Command
	h        HandlerFunc
	enqueued int64 // unix nanos; set only when maxQueueWait is
}

// SetMaxQueueWait makes the family answer SYSTEM_BUSY
// ("[TIMEOUT_CLEAN_QUEUE]...") instead of running a request that waited
// longer than d in its queue: the caller has probably given up, and the
// broker is overloaded (Java's BrokerFastFailure, waitTimeMillsInSendQueue
// = 200 ms for sends). 0 disables the check.
func (f *Family) SetMaxQueueWait(d time.Duration) { f.maxQueueWait.Store(int64(d)) }

// NewFamily creates a family with workers goroutines and room for queueLen
// waiting requests (values below 1 become 1). Its workers run from Start
// until Shutdown.
func (s *Server) NewFamily(name string, workers, queueLen int) *Family {
	f := &Family{name: name, workers: max(workers, 1), tasks: make(chan task, max(queueLen, 1)), s: s}
	s.mu.Lock()
	s.mu.families = append(s.mu.families, f)
	started := s.mu.started
	s.mu.Unlock()
	if started {
		f.start()
	}
	return f
}

// Name returns the family's name.
func (f *Family) Name() string { return f.name }

// Queued returns the number of requests waiting for a worker.
func (f *Family) Queued() int { return len(f.tasks) }

// start launches the workers once; the server's WaitGroup owns them.
func (f *Family) start() {
	f.once.Do(func() {
		f.s.workers.Add(f.workers)
		for range f.workers {
			go pprof.Do(context.Background(), pprof.Labels("remoting_family", f.name), func(context.Context) {
				defer f.s.workers.Done()
				f.work()
			})
		}
	})
}

func (f *Family) work() {
	for {
		select {
		case t := <-f.tasks:
			if t.enqueued != 0 {
				if waited := time.Now().UnixNano() - t.enqueued; waited > f.maxQueueWait.Load() {
					f.s.inflight.Add(-1)
					f.s.reply(t.conn, t.req, protocol.SystemBusy, fmt.Sprintf(
						"[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: %dms, size of queue: %d",
						waited/int64(time.Millisecond), len(f.tasks)))
					continue
				}
			}
			f.busy.Add(1)
			f.s.run(t.conn, t.req, t.h, f)
			f.busy.Add(-1)
		case <-f.s.quit:
			return
		}
	}
}

// idleAfterThis reports whether the calling worker's response is the last
// the family will produce for now: no other worker is running a handler and
// none is queued. Such a response may be written on the worker's goroutine
// when the writer is idle: nothing is about to join it, so waking the
// writer to gather more would only add latency and CPU.
func (f *Family) idleAfterThis() bool {
	return f.busy.Load() == 1 && len(f.tasks) == 0
}

// offer queues t without blocking; false means the queue is full.
func (f *Family) offer(t task) bool {
	if f.maxQueueWait.Load() > 0 {
		t.enqueued = time.Now().UnixNano()
	}
	select {
	case f.tasks <- t:
		return true
	default:
		return false
	}
}
