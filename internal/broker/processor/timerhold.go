package processor

import (
	"fmt"
	"time"

	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// holdTimer parks a message with timer properties in the timer topic
// (spec §9.3, see package timer). It returns Success, or the refusal
// (MESSAGE_ILLEGAL, as Java maps WHEEL_TIMER_NOT_ENABLE and
// WHEEL_TIMER_MSG_ILLEGAL) with its remark.
func (s *sendFamily) holdTimer(rec *message.Record) (int32, string) {
	if !timer.MayHold(rec.Properties) {
		return protocol.Success, ""
	}
	policy := timer.Policy{
		Enabled:  s.live().TimerWheelEnable,
		MaxDelay: time.Duration(s.live().TimerMaxDelaySec) * time.Second,
	}
	switch st := timer.Hold(rec, time.Now(), policy); st {
	case timer.Disabled:
		return protocol.MessageIllegal, "accurate timer message is not enabled, timerWheelEnable is false"
	case timer.Illegal:
		return protocol.MessageIllegal, fmt.Sprintf(
			"timer message illegal: bad timer property or delay beyond timerMaxDelaySec %d", s.live().TimerMaxDelaySec)
	}
	return protocol.Success, ""
}
