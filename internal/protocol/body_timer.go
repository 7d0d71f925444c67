package protocol

import (
	"encoding/binary"
	"fmt"
)

// TimerCheckpointLen is the size of GET_TIMER_CHECK_POINT's body.
const TimerCheckpointLen = 56

// TimerCheckpoint is GET_TIMER_CHECK_POINT's body, Java's
// TimerCheckpoint.encode: seven big-endian int64s in field order.
type TimerCheckpoint struct {
	LastReadTimeMs         int64 // every timer message due before it was delivered
	LastTimerLogFlushPos   int64 // Java's timerlog flush position
	LastTimerQueueOffset   int64 // next offset of rmq_sys_wheel_timer to read
	MasterTimerQueueOffset int64 // the master's LastTimerQueueOffset (a slave's copy)
	StateVersion           int64 // DataVersion.stateVersion
	Timestamp              int64 // DataVersion.timestamp (ms)
	Counter                int64 // DataVersion.counter
}

// Encode returns the 56-byte body.
func (c TimerCheckpoint) Encode() []byte {
	b := make([]byte, 0, TimerCheckpointLen)
	for _, v := range []int64{c.LastReadTimeMs, c.LastTimerLogFlushPos, c.LastTimerQueueOffset,
		c.MasterTimerQueueOffset, c.StateVersion, c.Timestamp, c.Counter} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	return b
}

// DecodeTimerCheckpoint parses a body; like Java's decode it accepts the
// older 32-byte form without the data version.
func DecodeTimerCheckpoint(b []byte) (TimerCheckpoint, error) {
	if len(b) != 32 && len(b) != TimerCheckpointLen {
		return TimerCheckpoint{}, fmt.Errorf("protocol: timer checkpoint of %d bytes, want 32 or %d", len(b), TimerCheckpointLen)
	}
	v := make([]int64, 7)
	for i := 0; i*8 < len(b); i++ {
		v[i] = int64(binary.BigEndian.Uint64(b[i*8:]))
	}
	return TimerCheckpoint{v[0], v[1], v[2], v[3], v[4], v[5], v[6]}, nil
}

// TimerMetric is one topic's entry of GET_TIMER_METRICS: timer messages
// held and not yet delivered, and when that last changed (ms).
type TimerMetric struct {
	Count     int64 `json:"count"`
	TimeStamp int64 `json:"timeStamp"`
}

// TimerMetrics is GET_TIMER_METRICS's body, Java's
// TimerMetrics.TimerMetricsSerializeWrapper.
type TimerMetrics struct {
	DataVersion DataVersion            `json:"dataVersion"`
	TimingCount map[string]TimerMetric `json:"timingCount"`
}
