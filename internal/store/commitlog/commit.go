package commitlog

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"syscall"

	"github.com/rocketd/rocketd/internal/message"
)

// commitLoop is the committer (ASYNC_FLUSH): it writes the ring to the
// current segment whenever data is pending and answers the puts whose
// records it wrote. It marks itself idle before waiting so that a put wakes
// it only when it is not already busy; an idle committer is woken by the
// first put, a busy one keeps looping while data is pending, so light
// traffic is not held back and heavy traffic is written in large chunks.
func (l *Log) commitLoop(quit <-chan struct{}) {
	for {
		l.committerIdle.Store(true)
		if l.committed.Load() >= l.head.Load() {
			select {
			case <-quit:
				return
			case <-l.committer.Kicked():
			}
		}
		l.committerIdle.Store(false)
		// A failure is rolled back inside commit and answered below; the
		// loop goes on: after a full disk, puts resume once space is back
		// (a sticky failure refuses them instead).
		_ = l.commit()
		l.completeWaiters(nil, false)
		// Let the puts just answered run first: their next records join
		// the next run instead of each taking a write of its own.
		runtime.Gosched()
	}
}

// kickCommitter wakes the committer if it is idle (ASYNC_FLUSH).
func (l *Log) kickCommitter() {
	if l.committerIdle.Load() {
		l.committer.Kick()
	}
}

// commit writes the ring (commitLocked); when the write fails it takes the
// put lock and rolls the unwritten records back (rollbackLocked).
// REQUIRES: neither mu nor commitMu held.
func (l *Log) commit() error {
	l.commitMu.Lock()
	err := l.commitLocked()
	l.commitMu.Unlock()
	if err != nil && l.rollback.Load() != nil {
		l.lock()
		l.commitMu.Lock()
		l.rollbackLocked()
		l.commitMu.Unlock()
		l.unlock()
	}
	return err
}

// commitIfIdle is commit when nobody is writing the ring: it reports false
// at once, writing nothing, when another goroutine holds commitMu. It
// answers the waiters its run covered.
// REQUIRES: neither mu nor commitMu held.
func (l *Log) commitIfIdle() bool {
	if !l.commitMu.TryLock() {
		return false
	}
	err := l.commitLocked()
	l.commitMu.Unlock()
	if err != nil {
		_ = l.commit() // takes the failed run back
	}
	l.completeWaiters(nil, false)
	return true
}

// commitPutLocked is commit for a holder of the put lock.
// REQUIRES: mu held, commitMu not held.
func (l *Log) commitPutLocked() error {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	err := l.commitLocked()
	if err != nil {
		l.rollbackLocked()
	}
	return err
}

// commitLocked writes the ring's pending bytes [committed, head) to the
// current segment in chunks of at most commitChunk, then publishes the new
// committed position and calls OnCommit.
//
// The committed position moves only once the whole run is written: head is
// a record boundary, a chunk end is not, and a run that fails halfway is
// taken back whole (rollbackLocked), so readers, the dispatcher, a slave and
// the waiting puts never see bytes that could be taken back. The ring keeps
// the run's bytes until then (its free space is counted from committed).
// REQUIRES: commitMu held.
func (l *Log) commitLocked() error {
	cur := l.cur.Load()
	tail := l.committed.Load()
	// Read before head: the put that stored ts had advanced head already,
	// so the run covers every record stamped before ts.
	ts := l.lastPutTime.Load()
	head := l.head.Load()
	if err := l.writeErr(); err != nil {
		if tail < head && l.rollback.Load() == nil {
			// Sticky: these records will never be written; take them back
			// so that their puts are answered.
			l.rollback.Store(&pendingRollback{err: err, attempted: tail})
		}
		return err
	}
	if cur == nil || tail >= head {
		return nil
	}
	size := int64(len(l.ring))
	for pos := tail; pos < head; {
		i := pos % size
		n := min(head-pos, int64(commitChunk), size-i)
		w, err := cur.WriteAt(l.ring[i:i+n], pos-cur.Start())
		if err != nil {
			return l.writeFailed(err, pos+int64(w))
		}
		pos += n
	}
	cur.SetWrote(max(cur.Wrote(), head-cur.Start()))
	cur.SetCommitted(head - cur.Start())
	l.committedTime.Store(ts)
	l.committed.Store(head)
	l.space.consumed(head - tail)
	if l.cfg.OnCommit != nil {
		l.cfg.OnCommit(head)
	}
	return nil
}

// pendingRollback is a failed commit run waiting to be taken back: err is
// the cause, attempted the end of what the failed write may have put in the
// file (a short write on a full disk writes a prefix).
type pendingRollback struct {
	err       error
	attempted int64
}

// writeErr is why nothing may be written now: the sticky failure, or a
// failed run not yet rolled back.
func (l *Log) writeErr() error {
	if err := l.stickyErr(); err != nil {
		return err
	}
	if p := l.rollback.Load(); p != nil {
		return p.err
	}
	return nil
}

