package commitlog

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/store/segment"
)

// Sentinel errors (checked with errors.Is).
var (
	// ErrClosed: the log is closed.
	ErrClosed = errors.New("commitlog: closed")
	// ErrNotRecovered: Start or a write before Recover.
	ErrNotRecovered = errors.New("commitlog: not recovered")
	// ErrOffsetNotAvailable: a read outside [MinOffset, Committed).
	ErrOffsetNotAvailable = errors.New("commitlog: offset not available")
	// ErrOffsetMismatch: AppendRaw not at the end of the log.
	ErrOffsetMismatch = errors.New("commitlog: append offset is not the end of the log")
)

// Log is the CommitLog: every message of every topic, appended to one
// sequence of segment files.
//
// Write path (architecture.md "Writing, flushing, reading"): a put encodes
// what it can outside the lock (body CRC, header, topic part), then under
// the put lock (mu) assigns the queue offset, patches the header and copies
// the record's parts into an in-memory ring; the committer (async) or the
// flusher (sync) writes the ring to the current segment with WriteAt and advances the
// committed position; readers see data up to Committed only. The ring never
// spans two segments: a roll commits the ring before switching segments.
//
// Lock order: mu -> commitMu -> waiters.mu; segment.Queue's lock is a leaf.
// No lock is held across Sync.
type Log struct {
	cfg  Config
	segs *segment.Queue
	ring []byte
	// msgIDs formats the offset msgIds of PutResult.
	msgIDs msgIDFormatter

	// mu is the put lock.
	mu struct {
		sync.Mutex
		scratch     []byte // BLANK encoding
		lastPutTime int64  // the latest put's store timestamp (ms)
	}
	// queues holds the next offset of each topic queue (cells guarded by mu).
	queues queueTable
	// clock is read once per put.
	clock *putClock
	// lockedSince is the clock's mono time the put lock was last taken
	// (kept after unlock; 0 before the first lock): OS_PAGECACHE_BUSY
	// detection without touching the lock on the fast path.
	lockedSince atomic.Int64

	// cur is the segment being written. Stored with mu and commitMu held, so
	// holders of either see a stable value.
	cur atomic.Pointer[segment.File]
	// head is the global write position (MaxOffset). Stored with mu held.
	head atomic.Int64
	// commitMu serializes writing the ring to the file.
	commitMu sync.Mutex
	// committed is the global end of data written to the file. Stored with
	// commitMu held.
	committed atomic.Int64
	// flushed is the global end of data known durable. Stored by the
	// flusher (or Recover/Close with the flusher stopped), and lowered by
	// Truncate; truncations counts Truncate calls so that a flush that
	// started before one does not raise flushed past the new end.
	// Both are stored with commitMu held.
	flushed     atomic.Int64
	truncations atomic.Int64
	// lastPutTime is the store timestamp (ms) of the latest put; flushedTime
	// the latest one known flushed (for the checkpoint).
	lastPutTime atomic.Int64
	// committedTime is a store timestamp (ms) the committed data covers:
	// every record stamped before it is committed (set with committed; a
	// rolled-back record's time never gets here).
	committedTime atomic.Int64
	flushedTime   atomic.Int64

	err atomic.Pointer[error] // sticky write/sync failure
	// rollback is a failed commit run not yet taken back (rollbackLocked).
	rollback atomic.Pointer[pendingRollback]
	// epoch counts rollbacks (incremented with mu and commitMu held);
	// rollbackPoints[e] is where the rollback that ended epoch e cut the
	// log (copy-on-write). A put notes the epoch it appended in, which
	// tells whether its record survived (decide).
	epoch          atomic.Int64
	rollbackPoints atomic.Pointer[[]int64]
	// space refuses puts before the disk fills.
	space     spaceGuard
	writeLog  lograte.Limiter // failed writes
	flushLog  lograte.Limiter // failed async flushes
	recovered atomic.Bool
	started   atomic.Bool
	closed    atomic.Bool

	waiters struct {
		sync.Mutex
		list   []*waiter
		spare  []*waiter
		closed bool
	}

	committerIdle atomic.Bool
	committer     lifecycle.Loop // ASYNC_FLUSH only
	flusher       lifecycle.Loop
	gcStats       groupCommitCounters // SYNC_FLUSH's flusher
}

