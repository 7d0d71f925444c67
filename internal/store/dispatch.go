package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/consumequeue"
)

// errDispatchFatal marks what stops dispatch for good (and makes the store
// refuse puts until it is reopened): committed CommitLog data that cannot be
// decoded — skipping records silently is worse. Everything else that stops
// dispatch (a ConsumeQueue write or a CommitLog read failing: EMFILE,
// ENOSPC, EIO) blocks it: puts are refused while it retries.
var errDispatchFatal = errors.New("store: dispatch cannot continue")

// errQueueWrite marks a ConsumeQueue write failure (as opposed to a
// CommitLog read failure) in the blocking condition.
var errQueueWrite = errors.New("store: consume queue write error")

// errIndexWrite marks a key index write failure: like Java's
// WRITE_INDEX_FILE_ERROR it refuses puts, here while dispatch retries.
var errIndexWrite = errors.New("store: index write error")

// The blocked dispatcher retries after minDispatchRetry, doubling up to
// maxDispatchRetry; it logs the condition at most every blockedLogEvery.
const (
	minDispatchRetry = 10 * time.Millisecond
	maxDispatchRetry = time.Second
	blockedLogEvery  = 10 * time.Second
	// openGiveUpFailures: Open stops waiting for a dispatcher blocked this
	// many times in a row (about 1.3 s of retries) and fails.
	openGiveUpFailures = 8
)

// dispatchChunk is how much CommitLog the dispatcher reads at a time.
const dispatchChunk = 1 << 20

// ArrivalListener is told about every unit the dispatcher appends, after it
// is visible to readers: the unit's queue offset (the queue's new max offset
// is queueOffset+1), its tags code and the record's store time. It is called
// from the dispatcher goroutine and must not block (long polling hands the
// event over to its own goroutine).
type ArrivalListener func(topic string, queueID int32, queueOffset int64, tagsCode int64, storeTimestamp int64)

// AddArrivalListener registers fn for every later dispatched unit.
func (s *Store) AddArrivalListener(fn ArrivalListener) {
	for {
		old := s.listeners.Load()
		next := append(append([]ArrivalListener(nil), (*old)...), fn)
		if s.listeners.CompareAndSwap(old, &next) {
			return
		}
	}
}

// arrival is one unit to announce once its batch is committed.
type arrival struct {
	q           *consumequeue.Queue
	queueOffset int64
	tagsCode    int64
	storeTime   int64
}

// dispatcher is RocketMQ's ReputMessageService: one goroutine that follows
// the CommitLog's committed end in order and builds the ConsumeQueues.
type dispatcher struct {
	s   *Store
	svc lifecycle.Loop // the dispatch goroutine; Kick wakes it

	next   atomic.Int64 // CommitLog offset up to which everything is dispatched
	lastTs atomic.Int64 // store time of the last dispatched record
	failed atomic.Pointer[error]
	// blocked is the failure dispatch is retrying (nil while it runs):
	// puts are refused while it is set (Store.admit).
	blocked atomic.Pointer[error]
	// blockedFailures counts the consecutive failed attempts.
	blockedFailures atomic.Int64

	// runMu is held by the goroutine while it dispatches (catchUp):
	// Store.TruncateTo takes it to hold dispatch between two rounds.
	runMu sync.Mutex

	progressMu sync.Mutex
	progress   chan struct{} // closed and replaced whenever next advances
	// samples remembers (end offset, store time) of recent advances, so the
	// checkpoint can name the store time of the CommitLog's flushed end.
	samples  [1024]positionSample
	nSamples int

	// owned by the goroutine
	touched    []*consumequeue.Queue // queues with units staged in this chunk
	touchedSet map[*consumequeue.Queue]bool
	committed  int // touched[:committed] are written
	arrivals   []arrival
	// staged: a chunk is parsed and its units staged, but not all of its
	// queues are written yet; stagedNext/stagedTs are where it ends.
	staged     bool
	stagedNext int64
	stagedTs   int64
	// lastRecord is the offset of the last record dispatched (-1: none
	// known); stagedLast that of the staged chunk. A checkpoint resume
	// point must be a record start, which the end offsets are not always
	// (a BLANK filler ends a segment).
	lastRecord int64
	stagedLast int64
	retry      time.Duration // next retry delay while blocked
	blockedAt  time.Time     // first failure of the current block
	loggedAt   time.Time     // last log of the current block
}

func newDispatcher(s *Store) *dispatcher {
	return &dispatcher{s: s, progress: make(chan struct{}),
		touchedSet: map[*consumequeue.Queue]bool{}}
}

// kickFn is the CommitLog's OnCommit hook: a coalescing, non-blocking wake-up.
func (d *dispatcher) kickFn(int64) { d.svc.Kick() }