// isSpaceErr reports a write that failed for lack of space: the condition
// passes when space is freed, so it does not make the log sticky-failed.
func isSpaceErr(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// writeFailed records a failed write of the run starting at the committed
// position. Nothing is written until rollbackLocked has taken the run back;
// puts are refused meanwhile. A full disk makes the space guard refuse puts
// until space is back; any other write error is sticky (the file's state is
// unknown).
// REQUIRES: commitMu held.
func (l *Log) writeFailed(err error, attempted int64) error {
	err = fmt.Errorf("commitlog: write at %d: %w", l.committed.Load(), err)
	l.rollback.Store(&pendingRollback{err: err, attempted: attempted})
	if isSpaceErr(err) {
		l.space.markFull(err)
	} else {
		l.fail(err)
	}
	return err
}

// rollbackLocked takes back a failed run: every record in [committed, head)
// is dropped (its put is answered SERVICE_NOT_AVAILABLE: not stored), the
// queue offsets they took are given back, the bytes the failed write may
// have put in the file are zeroed (so that a later, shorter log never has
// them behind its end where recovery could take them for records), and head
// returns to committed. The next record is written where the first dropped
// one was: no acknowledged record ever had that offset.
// REQUIRES: mu and commitMu held.
func (l *Log) rollbackLocked() {
	p := l.rollback.Load()
	if p == nil {
		return
	}
	to := l.committed.Load()
	head := l.head.Load()
	cur := l.cur.Load()
	dropped := 0
	if head > to {
		dropped = l.rewindQueuesLocked(to, head)
	}
	l.head.Store(to)
	if cur != nil && to >= cur.Start() && to <= cur.End() {
		cur.SetWrote(to - cur.Start())
		if p.attempted > to {
			if err := zeroRange(cur, to-cur.Start(), min(p.attempted, cur.End())-cur.Start()); err != nil {
				l.fail(fmt.Errorf("commitlog: zero the bytes of a failed write at %d: %w", to, err))
			}
		}
	}
	// Publish the rollback before the run is released: a put that appended
	// a dropped record and has not registered its wait yet finds the epoch
	// changed and learns its answer from the rollback point.
	points := append(append([]int64(nil), *l.rollbackPoints.Load()...), to)
	l.rollbackPoints.Store(&points)
	l.epoch.Add(1)
	l.rollback.Store(nil)
	l.writeLog.Log(l.cfg.Logger, slog.LevelError, "commitlog: write failed; the puts not yet written were refused and taken back",
		"at", to, "bytes", head-to, "records", dropped, "err", p.err)
	l.completeWaiters(nil, false)
}

// rollbackPoint is where the first rollback after epoch cut the log: a
// record of that epoch ending at or before it was written, one ending after
// it was dropped.
func (l *Log) rollbackPoint(epoch int64) int64 {
	return (*l.rollbackPoints.Load())[epoch]
}

// rewindQueuesLocked gives back the queue offsets of the records in the
// ring's [from, to): each queue's next offset becomes that of its first
// dropped record. It returns the number of records. The bytes are the
// log's own records (a slave's raw bytes may start mid-record: the walk
// stops at anything that is not a record at its own offset).
// REQUIRES: mu held.
func (l *Log) rewindQueuesLocked(from, to int64) int {
	buf := make([]byte, to-from)
	size := int64(len(l.ring))
	for pos := from; pos < to; {
		i := pos % size
		n := min(to-pos, size-i)
		copy(buf[pos-from:], l.ring[i:i+n])
		pos += n
	}
	seen := map[queueKey]bool{}
	records := 0
	for off := 0; off+message.MinRecordSize <= len(buf); {
		rec := buf[off:]
		n := int(message.RecordTotalSize(rec))
		if message.RecordMagic(rec) == message.MagicBlank || n < message.MinRecordSize || n > len(rec) ||
			message.RecordPhysicalOffset(rec) != from+int64(off) {
			break
		}
		r, _, err := message.DecodeRecordNoCopy(rec[:n], false)
		if err != nil {
			break
		}
		records++
		off += n
		key := queueKey{r.Topic, r.QueueID}
		if !message.Dispatched(r.SysFlag) || seen[key] {
			continue
		}
		seen[key] = true
		if c := l.queues.findLocked(key); c != nil {
			c.next = r.QueueOffset
		}
	}
	return records
}

// zeroRange writes zeros over [from, to) of a segment (relative positions).
func zeroRange(f interface {
	WriteAt(p []byte, pos int64) (int, error)
}, from, to int64) error {
	zero := make([]byte, min(to-from, 1<<20))
	for pos := from; pos < to; {
		n := min(int64(len(zero)), to-pos)
		if _, err := f.WriteAt(zero[:n], pos); err != nil {
			return err
		}
		pos += n
	}
	return nil
}