// Open loads the segment files of cfg.Dir. Call Recover before Start and
// before any write or read.
func Open(cfg Config) (*Log, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	segs, err := segment.Open(segment.Config{
		Dir:      cfg.Dir,
		FS:       cfg.FS,
		Size:     cfg.SegmentSize,
		ZeroFill: cfg.FlushSync,
		Logger:   cfg.Logger,
		Now:      cfg.Now,
	})
	if err != nil {
		return nil, fmt.Errorf("commitlog: open: %w", err)
	}
	l := &Log{cfg: cfg, segs: segs, ring: make([]byte, cfg.RingSize), msgIDs: newMsgIDFormatter(cfg.StoreHost)}
	l.queues.init()
	l.clock = newPutClock(cfg.Now, cfg.realClock)
	l.rollbackPoints.Store(&[]int64{})
	l.space.init(&l.cfg, l.clock.mono)
	return l, nil
}

// Start starts the allocator, the committer (async flush) and the flusher.
func (l *Log) Start() error {
	if !l.recovered.Load() {
		return ErrNotRecovered
	}
	if l.closed.Load() {
		return ErrClosed
	}
	if l.started.Swap(true) {
		return nil
	}
	l.segs.Start()
	if l.cfg.FlushSync {
		// No committer: the flusher commits.
		l.flusher.Start("commitlog-group-commit", func(ctx context.Context) { l.syncFlushLoop(ctx.Done()) })
	} else {
		l.committer.Start("commitlog-committer", func(ctx context.Context) { l.commitLoop(ctx.Done()) })
		l.flusher.Start("commitlog-flusher", func(ctx context.Context) { l.asyncFlushLoop(ctx.Done()) })
	}
	return nil
}

// Close stops the log: refuses new puts, lets in-flight puts leave the put
// lock, stops the committer, commits and flushes what remains (the final
// flush), completes every waiter, stops the allocator and closes the files.
// It returns the sticky error, if any. Close is idempotent.
func (l *Log) Close() error {
	if l.closed.Swap(true) {
		return l.stickyErr()
	}
	// In-flight puts hold mu while appending; taking it once makes sure
	// every accepted put has reached the ring.
	l.lock()
	l.unlock()

	// Stop the background writers before the final commit so that exactly
	// one goroutine (this one) touches the file from here on.
	l.committer.Close()
	l.flusher.Close()
	if gs := l.GroupCommitStats(); gs.Syncs > 0 {
		l.cfg.Logger.Info("commitlog: group commit", gs.logAttrs()...)
	}
	var err error
	if l.recovered.Load() {
		err = l.flushAll()
	}
	// Waiters still registered get their answer from the final flush.
	l.waiters.Lock()
	l.waiters.closed = true
	l.waiters.Unlock()
	l.completeWaiters(err, true)

	// The allocator last: a roll can no longer happen.
	if cerr := l.segs.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return l.stickyErr()
}

// flushAll commits the ring and syncs up to the committed end.
func (l *Log) flushAll() error {
	cerr := l.commit()
	err := l.syncCommitted()
	if cerr != nil {
		return cerr
	}
	return err
}

// syncCommitted syncs up to the committed end; the store timestamp the
// committed data covers becomes the flushed one (the checkpoint's
// physicMsgTimestamp).
func (l *Log) syncCommitted() error {
	ts := l.committedTime.Load() // before committed: the sync covers it
	err := l.syncTo(l.committed.Load())
	if err == nil {
		l.flushedTime.Store(ts)
	}
	return err
}