func (d *dispatcher) start(from int64) {
	d.next.Store(from)
	d.lastRecord, d.stagedLast = -1, -1
	d.svc.Start("store-dispatch", func(ctx context.Context) { d.loop(ctx.Done()) })
	d.svc.Kick()
}

func (d *dispatcher) stop() {
	d.svc.Close()
}

// position returns the dispatched offset and the store time of the record
// just before it, as a consistent pair.
func (d *dispatcher) position() (offset, storeTimestamp int64) {
	d.progressMu.Lock()
	defer d.progressMu.Unlock()
	return d.next.Load(), d.lastTs.Load()
}

func (d *dispatcher) dispatched() int64         { return d.next.Load() }
func (d *dispatcher) lastStoreTimestamp() int64 { return d.lastTs.Load() }

func (d *dispatcher) err() error {
	if p := d.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// blockedErr is the failure dispatch is retrying, or nil.
func (d *dispatcher) blockedErr() error {
	if p := d.blocked.Load(); p != nil {
		return *p
	}
	return nil
}

// waitFor blocks until everything below end is dispatched, ctx ends, or the
// dispatcher stops on an error or stays blocked openGiveUpFailures times.
func (d *dispatcher) waitFor(ctx context.Context, end int64) error {
	for {
		d.progressMu.Lock()
		ch := d.progress
		d.progressMu.Unlock()
		if d.next.Load() >= end {
			return nil
		}
		if err := d.err(); err != nil {
			return err
		}
		if err := d.blockedErr(); err != nil && d.blockedFailures.Load() >= openGiveUpFailures {
			return fmt.Errorf("store: dispatch failed %d times: %w", d.blockedFailures.Load(), err)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("store: dispatched %d of %d: %w", d.next.Load(), end, ctx.Err())
		}
	}
}

// drain waits until everything the log accepted is dispatched. It gives up
// (false) at the timeout, or as soon as the log or the dispatcher has failed:
// data the log will never commit cannot be dispatched.
func (d *dispatcher) drain(l interface {
	MaxOffset() int64
	Err() error
}, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for {
		d.progressMu.Lock()
		ch := d.progress
		d.progressMu.Unlock()
		if d.next.Load() >= l.MaxOffset() {
			return true
		}
		if l.Err() != nil || d.err() != nil || d.blocked.Load() != nil {
			return false // shutting down: no time for retries
		}
		select {
		case <-ch:
		case <-poll.C: // the log's error does not signal progress
		case <-deadline.C:
			return false
		}
	}
}

// positionSample is one dispatched position: everything below offset is
// dispatched, and the record ending there was stored at storeTimestamp.
type positionSample struct{ offset, storeTimestamp, lastRecord int64 }

// timestampAt returns the store time of the newest remembered position at
// or below offset (false if none is remembered).
func (d *dispatcher) timestampAt(offset int64) (int64, bool) {
	d.progressMu.Lock()
	defer d.progressMu.Unlock()
	for i := 0; i < min(d.nSamples, len(d.samples)); i++ {
		smp := d.samples[(d.nSamples-1-i)%len(d.samples)]
		if smp.offset <= offset {
			return smp.storeTimestamp, smp.storeTimestamp != 0
		}
	}
	return 0, false
}

// resumeRecordAt returns the last record start of the newest remembered
// position at or below offset (false if none is remembered or it has no
// record): every record up to and including it ends at or below offset.
func (d *dispatcher) resumeRecordAt(offset int64) (int64, bool) {
	d.progressMu.Lock()
	defer d.progressMu.Unlock()
	for i := 0; i < min(d.nSamples, len(d.samples)); i++ {
		smp := d.samples[(d.nSamples-1-i)%len(d.samples)]
		if smp.offset <= offset {
			return smp.lastRecord, smp.lastRecord >= 0
		}
	}
	return 0, false
}

func (d *dispatcher) advance(to, ts, lastRecord int64) {
	d.lastRecord = lastRecord
	d.progressMu.Lock()
	d.samples[d.nSamples%len(d.samples)] = positionSample{to, ts, lastRecord}
	d.nSamples++
	d.lastTs.Store(ts)
	d.next.Store(to)
	close(d.progress)
	d.progress = make(chan struct{})
	d.progressMu.Unlock()
}

func (d *dispatcher) setErr(err error) {
	d.failed.CompareAndSwap(nil, &err)
	d.wakeWaiters()
}

// wakeWaiters wakes waitFor and drain to look at the state again.
func (d *dispatcher) wakeWaiters() {
	d.progressMu.Lock()
	close(d.progress)
	d.progress = make(chan struct{})
	d.progressMu.Unlock()
}

// block records a failed attempt: puts are refused from the first one on
// (nothing a put stores could become visible), the condition is logged
// (at most every blockedLogEvery), and it returns the delay before the
// next attempt.
func (d *dispatcher) block(err error, offset int64) time.Duration {
	now := time.Now()
	n := d.blockedFailures.Add(1)
	if d.blocked.Swap(&err) == nil {
		d.blockedAt, d.loggedAt = now, now
		d.retry = minDispatchRetry
		d.s.cfg.Logger.Error("store: dispatch blocked; refusing puts while retrying", "offset", offset, "err", err)
	} else if now.Sub(d.loggedAt) >= blockedLogEvery {
		d.loggedAt = now
		d.s.cfg.Logger.Error("store: dispatch still blocked; refusing puts", "offset", offset, "failures", n,
			"since", d.blockedAt, "err", err)
	}
	d.wakeWaiters()
	delay := d.retry
	d.retry = min(2*d.retry, maxDispatchRetry)
	return delay
}

// unblock ends a block after a successful attempt: puts are accepted again.
func (d *dispatcher) unblock() {
	if d.blocked.Load() == nil {
		return
	}
	d.s.cfg.Logger.Warn("store: dispatch resumed; accepting puts", "offset", d.next.Load(),
		"failures", d.blockedFailures.Load(), "blockedFor", time.Since(d.blockedAt))
	d.blocked.Store(nil)
	d.blockedFailures.Store(0)
}

func (d *dispatcher) loop(quit <-chan struct{}) {
	// A slow tick as a safety net: a missed kick costs at most this delay.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	for {
		d.runMu.Lock()
		delay, stop := d.catchUp(quit)
		d.runMu.Unlock()
		switch {
		case stop:
			<-quit
			return
		case delay > 0:
			// Blocked: kicks (puts are refused anyway) do not shorten
			// the backoff.
			retry.Reset(delay)
			select {
			case <-quit:
				return
			case <-retry.C:
			}
			continue
		}
		select {
		case <-quit:
			return
		case <-d.svc.Kicked():
		case <-tick.C:
		}
	}
}

