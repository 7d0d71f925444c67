package commitlog

import (
	"errors"
	"fmt"
	"time"

	"github.com/rocketd/rocketd/internal/store/segment"
)

// PrepareSegment has the segment the next put writes prepared before the
// first put comes, and waits for it: a log without segments (a fresh
// store) or whose last segment is full would otherwise make its first put
// wait for the file, and under SYNC_FLUSH that is a zero-fill of the whole
// segment (seconds for 1 GiB). When the last segment still has room it
// returns at once: Start already asked for the segment after it.
//
// It reports whether it prepared a file. A failed preparation (a full
// disk) is returned; puts then fail fast with CreateMappedFileFailed until
// the allocator's retry succeeds (RollErr says why). Call it after Start.
func (l *Log) PrepareSegment() (prepared bool, err error) {
	if !l.started.Load() {
		return false, errors.New("commitlog: PrepareSegment before Start")
	}
	// No put runs yet (the store has not returned from Open): the atomics
	// are stable, no lock is needed.
	cur, head := l.cur.Load(), l.head.Load()
	if cur != nil && head < cur.End() {
		return false, nil
	}
	if cur != nil {
		head = cur.End()
	}
	began := time.Now()
	msg := "commitlog: preparing the segment the first put writes"
	if l.cfg.FlushSync {
		msg = "commitlog: zero-filling the segment the first put writes (SYNC_FLUSH); the store opens when it is ready"
	}
	l.cfg.Logger.Info(msg, "offset", head, "size", l.cfg.SegmentSize)
	if err := l.segs.Prepare(head); err != nil {
		return true, fmt.Errorf("commitlog: prepare the segment at %d: %w", head, err)
	}
	l.cfg.Logger.Info("commitlog: segment prepared", "offset", head, "took", time.Since(began))
	return true, nil
}

// RollErr is why the next segment cannot be created (the latest failed
// preparation, which the allocator retries after a back-off), or nil. A
// CreateMappedFileFailed put status has this cause;
// segment.IsDiskFull(err) tells a full disk.
func (l *Log) RollErr() error { return l.segs.PrepareErr() }

// RollStats is how long rolls waited for their segment to be prepared.
func (l *Log) RollStats() segment.RollStats { return l.segs.RollStats() }

// logRollFailure logs a failed roll, except one failing fast while the
// allocator backs off: the allocator logged that failure once per attempt,
// and every put during the back-off would repeat it.
func (l *Log) logRollFailure(start int64, err error) {
	var backoff *segment.BackoffError
	if errors.As(err, &backoff) {
		return
	}
	l.cfg.Logger.Error("commitlog: roll", "at", start, "err", err)
}
