package protocol

// rocketd's extension of the slave's metadata copy (rocketmq-spec.md §12.1;
// protocol doc.go "Slave metadata copy"). A rocketd slave adds
// SlaveSyncRequestHeader to GET_ALL_TOPIC_CONFIG,
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG, GET_ALL_CONSUMER_OFFSET and
// GET_ALL_DELAY_OFFSET: the version of the master's table it last applied.
// A rocketd master answers with SlaveSyncResponseHeader: the version its
// answer reflects and, when the slave is current, Unchanged with an empty
// body (consumer offsets: Delta with only the entries changed since). Java
// ignores both headers (unknown ext fields), so a Java slave gets full
// answers from rocketd and a rocketd slave gets full answers from Java; the
// slave tells a rocketd master by the presence of the response's version.
//
// A version is two int64s, Stamp and Count: a DataVersion's timestamp and
// counter (topics, subscription groups), the offset table's epoch and
// change count (consumer offsets), or 0 and the CRC32 of delayOffset.json
// (delay offsets).

// SlaveSyncRequestHeader carries the version of the master's table the
// slave holds; unset when it holds none (its first copy).
type SlaveSyncRequestHeader struct {
	KnownStamp Optional[int64] `ext:"rocketdKnownStamp"`
	KnownCount Optional[int64] `ext:"rocketdKnownCount"`
}

// Known reports the version the slave holds (ok=false: none).
func (h *SlaveSyncRequestHeader) Known() (stamp, count int64, ok bool) {
	if !h.KnownStamp.Set || !h.KnownCount.Set {
		return 0, 0, false
	}
	return h.KnownStamp.Value, h.KnownCount.Value, true
}

// SlaveSyncResponseHeader is a rocketd master's answer to a metadata copy
// request: the version of the table the answer reflects, and whether the
// body is empty because the slave is current (Unchanged) or holds only the
// entries changed since the slave's version (Delta).
type SlaveSyncResponseHeader struct {
	Stamp     Optional[int64] `ext:"rocketdStamp"`
	Count     Optional[int64] `ext:"rocketdCount"`
	Unchanged Optional[bool]  `ext:"rocketdUnchanged"`
	Delta     Optional[bool]  `ext:"rocketdDelta"`
}

// Version reports the version the answer reflects; ok=false when the
// master did not say (a Java master, or a rocketd one before this
// extension).
func (h *SlaveSyncResponseHeader) Version() (stamp, count int64, ok bool) {
	if !h.Stamp.Set || !h.Count.Set {
		return 0, 0, false
	}
	return h.Stamp.Value, h.Count.Value, true
}
