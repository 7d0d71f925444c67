package commitlog

import (
	"context"
	"log/slog"
	"sync"
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
			w.done <- st
		} else {
			keep = append(keep, w)
		}
	}
	clear(list)
	l.waiters.list, l.waiters.spare = keep, list[:0]
	l.waiters.Unlock()
}

// syncFlushLoop is the group-commit flusher (SYNC_FLUSH): woken by puts, it
// commits the ring, fdatasyncs once and completes every waiter the flush
// covers; no sleeping, so each flush carries everything that arrived during
// the previous one.
func (l *Log) syncFlushLoop(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case <-l.flusher.Kicked():
		}
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
		l.completeWaiters(err, false)
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
