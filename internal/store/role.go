package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotSlave refuses AppendRaw on a store that takes puts: replicated
// bytes and local puts never interleave in one log.
var ErrNotSlave = errors.New("store: not a slave: replicated bytes refused")

// Slave reports whether the store refuses puts as a slave's.
func (s *Store) Slave() bool { return s.slave.Load() }

// BecomeSlave refuses new puts (ServiceNotAvailable, "this broker is a
// slave") and returns once every put accepted before has left the store:
// it was written whole and answered (a SYNC_MASTER's after its replica
// wait), so nothing is acknowledged half-written. The HA client may
// append (AppendRaw) afterwards.
func (s *Store) BecomeSlave() {
	s.roleMu.Lock()
	defer s.roleMu.Unlock()
	s.slave.Store(true)
	s.putGate.Lock() // drained: admit re-checks slave under the gate
	s.putGate.Unlock()
}

// BecomeMaster lets the store accept puts again. The caller has stopped
// appending replicated bytes. It first waits (bounded by ctx) until
// dispatch has caught up with the CommitLog's end, then rebuilds the
// next-queue-offset table from the ConsumeQueues, as recovery does: a
// slave's appended records moved the queues but not the table, and a put
// must continue each queue where the replicated records left it.
func (s *Store) BecomeMaster(ctx context.Context) error {
	s.roleMu.Lock()
	defer s.roleMu.Unlock()
	if !s.slave.Load() {
		return nil
	}
	if s.closed.Load() {
		return ErrClosed
	}
	end := s.log.MaxOffset()
	if err := s.disp.waitFor(ctx, end); err != nil {
		return fmt.Errorf("store: become master: dispatch to %d: %w", end, err)
	}
	for _, q := range s.cqs.Queues() {
		s.log.SetQueueOffset(q.Topic(), q.QueueID(), q.MaxOffset())
	}
	// A slave that never received a byte has no segment yet.
	s.prepareSegmentIfNone()
	s.slave.Store(false)
	s.cfg.Logger.Info("store: accepting puts (master)", "commitlogEnd", end)
	return nil
}

// prepareSegmentIfNone prepares the first segment of an empty log.
func (s *Store) prepareSegmentIfNone() {
	if len(s.log.Segments()) > 0 {
		return
	}
	if _, err := s.log.PrepareSegment(); err != nil {
		s.cfg.Logger.Error("store: cannot prepare the first commitlog segment; puts fail until it is prepared", "err", err)
	}
}
