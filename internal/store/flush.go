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
//     at or below the CommitLog's flushed end.
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
	_, ts := s.disp.position()
	cqErr := s.cqs.Flush(leastPages)
	st := s.ckpt.State()
	changed := false
	if cqErr == nil && ts != 0 && ts != st.LogicsMsgTimestamp && !s.cqs.Dirty() {
		s.ckpt.SetLogicsMsgTimestamp(ts)
		changed = true
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
