package commitlog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// waiter is a put waiting for its record to be written (commit) or made
// durable (flush). epoch is the log's rollback epoch when the record was
// appended (see decide). done has room for the one answer, so the
// goroutine that answers never blocks on it.
type waiter struct {
	end   int64
	epoch int64
	flush bool
	since int64 // clock mono when a flush waiter registered (GroupCommitStats)
	done  chan PutStatus
	timer *time.Timer
}

var waiterPool = sync.Pool{New: func() any { return &waiter{done: make(chan PutStatus, 1)} }}

// decide returns the answer for a put whose record ends at end and was
// appended in epoch, when it is known: PutOK once the record is committed
// (flush: flushed), ServiceNotAvailable when a failed write took it back.
//
// A rollback returns head to the committed position and later records are
// written from there, so a position past end does not prove that this
// record was written: the epoch tells. The positions are read before the
// epoch, and a rollback bumps the epoch before anything is committed after
// it, so an unchanged epoch vouches for the position read.
func (l *Log) decide(end, epoch int64, flush bool) (PutStatus, bool) {
	pos := l.committed.Load()
	if flush {
		pos = l.flushed.Load()
	}
	if l.epoch.Load() != epoch {
		if end > l.rollbackPoint(epoch) {
			return ServiceNotAvailable, true
		}
		if !flush {
			return PutOK, true
		}
	}
	if end <= pos {
		return PutOK, true
	}
	return 0, false
}

// wait waits, at most SyncFlushTimeout, until the put's record is written
// (flush: durable): PutOK; ServiceNotAvailable when a failed write took the
// record back (not stored); FlushDiskTimeout on timeout, cancellation or a
// failed flush (the record may be stored but is not confirmed).
func (l *Log) wait(ctx context.Context, end, epoch int64, flush bool) PutStatus {
	if st, ok := l.decide(end, epoch, flush); ok {
		return st
	}
	if ctx == nil {
		ctx = context.Background()
	}
	l.waiters.Lock()
	if l.waiters.closed {
		// Close answered every waiter already.
		l.waiters.Unlock()
		return l.finalAnswer(end, epoch, flush, nil)
	}
	// Decided again under the lock: whoever moves a position answers the
	// waiters after moving it, taking this lock, so a waiter added now is
	// either decided here or seen by that pass.
	if st, ok := l.decide(end, epoch, flush); ok {
		l.waiters.Unlock()
		return st
	}
	w := waiterPool.Get().(*waiter)
	w.end, w.epoch, w.flush = end, epoch, flush
	if flush {
		w.since = l.clock.mono()
	}
	l.waiters.list = append(l.waiters.list, w)
	l.waiters.Unlock()
	if flush {
		l.flusher.Kick()
	}

	if w.timer == nil {
		w.timer = time.NewTimer(l.cfg.SyncFlushTimeout)
	} else {
		w.timer.Reset(l.cfg.SyncFlushTimeout)
	}
	select {
	case st := <-w.done:
		w.timer.Stop()
		waiterPool.Put(w)
		return st
	case <-w.timer.C:
		// The answering goroutine still holds w and will answer into done;
		// w is not reused (left to the garbage collector).
		return FlushDiskTimeout
	case <-ctx.Done():
		w.timer.Stop()
		return FlushDiskTimeout
	}
}

// finalAnswer is the answer once no more commits or flushes will happen
// (the log closed): what decide knows, else FlushDiskTimeout for a flush
// that failed and ServiceNotAvailable for a record never written.
func (l *Log) finalAnswer(end, epoch int64, flush bool, err error) PutStatus {
	if st, ok := l.decide(end, epoch, flush); ok {
		return st
	}
	if flush {
		if st, ok := l.decide(end, epoch, false); ok && st == PutOK {
			return FlushDiskTimeout // written, not known durable
		}
	}
	return ServiceNotAvailable
}

// completeWaiters answers every waiter whose answer is known (decide).
// After a failed flush (err) the flush waiters whose records were written
// get FlushDiskTimeout; final (Close) answers everyone.
func (l *Log) completeWaiters(err error, final bool) {
	l.completeWaitersAfter(err, final, nil)
}

