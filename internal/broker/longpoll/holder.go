package longpoll

import (
	"container/heap"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
)

// Conn is what the holder needs of the connection a pull came on:
// *remoting.Conn satisfies it. Values must be comparable (pointers).
type Conn interface {
	// Closed is closed once the connection is closed.
	Closed() <-chan struct{}
}

// Request is a pull that found nothing and waits for a message.
type Request struct {
	Topic   string
	QueueID int32
	// Group is the consumer group waiting, for Waiting's count (POLLING_INFO
	// asks it of pops and notifications); pulls may leave it empty.
	Group string
	// Offset is the queue offset the pull asked for: the request wakes
	// once the queue's max offset passes it (maxOffset > Offset).
	Offset int64
	// Timeout is the pull's suspendTimeoutMillis; the hold is capped at
	// Config.MaxSuspend (and is ShortPollingTime in short polling mode).
	Timeout time.Duration
	// Match tells whether a message with this tags code may satisfy the
	// request (its tag filter); nil matches everything. It is called with
	// the holder's lock held: it must be quick and must not call the
	// Holder.
	Match func(tagsCode int64) bool
	// Conn is the pull's connection; DropConn(Conn) forgets the request.
	// Nil means none.
	Conn Conn
	// Wake re-runs the pull with suspension not allowed and without
	// committing the offset again, and writes its response (carrying the
	// original opaque) on the connection. It runs once, on a holder
	// worker, when a matching message arrives or the hold time is over;
	// never if the request is dropped.
	Wake func()
}

// Status is the outcome of Hold.
type Status uint8

const (
	// Held: the request waits; the caller sends nothing now.
	Held Status = iota
	// QueueFull: the queue already has MaxPerQueue requests held.
	QueueFull
	// Full: MaxTotal requests are held.
	Full
	// Stopped: the holder is not running (before Start, after Close).
	Stopped
	// ConnClosed: the request's connection is already closed.
	ConnClosed
)

var statusNames = [...]string{Held: "HELD", QueueFull: "QUEUE_FULL", Full: "FULL", Stopped: "STOPPED", ConnClosed: "CONN_CLOSED"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(?)"
}

// queueKey is Java's "topic@queueId" key without building the string.
type queueKey struct {
	topic   string
	queueID int32
}

// held is one request in the holder's tables.
type held struct {
	Request
	key      queueKey
	deadline time.Duration // since Holder.base
	q        *queueHold
	qidx     int // index in q.reqs; -1 once out of the tables
	hidx     int // index in the deadline heap
}

// queueHold is the requests held on one queue. An emptied one stays in the
// map until the next recheck: the usual consumer holds and wakes one
// request per queue over and over, and should not allocate each time.
type queueHold struct {
	reqs []*held
}

// Stats counts what happened to requests since New.
type Stats struct {
	Held       int64 // accepted by Hold
	Arrived    int64 // woken by a matching arrival (or the MaxOffset check)
	Expired    int64 // woken by their deadline
	Dropped    int64 // forgotten: connection closed, or Close
	Rejected   int64 // refused by Hold (caps, stopped, closed connection)
	WakePanics int64 // Wake calls that panicked (recovered and logged)
}

// Holder is Java's PullRequestHoldService: it holds pull requests that
// found no message and re-runs them when a message arrives for their queue
// or their hold time is over. Safe for concurrent use.
type Holder struct {
	cfg  Config
	log  *slog.Logger
	base time.Time // deadlines are durations since base (monotonic)
	// elapsed returns the time since base; a test may swap in a fake
	// clock before Start.
	elapsed func() time.Duration

	mu struct {
		sync.Mutex
		queues  map[queueKey]*queueHold
		byConn  map[Conn]map[*held]struct{}
		timers  deadlineHeap
		ready   []*held // woken, waiting for a worker: ready[head:]
		head    int
		total   int
		running bool
		closed  bool
	}
	work  sync.Cond // on mu: ready grew, or closed
	total atomic.Int64

	timer   lifecycle.Loop   // deadlines; Kick: the earliest deadline changed
	workers []lifecycle.Loop // set by Start under mu

	nHeld, nArrived, nExpired, nDropped, nRejected, nPanics atomic.Int64
}

// New returns a Holder; Start runs its goroutines.
func New(cfg Config) (*Holder, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Holder{cfg: cfg, log: cfg.Logger, base: time.Now()}
	h.elapsed = func() time.Duration { return time.Since(h.base) }
	h.mu.queues = make(map[queueKey]*queueHold)
	h.mu.byConn = make(map[Conn]map[*held]struct{})
	h.work.L = &h.mu.Mutex
	return h, nil
}

