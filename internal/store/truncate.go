package store

import (
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/message"
)

// ErrTruncateMaster refuses TruncateTo on a store that takes puts.
var ErrTruncateMaster = errors.New("store: truncate: only a slave's store is cut (BecomeSlave first)")

// Epochs is the store's epoch file (epoch.go).
func (s *Store) Epochs() *Epochs { return s.epochs }

// TruncateTo cuts a running slave's store back to offset, a record
// boundary, before it replicates from a new master whose log shares
// only [0, offset) with this one (the consistent point of the two epoch
// files). The caller has stopped appending (the HA client). Nothing
// happens when offset is at or beyond the end (as Java's truncateFiles).
//
// In order, each step leaving a state recovery accepts if a crash ends
// the sequence there:
//
//  1. Dispatch is held between two rounds and the checkpoint's physic and
//     logics times are lowered to the store time of the last record kept
//     (0 when not known: recovery then scans from the first segment and
//     expects no particular record), and written: recovery never looks for
//     a cut record.
//  2. ConsumeQueue units at or beyond offset are cut. A crash now: the
//     log still has the records, recovery dispatches them again: the
//     store as before the call.
//  3. The CommitLog is cut at offset, the zeroed tail synced. A crash now:
//     recovery finds the log ending at offset: the store as after the
//     call, but for the epoch file.
//  4. Epoch entries starting at or beyond offset are removed (a crash
//     before: Open removes the entries that start past the log's end).
//  5. Dispatch resumes from offset and the next-queue-offset table is
//     rebuilt from the queues.
//
// The key index is not cut (Java's is not either): its entries at or
// beyond offset are candidates pointing at other records, or none, which
// the key check of a query (the client's, as in Java) drops.
func (s *Store) TruncateTo(offset int64) error {
	s.roleMu.Lock()
	defer s.roleMu.Unlock()
	switch {
	case s.closed.Load():
		return ErrClosed
	case !s.slave.Load():
		return ErrTruncateMaster
	}
	end := s.log.MaxOffset()
	if offset >= end {
		return nil
	}
	if first := s.log.MinOffset(); offset < first {
		return fmt.Errorf("store: truncate to %d: below the CommitLog's first offset %d", offset, first)
	}
	// A record or a segment's end-of-file blank must start at offset.
	_, buf, err := s.log.ReadRecordAt(offset)
	switch {
	case errors.Is(err, message.ErrBlank):
	case err != nil:
		return fmt.Errorf("store: truncate to %d: not a record boundary: %w", offset, err)
	default:
		buf.Release()
	}

	// 1.
	s.disp.runMu.Lock()
	defer s.disp.runMu.Unlock()
	if err := s.disp.err(); err != nil {
		return fmt.Errorf("store: truncate to %d: dispatch stopped: %w", offset, err)
	}
	if s.disp.staged {
		return fmt.Errorf("store: truncate to %d: dispatch is retrying a failed write: %w", offset, s.disp.blockedErr())
	}
	ts, ok := s.disp.timestampAt(offset)
	if !ok {
		ts = 0
	}
	// The flush loop may not advance the checkpoint from the positions
	// before the cut until dispatch is rewound (step 5).
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	st := s.ckpt.State()
	s.ckpt.SetPhysicMsgTimestamp(min(st.PhysicMsgTimestamp, ts))
	s.ckpt.SetLogicsMsgTimestamp(min(st.LogicsMsgTimestamp, ts))
	if st.HasResume && st.ResumeRecord >= offset {
		s.ckpt.ClearResumeRecord() // it names a record the cut removes
	}
	if err = s.ckpt.Flush(); err != nil {
		return fmt.Errorf("store: truncate to %d: %w", offset, err)
	}
	// 2.
	if err := s.cqs.Truncate(offset); err != nil {
		return fmt.Errorf("store: truncate to %d: consume queues: %w", offset, err)
	}
	// 3.
	if err := s.log.Truncate(offset); err != nil {
		return fmt.Errorf("store: truncate to %d: %w", offset, err)
	}
	// 4.
	if err := s.epochs.TruncateSuffixByOffset(offset); err != nil {
		return fmt.Errorf("store: truncate to %d: %w", offset, err)
	}
	// 5.
	s.disp.rewind(offset, ts)
	for _, q := range s.cqs.Queues() {
		s.log.SetQueueOffset(q.Topic(), q.QueueID(), q.MaxOffset())
	}
	s.disp.svc.Kick()
	s.cfg.Logger.Warn("store: truncated", "from", end, "to", offset)
	return nil
}

// rewind moves the dispatched position back to offset (a cut log) and
// forgets the positions beyond it. REQUIRES: runMu held.
func (d *dispatcher) rewind(offset, ts int64) {
	d.progressMu.Lock()
	defer d.progressMu.Unlock()
	if d.next.Load() <= offset {
		return
	}
	d.next.Store(offset)
	d.lastTs.Store(ts)
	d.nSamples = 0
	// The last record before the cut is not known here: no resume record
	// until dispatch moves on.
	d.lastRecord, d.stagedLast = -1, -1
	if ts != 0 {
		d.samples[0] = positionSample{offset, ts, -1}
		d.nSamples = 1
	}
}