// catchUp dispatches up to the committed end, chunk by chunk. It returns
// the delay before a retry when dispatch is blocked, and stop when it
// cannot ever continue.
func (d *dispatcher) catchUp(quit <-chan struct{}) (retry time.Duration, stop bool) {
	for {
		select {
		case <-quit:
			return 0, false
		default:
		}
		from := d.next.Load()
		var progressed bool
		var err error
		if d.staged {
			// A chunk whose queue writes failed: write the rest.
			err = d.commitStaged()
			progressed = err == nil
		} else {
			end := d.s.log.Committed()
			if from >= end {
				// Nothing left that could fail (retention may have
				// removed what a failing read was retrying).
				d.unblock()
				return 0, false
			}
			if minOff := d.s.log.MinOffset(); from < minOff {
				// Retention removed what was never dispatched (a slave far
				// behind): those records are gone; continue at what exists.
				d.s.cfg.Logger.Warn("store: dispatch skipped deleted commitlog data", "from", from, "to", minOff)
				d.advance(minOff, d.lastTs.Load(), -1)
				continue
			}
			progressed, err = d.dispatchChunk(from, end)
		}
		if errors.Is(err, errDispatchFatal) {
			d.s.cfg.Logger.Error("store: dispatch stopped", "offset", from, "err", err)
			d.setErr(err)
			// Messages stored from now on would never reach their queues:
			// refuse puts rather than accept messages nobody can consume.
			d.s.setLogicsErr(err)
			return 0, true
		}
		if err != nil {
			// A queue write (EMFILE, ENOSPC, EIO) or a CommitLog read
			// failed: nothing is lost (the records stay in the CommitLog,
			// staged units stay staged); retry after a backoff, refusing
			// puts meanwhile.
			return d.block(err, from), false
		}
		d.unblock()
		if !progressed {
			return 0, false // a partly committed record: wait for the rest
		}
	}
}