// completeWaitersAfter is completeWaiters for the group-commit flusher:
// the flush waiters answered PUT_OK are counted against the sync cycle c
// (GroupCommitStats) when c is not nil.
func (l *Log) completeWaitersAfter(err error, final bool, c *syncCycle) {
	var synced, behind, own int64
	l.waiters.Lock()
	list := l.waiters.list
	keep := l.waiters.spare[:0]
	for _, w := range list {
		st, ok := l.decide(w.end, w.epoch, w.flush)
		switch {
		case ok:
		case final:
			st, ok = l.finalAnswer(w.end, w.epoch, w.flush, err), true
		case err != nil && w.flush:
			if cst, cok := l.decide(w.end, w.epoch, false); cok && cst == PutOK {
				st, ok = FlushDiskTimeout, true
			}
		}
		if ok {
			if c != nil && w.flush && st == PutOK {
				synced++
				behind += max(0, c.start-w.since)
				own += c.end - max(c.start, w.since)
			}
			w.done <- st
		} else {
			keep = append(keep, w)
		}
	}
	clear(list)
	l.waiters.list, l.waiters.spare = keep, list[:0]
	l.waiters.Unlock()
	if synced > 0 {
		l.gcStats.waiters.Add(synced)
		l.gcStats.behind.Add(behind)
		l.gcStats.own.Add(own)
	}
}

// syncCycle is one round of the group-commit flusher, in clock mono time:
// from its commit's start to the end of its fdatasync.
type syncCycle struct{ start, end int64 }

// groupCommitCounters are GroupCommitStats' counters.
type groupCommitCounters struct {
	syncs, idleStarts, waiters, behind, own, syncNs atomic.Int64
}

// GroupCommitStats describes the group-commit flusher's work so far
// (SYNC_FLUSH; zero under ASYNC_FLUSH): how many records each fdatasync
// carried and where a put's wait for its flush went.
type GroupCommitStats struct {
	// Syncs counts the flusher's rounds that synced data (commit,
	// fdatasync, answers).
	Syncs int64
	// IdleStarts counts the rounds that began with the flusher idle
	// (woken by a put), the others following the previous round at once.
	IdleStarts int64
	// Waiters counts the puts answered PUT_OK by a round: Waiters / Syncs
	// is the records per fdatasync (a batch counts once).
	Waiters int64
	// Behind is the puts' total wait before the round that covered them
	// began: the previous round's rest, and the flusher's wake-up.
	Behind time.Duration
	// Own is the puts' total wait from then to the end of that round's
	// fdatasync (its commit and sync; the answer's delivery is not in it).
	Own time.Duration
	// SyncTime is the rounds' total time, commit to the end of the sync.
	SyncTime time.Duration
}

// GroupCommitStats returns the group-commit counters (see the type).
func (l *Log) GroupCommitStats() GroupCommitStats {
	c := &l.gcStats
	return GroupCommitStats{
		Syncs:      c.syncs.Load(),
		IdleStarts: c.idleStarts.Load(),
		Waiters:    c.waiters.Load(),
		Behind:     time.Duration(c.behind.Load()),
		Own:        time.Duration(c.own.Load()),
		SyncTime:   time.Duration(c.syncNs.Load()),
	}
}