// Start runs the deadline timer and the wake-up workers.
func (h *Holder) Start() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.closed {
		return errors.New("longpoll: holder closed")
	}
	if h.mu.running {
		return errors.New("longpoll: holder already started")
	}
	h.mu.running = true
	h.timer.Start("longpoll-timer", h.timerLoop)
	h.workers = make([]lifecycle.Loop, h.cfg.Workers)
	for i := range h.workers {
		// Workers stop on closed (they wait on the work condition).
		h.workers[i].Start("longpoll-worker", func(context.Context) { h.worker() })
	}
	return nil
}

// Close stops the holder. It wakes nothing: every held request, and every
// woken one no worker has started yet, is dropped without an answer (the
// broker is shutting down and closes the connections; a client whose
// connection stays up times out the pull and retries). Wake calls already
// running are waited for: a Wake blocked writing to a peer that does not
// read ends when the remoting server closes that connection. Idempotent.
func (h *Holder) Close() error {
	h.mu.Lock()
	if h.mu.closed {
		h.mu.Unlock()
		return nil
	}
	h.mu.closed = true
	h.mu.running = false
	workers := h.workers
	dropped := h.mu.total + len(h.mu.ready) - h.mu.head
	for _, x := range h.mu.timers {
		x.qidx, x.q = -1, nil // out of the tables: nobody may unlink it again
	}
	clear(h.mu.queues)
	clear(h.mu.byConn)
	clear(h.mu.timers)
	h.mu.timers = h.mu.timers[:0]
	clear(h.mu.ready)
	h.mu.ready, h.mu.head = h.mu.ready[:0], 0
	h.mu.total = 0
	h.total.Store(0)
	h.work.Broadcast()
	h.mu.Unlock()
	h.nDropped.Add(int64(dropped))
	h.timer.Close()
	for i := range workers {
		workers[i].Close()
	}
	return nil
}

// HoldTime is how long a request asking for timeout is held.
func (h *Holder) HoldTime(timeout time.Duration) time.Duration {
	if h.cfg.ShortPolling {
		return h.cfg.ShortPollingTime
	}
	return max(0, min(timeout, h.cfg.MaxSuspend))
}

// Hold keeps r until a message for its queue beyond r.Offset arrives (and
// r.Match accepts it) or its hold time passes, then runs r.Wake once. On
// any status but Held the request is not kept and the caller answers it
// itself, at once (PULL_NOT_FOUND with the offsets it has).
func (h *Holder) Hold(r Request) Status {
	if r.Conn != nil && isClosed(r.Conn) {
		h.nRejected.Add(1)
		return ConnClosed
	}
	x := &held{Request: r, key: queueKey{r.Topic, r.QueueID}}
	x.deadline = h.elapsed() + h.HoldTime(r.Timeout)

	h.mu.Lock()
	st := h.admitLocked(x.key)
	if st != Held {
		h.mu.Unlock()
		h.nRejected.Add(1)
		return st
	}
	h.linkLocked(x)
	h.nHeld.Add(1)
	earliest := x.hidx == 0
	h.mu.Unlock()
	if earliest {
		h.timer.Kick()
	}

	// The connection may have closed, and DropConn run, between the look
	// above and the link: undo rather than keep a dead request to its
	// deadline.
	if r.Conn != nil && isClosed(r.Conn) {
		h.mu.Lock()
		linked := x.qidx >= 0 // else woken already: the worker skips it
		if linked {
			h.unlinkLocked(x)
			h.nHeld.Add(-1)
			h.nRejected.Add(1)
		}
		h.mu.Unlock()
		if linked {
			return ConnClosed
		}
		return Held
	}

	// An arrival announced after the pull read the queue but before the
	// link above found nothing to wake. The store raises the max offset
	// before it announces, so if that happened it shows here.
	if h.cfg.MaxOffset != nil && !h.cfg.ShortPolling && h.cfg.MaxOffset(r.Topic, r.QueueID) > r.Offset {
		h.mu.Lock()
		linked := x.qidx >= 0 // else an arrival or the deadline took it already
		if linked {
			h.unlinkLocked(x)
			h.readyLocked(x)
			h.nArrived.Add(1)
		}
		h.mu.Unlock()
	}
	return Held
}