// dispatchChunk dispatches the whole records found in [from, end) within
// one segment and reports whether it advanced.
func (d *dispatcher) dispatchChunk(from, end int64) (bool, error) {
	segSize := d.s.log.SegmentSize()
	segEnd := (from/segSize + 1) * segSize
	n := min(end, segEnd) - from
	n = min(n, dispatchChunk)
	data, release, err := d.s.readLog(from, int32(n))
	if err != nil {
		return false, err
	}
	if len(data) >= 4 {
		// A record larger than the chunk: read it whole when committed.
		if total := int64(message.RecordTotalSize(data)); total > n && total > 0 && from+total <= min(end, segEnd) {
			release()
			data, release, err = d.s.readLog(from, int32(total))
			if err != nil {
				return false, err
			}
		}
	}
	defer release()

	pos, next, ts, last := 0, from, d.lastTs.Load(), d.lastRecord
	for pos < len(data) {
		rec, size, err := message.DecodeRecordNoCopy(data[pos:], false)
		switch {
		case errors.Is(err, message.ErrBlank):
			next = segEnd
			pos = len(data)
			continue
		case errors.Is(err, message.ErrTruncated):
			if pos == 0 && len(data) >= 4 && int64(message.RecordTotalSize(data)) > segEnd-from {
				return false, fmt.Errorf("%w: record at %d: size %d does not fit its segment", errDispatchFatal, from, message.RecordTotalSize(data))
			}
			pos = len(data) // the rest is not committed yet
			continue
		case err != nil:
			return false, fmt.Errorf("%w: record at %d: %w", errDispatchFatal, from+int64(pos), err)
		}
		offset := from + int64(pos)
		if message.Dispatched(rec.SysFlag) {
			d.appendUnit(&rec, offset, int32(size))
		}
		if !d.s.cfg.MessageIndexDisabled {
			d.s.idx.Stage(rec.Topic, rec.Properties, rec.SysFlag, offset, rec.StoreTimestamp)
		}
		pos += size
		next = offset + int64(size)
		ts = rec.StoreTimestamp
		last = offset
	}
	if next == from {
		return false, nil
	}
	d.staged, d.stagedNext, d.stagedTs, d.stagedLast = true, next, ts, last
	return true, d.commitStaged()
}

// commitStaged writes the staged chunk's index keys and its units queue by
// queue, then advances the dispatched offset and tells the listeners. When a queue
// write fails, the queues written so far stay written (their units are
// readable), the others keep their units staged, and the next call
// resumes with the failed queue.
func (d *dispatcher) commitStaged() error {
	// The index first: a reader that sees a unit (a consumer, or a test
	// waiting on the max offset) also finds the record by key.
	if err := d.s.idx.Commit(); err != nil {
		return fmt.Errorf("%w: %w", errIndexWrite, err)
	}
	for ; d.committed < len(d.touched); d.committed++ {
		q := d.touched[d.committed]
		if err := q.Commit(); err != nil {
			return fmt.Errorf("%w: %s/%d: %w", errQueueWrite, q.Topic(), q.QueueID(), err)
		}
	}
	clear(d.touched)
	d.touched = d.touched[:0]
	d.committed = 0
	clear(d.touchedSet)
	d.staged = false
	d.advance(d.stagedNext, d.stagedTs, d.stagedLast)
	if len(d.arrivals) > 0 {
		listeners := *d.s.listeners.Load()
		for _, a := range d.arrivals {
			for _, fn := range listeners {
				fn(a.q.Topic(), a.q.QueueID(), a.queueOffset, a.tagsCode, a.storeTime)
			}
		}
		clear(d.arrivals)
		d.arrivals = d.arrivals[:0]
	}
	return nil
}

// appendUnit stages the record's ConsumeQueue unit.
func (d *dispatcher) appendUnit(rec *message.Record, offset int64, size int32) {
	q := d.s.cqs.GetOrCreate(rec.Topic, rec.QueueID)
	tags := d.s.tagsCode(rec)
	if !q.Append(rec.QueueOffset, consumequeue.Unit{Offset: offset, Size: size, TagsCode: tags}) {
		return // already there (re-dispatch after recovery)
	}
	if len(d.touched) == 0 || d.touched[len(d.touched)-1] != q {
		if !d.touchedSet[q] {
			d.touchedSet[q] = true
			d.touched = append(d.touched, q)
		}
	}
	d.arrivals = append(d.arrivals, arrival{q: q, queueOffset: rec.QueueOffset, tagsCode: tags, storeTime: rec.StoreTimestamp})
}

// tagsCode is the unit's tags code: the TAGS hash, or for a delay-level
// message parked in SCHEDULE_TOPIC_XXXX its delivery time (store time +
// the level's delay, the level capped at the highest).
func (s *Store) tagsCode(rec *message.Record) int64 {
	if rec.Topic == message.ScheduleTopic {
		if v, ok := message.Property(rec.Properties, message.PropertyDelayTimeLevel); ok {
			if level, err := strconv.Atoi(v); err == nil && level > 0 {
				levels := s.delayLevels()
				level = min(level, len(levels))
				return rec.StoreTimestamp + levels[level-1].Milliseconds()
			}
		}
	}
	if tag, ok := message.Property(rec.Properties, message.PropertyTags); ok {
		return message.TagsCode(tag)
	}
	return 0
}

func (s *Store) setLogicsErr(err error) {
	if s.logicsErr.CompareAndSwap(nil, &err) {
		s.cfg.Logger.Error("store: dispatch stopped for good; refusing puts until the store is reopened", "err", err)
	}
}
