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
//
// The queue grows on demand up to its limit, like Java's
// LinkedBlockingQueue: Java's default limits (1,000,000 for consumer
// management, 100,000 for pulls, ...) preallocated as a channel buffer took
// 66 MB of pointer-holding memory that every GC cycle scanned.
type Family struct {
	name         string
	workers      int
	limit        int // most requests waiting
	s            *Server
	once         sync.Once
	maxQueueWait atomic.Int64 // nanoseconds; 0 = no limit
	busy         atomic.Int32 // workers running a handler
	queued       atomic.Int32 // len(mu.q), readable without the lock

	mu struct {
		sync.Mutex
		q    []task // FIFO: q[head:] waits
		head int
	}
	// wake holds a token per push, up to one per worker: a worker sleeps
	// on it only after finding the queue empty, and every push after that
	// finding leaves a token (or finds tokens already pending, each of
	// which sends a worker back to drain the queue).
	wake chan struct{}
}

// task is one request on its way to a handler.
type task struct {
	conn     *Conn
	req      *Command
	h        HandlerFunc
	enqueued int64 // unix nanos; set only when maxQueueWait is
	received int64 // unix nanos; set only with a RequestObserver
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
	f := &Family{name: name, workers: max(workers, 1), limit: max(queueLen, 1), s: s}
	f.wake = make(chan struct{}, f.workers)
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
func (f *Family) Queued() int { return int(f.queued.Load()) }

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
		t, ok := f.take()
		if !ok {
			select {
			case <-f.wake:
				continue
			case <-f.s.quit:
				return
			}
		}
		if t.enqueued != 0 {
			if waited := time.Now().UnixNano() - t.enqueued; waited > f.maxQueueWait.Load() {
				f.s.inflight.Add(-1)
				t.conn.handling.Add(-1)
				f.s.observe(t.req, protocol.SystemBusy, t.received)
				f.s.reply(t.conn, t.req, protocol.SystemBusy, fmt.Sprintf(
					"[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: %dms, size of queue: %d",
					waited/int64(time.Millisecond), f.Queued()))
				t.req.ReleaseBody()
				continue
			}
		}
		f.busy.Add(1)
		f.s.run(t.conn, t.req, t.h, f, t.received)
		f.busy.Add(-1)
	}
}

// take removes the oldest queued task.
func (f *Family) take() (task, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.head == len(f.mu.q) {
		return task{}, false
	}
	t := f.mu.q[f.mu.head]
	f.mu.q[f.mu.head] = task{} // let the request be collected
	f.mu.head++
	if f.mu.head == len(f.mu.q) {
		// Empty: reuse the array from its start. A queue that grew large
		// in a burst shrinks back once drained.
		f.mu.q, f.mu.head = f.mu.q[:0], 0
		if cap(f.mu.q) > keptQueueCap {
			f.mu.q = nil
		}
	}
	f.queued.Add(-1)
	return t, true
}

// keptQueueCap is the largest queue array kept once it drains.
const keptQueueCap = 4096

// writeNowOK reports whether a worker of f (nil: the reader, inline) may
// write its response itself; alone says no other request of the
// connection is being handled. See Server.run.
func (f *Family) writeNowOK(alone bool) bool {
	if f == nil {
		return alone
	}
	return f.queued.Load() == 0 && (alone || f.busy.Load() == 1)
}

// offerAll queues as many of ts as the queue has room for, in order,
// without blocking, under one lock, and wakes a worker per task queued (as
// many as are asleep). It returns how many it queued: the rest found the
// queue full.
func (f *Family) offerAll(ts []task) int {
	if f.maxQueueWait.Load() > 0 {
		now := time.Now().UnixNano()
		for i := range ts {
			ts[i].enqueued = now
		}
	}
	f.mu.Lock()
	n := min(len(ts), max(f.limit-(len(f.mu.q)-f.mu.head), 0))
	if n == 0 {
		f.mu.Unlock()
		return 0
	}
	if f.mu.head > 0 && len(f.mu.q)+n > cap(f.mu.q) {
		// Slide the waiting part to the front before append grows it.
		k := copy(f.mu.q, f.mu.q[f.mu.head:])
		clear(f.mu.q[k:])
		f.mu.q, f.mu.head = f.mu.q[:k], 0
	}
	f.mu.q = append(f.mu.q, ts[:n]...)
	f.queued.Add(int32(n))
	f.mu.Unlock()
	for range min(n, f.workers) {
		select {
		case f.wake <- struct{}{}:
		default: // every worker already has a wake-up pending
			return n
		}
	}
	return n
}

// offer queues t without blocking; false means the queue is full.
func (f *Family) offer(t task) bool { return f.offerAll([]task{t}) == 1 }
