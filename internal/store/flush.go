package store

import (
	"log/slog"
	"time"

	"github.com/rocketd/rocketd/internal/lograte"
)

// flushLoop is RocketMQ's FlushConsumeQueueService plus the checkpoint:
// every CQFlushInterval it flushes the queues with at least
// CQFlushLeastPages dirty pages (all of them every CQFlushThoroughInterval)
// and then advances and writes the checkpoint.
func (s *Store) flushLoop(quit <-chan struct{}) {
	tick := time.NewTicker(s.cfg.CQFlushInterval)
	defer tick.Stop()
	lastThorough := time.Now()
	// A failed sync is sticky (fdcache): the same error comes back on
	// every tick until the store is reopened.
	var errLog lograte.Limiter
	for {
		select {
		case <-quit:
			return
		case <-tick.C:
		}
		least := s.cfg.CQFlushLeastPages
		if time.Since(lastThorough) >= s.cfg.CQFlushThoroughInterval {
			least = 0
			lastThorough = time.Now()
		}
		if err := s.flushQueuesAndCheckpoint(least); err != nil {
			errLog.Log(s.cfg.Logger, slog.LevelError, "store: flush consume queues", "err", err)
		}
	}
}

// flushQueuesAndCheckpoint flushes the queues and advances the checkpoint:
//   - logicsMsgTimestamp: the store time of the last record dispatched
//     before the flush, once no queue has unsynced units left (every
//     thorough flush achieves that);
//   - physicMsgTimestamp: the store time of the newest dispatched position
//     at or below the CommitLog's flushed end;
//   - the resume record (rocketd's extension): the last record below both,
//     where recovery after a crash may start scanning.
//
// Everything stored before min(physic, logics) is then durable in both
// structures, which is what abnormal recovery relies on.
//
// It returns the queue flush error, for the caller to log.
func (s *Store) flushQueuesAndCheckpoint(leastPages int) error {
	// TruncateTo lowers the checkpoint: no advance from before the cut
	// may be written after it.
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	// Snapshot before flushing: whatever is dispatched now is covered.
	off, ts := s.disp.position()
	cqErr := s.cqs.Flush(leastPages)
	st := s.ckpt.State()
	changed := false
	if cqErr == nil && ts != 0 && ts != st.LogicsMsgTimestamp && !s.cqs.Dirty() {
		s.ckpt.SetLogicsMsgTimestamp(ts)
		changed = true
	}
	// The resume record: the last record whose bytes and units are all on
	// disk: below the CommitLog's flushed end, the dispatched snapshot and
	// every queue's first unsynced unit. Unlike the logics time it moves
	// under sustained load, when some queue always has unsynced units.
	if cqErr == nil {
		// Queues whose unsynced units are older than the previous pass
		// hold the bound back (a slow queue may stay under leastPages for
		// the whole thorough interval): sync a few of them each pass.
		if prev := s.prevFlushSnapshot; prev > 0 {
			if _, err := s.cqs.FlushLaggards(prev, maxLaggardSyncs); err != nil {
				cqErr = err
			}
		}
		s.prevFlushSnapshot = off
	}
	if cqErr == nil {
		if bound, err := s.durableBound(off); err != nil {
			s.cfg.Logger.Debug("store: resume record not advanced", "err", err)
		} else if rec, ok := s.disp.resumeRecordAt(bound); ok && (!st.HasResume || rec > st.ResumeRecord) {
			s.ckpt.SetResumeRecord(rec)
			changed = true
		}
	}
	if pts, ok := s.disp.timestampAt(s.log.Flushed()); ok && pts != st.PhysicMsgTimestamp {
		s.ckpt.SetPhysicMsgTimestamp(pts)
		changed = true
	}
	if !changed {
		return cqErr
	}
	if err := s.ckpt.Flush(); err != nil {
		s.cfg.Logger.Error("store: write checkpoint", "err", err)
	}
	return cqErr
}

// maxLaggardSyncs bounds the extra queue syncs of one flush pass: the
// resume record of a broker with thousands of slow queues waits for the
// thorough flush rather than costing thousands of fsyncs a second.
const maxLaggardSyncs = 64

// durableBound is a CommitLog offset below which every record and every
// ConsumeQueue unit of it is durable: the CommitLog's flushed end, the
// dispatched offset snapshot taken before the queue flush, and the first
// unsynced unit of any queue, whichever is lowest.
func (s *Store) durableBound(dispatched int64) (int64, error) {
	bound := min(dispatched, s.log.Flushed())
	p, dirty, err := s.cqs.FirstUnsynced()
	if err != nil {
		return 0, err
	}
	if dirty {
		bound = min(bound, p)
	}
	return bound, nil
}
