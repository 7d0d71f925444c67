package commitlog

import "strconv"

// PutStatus is the outcome of a put: RocketMQ's PutMessageStatus. It is a
// protocol status, not an error: the broker maps it to a response code.
type PutStatus int

// The statuses, in RocketMQ's order.
const (
	// PutOK: stored (and flushed/replicated when the put waited for it).
	PutOK PutStatus = iota
	// FlushDiskTimeout: stored, but the sync flush did not confirm it within
	// SyncFlushTimeout (or failed: the log is then sticky-failed).
	FlushDiskTimeout
	// FlushSlaveTimeout: stored, the slave did not confirm it in time.
	FlushSlaveTimeout
	// SlaveNotAvailable: stored, no slave to replicate to.
	SlaveNotAvailable
	// ServiceNotAvailable: not stored; the log is closed, failed (a write or
	// sync error made it refuse all further puts), the disk is full, or the
	// write of this record failed and it was taken back.
	ServiceNotAvailable
	// CreateMappedFileFailed: not stored; the next segment could not be created.
	CreateMappedFileFailed
	// MessageIllegal: not stored; topic too long, body or record too large.
	MessageIllegal
	// PropertiesSizeExceeded: not stored; property string over 32767 bytes.
	PropertiesSizeExceeded
	// OSPageCacheBusy: not stored; the put lock has been held too long.
	OSPageCacheBusy
	// UnknownError: not stored; an unexpected failure.
	UnknownError
	// InSyncReplicasNotEnough: not stored; a controller-mode master's
	// SyncStateSet is smaller than minInSyncReplicas, so the put was
	// refused before it was written (Java's CommitLog.asyncPutMessage).
	InSyncReplicasNotEnough
)

var putStatusNames = [...]string{
	PutOK:                   "PUT_OK",
	FlushDiskTimeout:        "FLUSH_DISK_TIMEOUT",
	FlushSlaveTimeout:       "FLUSH_SLAVE_TIMEOUT",
	SlaveNotAvailable:       "SLAVE_NOT_AVAILABLE",
	ServiceNotAvailable:     "SERVICE_NOT_AVAILABLE",
	CreateMappedFileFailed:  "CREATE_MAPPED_FILE_FAILED",
	MessageIllegal:          "MESSAGE_ILLEGAL",
	PropertiesSizeExceeded:  "PROPERTIES_SIZE_EXCEEDED",
	OSPageCacheBusy:         "OS_PAGECACHE_BUSY",
	UnknownError:            "UNKNOWN_ERROR",
	InSyncReplicasNotEnough: "IN_SYNC_REPLICAS_NOT_ENOUGH",
}

// String returns the Java enum name.
func (s PutStatus) String() string {
	if s >= 0 && int(s) < len(putStatusNames) {
		return putStatusNames[s]
	}
	return "PutStatus(" + strconv.Itoa(int(s)) + ")"
}

// Stored reports whether the message was written to the log (PUT_OK or a
// flush/replication shortfall), as opposed to refused.
func (s PutStatus) Stored() bool {
	return s == PutOK || s == FlushDiskTimeout || s == FlushSlaveTimeout || s == SlaveNotAvailable
}

// PutResult describes a put. For a batch, WroteOffset/QueueOffset are the
// first record's, WroteBytes the whole batch, MsgID the comma-separated
// offset ids and MsgNum the number of records. Only Status is meaningful
// when the message was not stored.
type PutResult struct {
	Status         PutStatus
	WroteOffset    int64 // CommitLog offset of the (first) record
	WroteBytes     int32 // bytes appended
	MsgID          string
	StoreTimestamp int64 // ms
	QueueOffset    int64 // logical offset in the (first) record's queue
	MsgNum         int32
}
