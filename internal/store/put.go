package store

import (
	"context"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/commitlog"
	"github.com/rocketd/rocketd/internal/store/segment"
)

// Put types are the CommitLog's; the store adds its own refusals.
type (
	PutStatus  = commitlog.PutStatus
	PutResult  = commitlog.PutResult
	PutOptions = commitlog.PutOptions
	// ReplicaWaiter is what a SYNC_MASTER's puts wait on (Config.Replica).
	ReplicaWaiter = commitlog.ReplicaWaiter
)

// ReplicaAdmitter is implemented by a Config.Replica that can refuse a
// put before it is written: Java's CommitLog.asyncPutMessage refuses a
// put that would wait for replicas (WAIT not false) with
// IN_SYNC_REPLICAS_NOT_ENOUGH when a controller-mode master's SyncStateSet
// is smaller than minInSyncReplicas, before the append. Admit answers
// PutOK to let the put go on.
type ReplicaAdmitter interface {
	Admit() PutStatus
}

// Buffer is a read of CommitLog bytes (ReadMessage, ReadRaw,
// LookMessageByOffset); its owner calls Release when done with it.
type Buffer = commitlog.Buffer

// The put statuses (RocketMQ's PutMessageStatus).
const (
	PutOK                  = commitlog.PutOK
	FlushDiskTimeout       = commitlog.FlushDiskTimeout
	FlushSlaveTimeout      = commitlog.FlushSlaveTimeout
	SlaveNotAvailable      = commitlog.SlaveNotAvailable
	ServiceNotAvailable    = commitlog.ServiceNotAvailable
	CreateMappedFileFailed = commitlog.CreateMappedFileFailed
	MessageIllegal         = commitlog.MessageIllegal
	PropertiesSizeExceeded = commitlog.PropertiesSizeExceeded
	OSPageCacheBusy        = commitlog.OSPageCacheBusy
	UnknownError           = commitlog.UnknownError
	// InSyncReplicasNotEnough: refused before the write (ReplicaAdmitter).
	InSyncReplicasNotEnough = commitlog.InSyncReplicasNotEnough
)

// RefusalReason says why puts are refused right now ("" when they are
// accepted), or why the last one was: the text for the
// SERVICE_NOT_AVAILABLE remark.
func (s *Store) RefusalReason() string {
	switch {
	case s.closed.Load():
		return "store: shut down"
	case s.slave.Load():
		return "store: this broker is a slave"
	case s.logicsErr.Load() != nil:
		return "store: dispatch stopped, puts refused until the store is reopened: " + (*s.logicsErr.Load()).Error()
	case s.log.Refusal() != "":
		return "store: " + s.log.Refusal()
	}
	if err := s.disp.blockedErr(); err != nil {
		return "store: dispatch blocked, puts refused until it resumes (retrying): " + err.Error()
	}
	// A next segment that cannot be prepared (a full disk) refuses puts
	// once the log has reached the end of its segment (a failed roll
	// leaves it there); before that the current segment still takes them.
	// The CREATE_MAPPED_FILE_FAILED remark quotes this reason too.
	if err := s.log.RollErr(); err != nil && s.log.MaxOffset()%s.log.SegmentSize() == 0 {
		if segment.IsDiskFull(err) {
			return "store: disk full, cannot create the next commitlog segment: " + err.Error()
		}
		return "store: cannot create the next commitlog segment: " + err.Error()
	}
	return ""
}

// admit applies the store's refusals (spec §14.6 step 4) and enters the put
// gate; the caller must call s.putGate.RUnlock when admitted. A full disk
// is the CommitLog's refusal (its space guard looks at the disk on the put
// path).
func (s *Store) admit(topic string, propsLen int) PutStatus {
	// A blocked dispatcher would leave what is stored now invisible to
	// consumers: refuse rather than acknowledge it.
	if s.closed.Load() || s.slave.Load() || s.logicsErr.Load() != nil || s.disp.blocked.Load() != nil {
		return ServiceNotAvailable
	}
	if len(topic) > message.MaxTopicLenV1 {
		return MessageIllegal
	}
	if propsLen > message.MaxPropertiesLen {
		return PropertiesSizeExceeded
	}
	s.putGate.RLock()
	// Close or BecomeSlave may have begun between the check and the lock.
	if s.closed.Load() || s.slave.Load() {
		s.putGate.RUnlock()
		return ServiceNotAvailable
	}
	return PutOK
}

// PutMessage stores one message (see commitlog.Log.Put for the record
// fields it fills in and the statuses). Refused with ServiceNotAvailable
// when closed, a slave, the disk is full or dispatch is blocked or
// stopped (see RefusalReason); MessageIllegal for a topic over 127 bytes;
// PropertiesSizeExceeded for properties over 32767 bytes.
func (s *Store) PutMessage(ctx context.Context, r *message.Record, opts PutOptions) PutResult {
	if st := s.admit(r.Topic, len(r.Properties)); st != PutOK {
		return PutResult{Status: st}
	}
	defer s.putGate.RUnlock()
	if st := s.admitReplicas(opts); st != PutOK {
		return PutResult{Status: st}
	}
	return s.log.Put(ctx, r, opts)
}

// PutMessages stores a batch (see commitlog.Log.PutBatch).
func (s *Store) PutMessages(ctx context.Context, recs []message.Record, opts PutOptions) PutResult {
	if len(recs) == 0 {
		return PutResult{Status: MessageIllegal}
	}
	props := 0
	for i := range recs {
		props = max(props, len(recs[i].Properties))
	}
	if st := s.admit(recs[0].Topic, props); st != PutOK {
		return PutResult{Status: st}
	}
	defer s.putGate.RUnlock()
	if st := s.admitReplicas(opts); st != PutOK {
		return PutResult{Status: st}
	}
	return s.log.PutBatch(ctx, recs, opts)
}

// admitReplicas asks the Replica, when it is a ReplicaAdmitter, whether a
// put that waits (opts.NoWait unset) may be written. A put that does not
// wait is never refused, as Java's needHandleHA skips WAIT=false.
func (s *Store) admitReplicas(opts PutOptions) PutStatus {
	if opts.NoWait {
		return PutOK
	}
	if s.admitter == nil {
		return PutOK
	}
	return s.admitter.Admit()
}

// delayLevels returns the configured delay levels.
func (s *Store) delayLevels() []time.Duration {
	if len(s.cfg.DelayLevels) > 0 {
		return s.cfg.DelayLevels
	}
	return commitlog.DefaultDelayLevels
}