// syncFlushLoop is the group-commit flusher (SYNC_FLUSH): woken by puts, it
// commits the ring, fdatasyncs once and completes every waiter the flush
// covers; no sleeping, so each flush carries everything that arrived during
// the previous one.
func (l *Log) syncFlushLoop(quit <-chan struct{}) {
	for {
		idle := false
		select {
		case <-quit:
			return
		case <-l.flusher.Kicked():
		default:
			// Idle: nothing arrived during the previous round.
			select {
			case <-quit:
				return
			case <-l.flusher.Kicked():
			}
			idle = true
		}
		c := syncCycle{start: l.clock.mono()}
		from := l.flushed.Load()
		// Commit and answer the puts that wait only for the write
		// (WAIT=false), then sync what is committed (after a failed write
		// too: the records before it wait for their flush) and answer the
		// rest.
		_ = l.commit()
		l.completeWaiters(nil, false)
		err := l.syncCommitted()
		if err != nil {
			// Sticky now: take back what the ring still holds.
			_ = l.commit()
		}
		c.end = l.clock.mono()
		if l.flushed.Load() > from {
			// Counted when the round synced something (a put's second
			// kick can leave a round with nothing to do).
			l.gcStats.syncs.Add(1)
			l.gcStats.syncNs.Add(c.end - c.start)
			if idle {
				l.gcStats.idleStarts.Add(1)
			}
		}
		l.completeWaitersAfter(err, false, &c)
	}
}

// asyncFlushLoop is the periodic flusher (ASYNC_FLUSH): every FlushInterval
// it syncs when at least FlushLeastPages pages are dirty, and syncs any
// amount once FlushThoroughInterval has passed since the last thorough flush.
func (l *Log) asyncFlushLoop(quit <-chan struct{}) {
	tick := time.NewTicker(l.cfg.FlushInterval)
	defer tick.Stop()
	lastThorough := time.Now()
	for {
		select {
		case <-quit:
			return
		case <-tick.C:
		}
		thorough := time.Since(lastThorough) >= l.cfg.FlushThoroughInterval
		if thorough {
			lastThorough = time.Now()
		}
		l.asyncFlushRound(thorough)
	}
}

// asyncFlushRound is one tick of asyncFlushLoop: it syncs when at least
// FlushLeastPages pages are dirty, or any amount when thorough.
func (l *Log) asyncFlushRound(thorough bool) {
	dirty := l.committed.Load() - l.flushed.Load()
	if dirty <= 0 || (dirty < int64(l.cfg.FlushLeastPages)*pageSize && !thorough) {
		return
	}
	if err := l.syncCommitted(); err != nil {
		l.flushLog.Log(l.cfg.Logger, slog.LevelError, "commitlog: async flush failed; puts are refused", "err", err)
	}
}

// syncTo syncs every segment holding data in [flushed, to) and advances the
// flushed position. No lock is held across the syncs.
// Only the flusher (or Close, with the flusher stopped) calls it.
func (l *Log) syncTo(to int64) error {
	from := l.flushed.Load()
	if from >= to {
		return nil
	}
	if err := l.stickyErr(); err != nil {
		return err
	}
	start := time.Now()
	truncations := l.truncations.Load()
	for off := from; off < to; {
		f := l.segs.FindHeld(off)
		if f == nil {
			// Below the first segment (deleted) or past the last: nothing
			// more to sync there.
			first := l.segs.First()
			if first == nil || off >= first.Start() {
				break
			}
			off = first.Start()
			continue
		}
		err := f.Sync()
		if err == nil {
			f.SetFlushed(min(to, f.End()) - f.Start())
		}
		off = f.End()
		f.Release()
		if err != nil {
			return l.fail(err)
		}
	}
	l.commitMu.Lock()
	if l.truncations.Load() == truncations {
		l.flushed.Store(to)
	}
	l.commitMu.Unlock()
	if d := time.Since(start); d > time.Second {
		l.cfg.Logger.Warn("commitlog: slow fsync", "duration", d, "bytes", to-from)
	}
	return nil
}

// logAttrs renders the stats for a log line: counts and per-put means.
func (s GroupCommitStats) logAttrs() []any {
	per := func(d time.Duration, n int64) time.Duration {
		if n == 0 {
			return 0
		}
		return d / time.Duration(n)
	}
	recs := 0.0
	if s.Syncs > 0 {
		recs = float64(s.Waiters) / float64(s.Syncs)
	}
	return []any{"syncs", s.Syncs, "idleStarts", s.IdleStarts, "putsPerSync", recs,
		"roundMean", per(s.SyncTime, s.Syncs), "waitBehindMean", per(s.Behind, s.Waiters), "waitOwnMean", per(s.Own, s.Waiters)}
}