// admitLocked checks the caps and the running state. REQUIRES: mu held.
func (h *Holder) admitLocked(key queueKey) Status {
	switch {
	case !h.mu.running:
		return Stopped
	case h.mu.total >= h.cfg.MaxTotal:
		return Full
	}
	if q := h.mu.queues[key]; q != nil && len(q.reqs) >= h.cfg.MaxPerQueue {
		return QueueFull
	}
	return Held
}

// Notify announces that the queue's max offset is now maxOffset and the
// newest message has tagsCode: every request held on the queue with
// Offset < maxOffset whose Match accepts tagsCode is woken. It is meant
// for the store's arrival listener (max offset = queue offset + 1): it
// never blocks on I/O, and Wake runs on a worker, not on the caller's
// goroutine. In short polling mode it does nothing (Java's store does not
// announce arrivals then).
func (h *Holder) Notify(topic string, queueID int32, maxOffset, tagsCode int64) {
	if h.total.Load() == 0 || h.cfg.ShortPolling {
		return
	}
	h.wakeQueue(queueKey{topic, queueID}, maxOffset, tagsCode, true)
}

// wakeQueue wakes the requests of one queue below maxOffset; with useMatch
// only those whose Match accepts tagsCode.
func (h *Holder) wakeQueue(key queueKey, maxOffset, tagsCode int64, useMatch bool) {
	h.mu.Lock()
	q := h.mu.queues[key]
	if q == nil || len(q.reqs) == 0 {
		h.mu.Unlock()
		return
	}
	woken := 0
	// Backwards: unlinking moves the last request into the freed slot,
	// and the last one has been looked at already.
	for i := len(q.reqs) - 1; i >= 0; i-- {
		x := q.reqs[i]
		if maxOffset <= x.Offset || (useMatch && x.Match != nil && !x.Match(tagsCode)) {
			continue
		}
		h.unlinkLocked(x)
		h.readyLocked(x)
		woken++
	}
	// Counted before the unlock: a worker cannot run Wake before the
	// counters say it was woken.
	h.nArrived.Add(int64(woken))
	h.mu.Unlock()
}

// DropConn forgets every request held for c, without waking them: wire it
// to the connection-close callback.
func (h *Holder) DropConn(c Conn) {
	h.mu.Lock()
	set := h.mu.byConn[c]
	n := len(set)
	for x := range set {
		h.unlinkLocked(x) // deletes from set: allowed while ranging
	}
	h.nDropped.Add(int64(n))
	h.mu.Unlock()
}

// Waiting returns how many requests of group are held on queueID of
// topic now (Java's polling map entry topic@group@queueId).
func (h *Holder) Waiting(topic string, queueID int32, group string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.mu.queues[queueKey{topic: topic, queueID: queueID}]
	if q == nil {
		return 0
	}
	n := 0
	for _, x := range q.reqs {
		if x.Group == group {
			n++
		}
	}
	return n
}

// Len returns the number of requests held now.
func (h *Holder) Len() int { return int(h.total.Load()) }

// Stats returns the counters.
func (h *Holder) Stats() Stats {
	return Stats{
		Held: h.nHeld.Load(), Arrived: h.nArrived.Load(), Expired: h.nExpired.Load(),
		Dropped: h.nDropped.Load(), Rejected: h.nRejected.Load(), WakePanics: h.nPanics.Load(),
	}
}

// linkLocked adds x to its queue, the deadline heap and its connection's
// set. REQUIRES: mu held.
func (h *Holder) linkLocked(x *held) {
	q := h.mu.queues[x.key]
	if q == nil {
		q = &queueHold{}
		h.mu.queues[x.key] = q
	}
	x.q, x.qidx = q, len(q.reqs)
	q.reqs = append(q.reqs, x)
	heap.Push(&h.mu.timers, x)
	if x.Conn != nil {
		set := h.mu.byConn[x.Conn]
		if set == nil {
			set = make(map[*held]struct{})
			h.mu.byConn[x.Conn] = set
		}
		set[x] = struct{}{}
	}
	h.mu.total++
	h.total.Add(1)
}