func (l *Log) stickyErr() error {
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

// fail makes the log sticky-failed: every later put is refused with
// ServiceNotAvailable.
func (l *Log) fail(err error) error {
	if l.err.CompareAndSwap(nil, &err) {
		l.cfg.Logger.Error("commitlog: failed; refusing further writes until restart", "err", err)
	}
	return l.stickyErr()
}

// Refusal says why puts are refused now ("" when they are accepted): the
// sticky failure, or the disk being full.
func (l *Log) Refusal() string {
	if err := l.stickyErr(); err != nil {
		return "commitlog write error: " + err.Error()
	}
	return l.space.reason()
}

// Err returns the sticky failure that makes the log refuse puts, or nil.
func (l *Log) Err() error { return l.stickyErr() }

// MinOffset is the first offset still stored (the first segment's start).
func (l *Log) MinOffset() int64 {
	if f := l.segs.First(); f != nil {
		return f.Start()
	}
	return l.head.Load()
}

// MaxOffset is the write position: the end of the last appended record.
func (l *Log) MaxOffset() int64 { return l.head.Load() }

// Committed is the end of the data readers may read.
func (l *Log) Committed() int64 { return l.committed.Load() }

// Flushed is the end of the data known durable.
func (l *Log) Flushed() int64 { return l.flushed.Load() }

// FlushedStoreTimestamp is the store timestamp (ms) of the latest record
// known flushed: the checkpoint's physicMsgTimestamp.
func (l *Log) FlushedStoreTimestamp() int64 { return l.flushedTime.Load() }

// SegmentSize is the size of every segment file.
func (l *Log) SegmentSize() int64 { return l.cfg.SegmentSize }

// Segments returns the start offsets of the segment files, oldest first
// (abnormal recovery picks its starting file from them).
func (l *Log) Segments() []int64 {
	files := l.segs.Files()
	out := make([]int64, len(files))
	for i, f := range files {
		out[i] = f.Start()
	}
	return out
}

// Busy reports whether the put lock has been held longer than
// OSPageCacheBusyTimeout (puts are then refused with OS_PAGECACHE_BUSY).
func (l *Log) Busy() bool { return l.busyAt(l.clock.mono()) }

// busyAt is Busy at the clock's mono time now (a put's one reading).
func (l *Log) busyAt(now int64) bool {
	since := l.lockedSince.Load()
	if since == 0 || now-since <= int64(l.cfg.OSPageCacheBusyTimeout) {
		return false
	}
	// lockedSince is the latest holder's time, kept after unlock: the lock
	// is busy only if still held. Tried only once that time is old, so
	// not on a put's fast path.
	if l.mu.TryLock() {
		l.unlock()
		return false
	}
	// Held. Every holder takes mu with lock(), which stamps lockedSince
	// right after acquiring it, so after an idle period a holder may
	// still show the old time for a moment: give it a few chances to
	// stamp before calling the lock stuck (a put refused as busy is
	// answered SYSTEM_BUSY).
	for range busyRechecks {
		runtime.Gosched()
		if l.lockedSince.Load() != since {
			return false
		}
	}
	return true
}

// busyRechecks is how many times busyAt yields to a holder that may not
// have stamped lockedSince yet.
const busyRechecks = 4

// DeleteExpired removes up to max head segments last modified before
// olderThan, never the segment being written; with force it removes head
// segments whatever their age, and reports those not yet expired apart
// (segment.Removed). Readers holding a segment keep it until they release
// it.
func (l *Log) DeleteExpired(olderThan time.Time, force bool, max int) (segment.Removed, error) {
	r, err := l.segs.DeleteExpired(olderThan, force, max)
	if err != nil {
		return r, fmt.Errorf("commitlog: delete expired: %w", err)
	}
	return r, nil
}

// Truncate cuts the log at end (an HA slave realigning with its master, or
// the store dropping a dirty tail): later data and segments are removed and
// all positions set to end, durably (the zeroed tail is synced). No put
// may run concurrently.
func (l *Log) Truncate(end int64) error {
	l.lock()
	defer l.unlock()
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.truncations.Add(1)
	if err := l.segs.Truncate(end); err != nil {
		return fmt.Errorf("commitlog: truncate at %d: %w", end, err)
	}
	l.setPositionsLocked(end)
	// As in Recover: cut records must not come back behind a later append.
	if err := l.zeroStaleTail(end); err != nil {
		return fmt.Errorf("commitlog: truncate at %d: %w", end, l.fail(err))
	}
	// Durable before Truncate returns: what the caller records next (the
	// store's epoch file) must not describe a log a crash would restore.
	if f := l.segs.FindHeld(end); f != nil {
		err := f.Sync()
		f.Release()
		if err != nil {
			return fmt.Errorf("commitlog: truncate at %d: %w", end, l.fail(err))
		}
	}
	return nil
}

// setPositionsLocked makes end the write, commit and flush position.
// REQUIRES: mu and commitMu held, or the log not started.
func (l *Log) setPositionsLocked(end int64) {
	cur := l.segs.Last()
	if cur != nil && (end < cur.Start() || end > cur.End()) {
		cur = nil // everything was removed: the next write rolls at end
	}
	l.cur.Store(cur)
	l.head.Store(end)
	l.committed.Store(end)
	if l.flushed.Load() > end || !l.started.Load() {
		l.flushed.Store(end)
	}
}
