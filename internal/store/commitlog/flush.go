package commitlog

import (
	"context"
	"sync"
	"time"
)

// waiter is a put waiting for a sync flush to cover end. done has room for
// the one answer, so the flusher never blocks on it.
type waiter struct {
	end   int64
	done  chan PutStatus
	timer *time.Timer
}

var waiterPool = sync.Pool{New: func() any { return &waiter{done: make(chan PutStatus, 1)} }}

// waitFlush waits until the log is flushed up to end (group commit), at most
// SyncFlushTimeout: PutOK, or FlushDiskTimeout on timeout, cancellation or
// flush failure (the record is written but not known durable).
func (l *Log) waitFlush(ctx context.Context, end int64) PutStatus {
	if l.flushed.Load() >= end {
		return PutOK
	}
	if ctx == nil {
		ctx = context.Background()
	}
	w := waiterPool.Get().(*waiter)
	w.end = end
	l.waiters.Lock()
	if l.waiters.closed {
		// Close did its final flush already.
		l.waiters.Unlock()
		waiterPool.Put(w)
		if l.flushed.Load() >= end {
			return PutOK
		}
		return FlushDiskTimeout
	}
	l.waiters.list = append(l.waiters.list, w)
	l.waiters.Unlock()
	l.flusher.wake()

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
		// The flusher still holds w and will answer into done; w is not
		// reused (left to the garbage collector).
		return FlushDiskTimeout
	case <-ctx.Done():
		w.timer.Stop()
		return FlushDiskTimeout
	}
}

// completeWaiters answers every waiter covered by the flushed position with
// PutOK, and, when err is set, every other waiter with FlushDiskTimeout.
func (l *Log) completeWaiters(err error) {
	flushed := l.flushed.Load()
	l.waiters.Lock()
	list := l.waiters.list
	keep := l.waiters.spare[:0]
	for _, w := range list {
		switch {
		case w.end <= flushed: // durable before any failure
			w.done <- PutOK
		case err != nil:
			w.done <- FlushDiskTimeout
		default:
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
func (l *Log) syncFlushLoop() {
	defer close(l.flusher.done)
	for {
		select {
		case <-l.flusher.quit:
			return
		case <-l.flusher.kick:
		}
		err := l.flushAll()
		l.completeWaiters(err)
	}
}

// asyncFlushLoop is the periodic flusher (ASYNC_FLUSH): every FlushInterval
// it syncs when at least FlushLeastPages pages are dirty, and syncs any
// amount once FlushThoroughInterval has passed since the last thorough flush.
func (l *Log) asyncFlushLoop() {
	defer close(l.flusher.done)
	tick := time.NewTicker(l.cfg.FlushInterval)
	defer tick.Stop()
	lastThorough := time.Now()
	least := int64(l.cfg.FlushLeastPages) * pageSize
	for {
		select {
		case <-l.flusher.quit:
			return
		case <-tick.C:
		}
		thorough := time.Since(lastThorough) >= l.cfg.FlushThoroughInterval
		if thorough {
			lastThorough = time.Now()
		}
		dirty := l.committed.Load() - l.flushed.Load()
		if dirty <= 0 || (dirty < least && !thorough) {
			continue
		}
		ts := l.lastPutTime.Load() // before the sync: the sync covers it
		if err := l.syncTo(l.committed.Load()); err != nil {
			l.cfg.Logger.Error("commitlog: async flush", "err", err)
			continue
		}
		l.flushedTime.Store(ts)
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