// unlinkLocked removes x from every table. REQUIRES: mu held, x linked.
func (h *Holder) unlinkLocked(x *held) {
	reqs := x.q.reqs
	last := len(reqs) - 1
	reqs[x.qidx] = reqs[last]
	reqs[x.qidx].qidx = x.qidx
	reqs[last] = nil
	x.q.reqs = reqs[:last]
	heap.Remove(&h.mu.timers, x.hidx)
	if x.Conn != nil {
		set := h.mu.byConn[x.Conn]
		delete(set, x)
		if len(set) == 0 {
			delete(h.mu.byConn, x.Conn)
		}
	}
	x.qidx, x.q = -1, nil
	h.mu.total--
	h.total.Add(-1)
}

// readyLocked hands an unlinked request to the workers. REQUIRES: mu held.
func (h *Holder) readyLocked(x *held) {
	h.mu.ready = append(h.mu.ready, x)
	h.work.Signal()
}

// worker runs the Wake of ready requests until Close.
func (h *Holder) worker() {
	for {
		h.mu.Lock()
		for h.mu.head == len(h.mu.ready) && !h.mu.closed {
			h.work.Wait()
		}
		if h.mu.closed {
			h.mu.Unlock()
			return
		}
		x := h.mu.ready[h.mu.head]
		h.mu.ready[h.mu.head] = nil
		h.mu.head++
		if h.mu.head == len(h.mu.ready) {
			// Drained: reuse the array from its start.
			h.mu.ready, h.mu.head = h.mu.ready[:0], 0
		}
		h.mu.Unlock()
		h.run(x)
	}
}

func (h *Holder) run(x *held) {
	if x.Conn != nil && isClosed(x.Conn) {
		h.nDropped.Add(1)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			h.nPanics.Add(1)
			h.log.Error("longpoll: wake panicked", "topic", x.Topic, "queueId", x.QueueID, "panic", p)
		}
	}()
	x.Wake()
}

// timerLoop wakes requests whose hold time is over, sleeping until the
// earliest deadline, and runs the periodic MaxOffset check.
func (h *Holder) timerLoop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var recheck <-chan time.Time
	if h.cfg.MaxOffset != nil {
		t := time.NewTicker(h.cfg.RecheckInterval)
		defer t.Stop()
		recheck = t.C
	}
	for {
		h.mu.Lock()
		next, ok := time.Duration(0), len(h.mu.timers) > 0
		if ok {
			next = h.mu.timers[0].deadline
		}
		h.mu.Unlock()
		if ok {
			timer.Reset(max(0, next-h.elapsed()))
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-h.timer.Kicked():
		case <-timer.C:
			h.expire()
		case <-recheck:
			h.recheck()
		}
	}
}

// expire wakes every request whose deadline has passed; its re-run answers
// with whatever the store says now (PULL_NOT_FOUND usually).
func (h *Holder) expire() {
	now := h.elapsed()
	n := 0
	h.mu.Lock()
	for len(h.mu.timers) > 0 && h.mu.timers[0].deadline <= now {
		x := h.mu.timers[0]
		h.unlinkLocked(x)
		h.readyLocked(x)
		n++
	}
	h.nExpired.Add(int64(n))
	h.mu.Unlock()
}

// recheck compares every queue's held requests with its current max
// offset (Java's 5 s PullRequestHoldService pass, which ignores the tag
// filter: the re-run pull filters). It also forgets empty queue entries.
func (h *Holder) recheck() {
	h.mu.Lock()
	keys := make([]queueKey, 0, len(h.mu.queues))
	for k, q := range h.mu.queues {
		if len(q.reqs) == 0 {
			delete(h.mu.queues, k)
			continue
		}
		keys = append(keys, k)
	}
	h.mu.Unlock()
	if h.cfg.ShortPolling {
		return
	}
	// MaxOffset is called without the lock: it takes the store's.
	for _, k := range keys {
		h.wakeQueue(k, h.cfg.MaxOffset(k.topic, k.queueID), 0, false)
	}
}

// deadlineHeap orders held requests by deadline (container/heap).
type deadlineHeap []*held

func (d deadlineHeap) Len() int           { return len(d) }
func (d deadlineHeap) Less(i, j int) bool { return d[i].deadline < d[j].deadline }
func (d deadlineHeap) Swap(i, j int) {
	d[i], d[j] = d[j], d[i]
	d[i].hidx, d[j].hidx = i, j
}
func (d *deadlineHeap) Push(v any) {
	x := v.(*held)
	x.hidx = len(*d)
	*d = append(*d, x)
}
func (d *deadlineHeap) Pop() any {
	old := *d
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*d = old[:len(old)-1]
	return x
}

func isClosed(c Conn) bool {
	select {
	case <-c.Closed():
		return true
	default:
		return false
	}
}
