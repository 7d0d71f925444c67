package store

import (
	"time"
)

// flushLoop is RocketMQ's FlushConsumeQueueService plus the checkpoint:
// every CQFlushInterval it flushes the queues with at least
// CQFlushLeastPages dirty pages (all of them every CQFlushThoroughInterval)
// and then advances and writes the checkpoint.
func (s *Store) flushLoop(quit <-chan struct{}) {
	tick := time.NewTicker(s.cfg.CQFlushInterval)
	defer tick.Stop()
	lastThorough := time.Now()
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
		s.flushQueuesAndCheckpoint(least)
	}
}

// flushQueuesAndCheckpoint flushes the queues and, when every unit
// dispatched so far is durable and the CommitLog is flushed past it,
// records the store time of the last dispatched record in the checkpoint
// and writes it.
func (s *Store) flushQueuesAndCheckpoint(leastPages int) {
	// Snapshot before flushing: whatever is dispatched now is covered.
	upTo, ts := s.disp.position()
	if err := s.cqs.Flush(leastPages); err != nil {
		s.cfg.Logger.Error("store: flush consume queues", "err", err)
		return
	}
	if ts == 0 || s.log.Flushed() < upTo {
		return
	}
	for _, q := range s.cqs.Queues() {
		if q.Dirty() {
			return // a queue below the least-pages threshold: not all durable
		}
	}
	st := s.ckpt.State()
	if st.LogicsMsgTimestamp == ts && st.PhysicMsgTimestamp == ts {
		return
	}
	s.ckpt.SetPhysicMsgTimestamp(ts)
	s.ckpt.SetLogicsMsgTimestamp(ts)
	if err := s.ckpt.Flush(); err != nil {
		s.cfg.Logger.Error("store: write checkpoint", "err", err)
	}
}
