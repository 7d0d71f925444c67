package timer

import (
	"strconv"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/message"
)

// Topic holds timer messages until delivery (RocketMQ 5's system topic);
// every held message goes to queue 0.
const Topic = "rmq_sys_wheel_timer"

// Policy is the send path's part of the timer configuration.
type Policy struct {
	// Enabled is timerWheelEnable: when false timer messages are refused.
	Enabled bool
	// MaxDelay is timerMaxDelaySec: a delivery time further away is refused.
	MaxDelay time.Duration
}

// HoldStatus is what Hold did with a message (an enum, not an error: the
// send path maps it to a response code).
type HoldStatus int

const (
	// NotTimer: no timer property (or a DELAY level, which wins, or a time
	// already reached): store the message as it is.
	NotTimer HoldStatus = iota
	// Held: the record was rewritten to Topic queue 0 with TIMER_OUT_MS,
	// REAL_TOPIC and REAL_QID.
	Held
	// Disabled: timer properties but timerWheelEnable=false
	// (Java's WHEEL_TIMER_NOT_ENABLE).
	Disabled
	// Illegal: an unparsable timer property or a delay beyond MaxDelay
	// (Java's WHEEL_TIMER_MSG_ILLEGAL).
	Illegal
)

var holdStatusNames = [...]string{NotTimer: "NOT_TIMER", Held: "HELD", Disabled: "WHEEL_TIMER_NOT_ENABLE", Illegal: "WHEEL_TIMER_MSG_ILLEGAL"}

// String returns the status name.
func (s HoldStatus) String() string {
	if s >= 0 && int(s) < len(holdStatusNames) {
		return holdStatusNames[s]
	}
	return "HoldStatus(" + strconv.Itoa(int(s)) + ")"
}

// Hold parks a message that carries one of RocketMQ 5's timer properties
// (TIMER_DELIVER_MS absolute epoch ms, else TIMER_DELAY_SEC, else
// TIMER_DELAY_MS, relative to now) in Topic (spec §9.3). A DELAY level wins:
// the timer properties are then removed and the level path is used.
// Unlike RocketMQ the delivery time is not rounded down to the precision:
// a message is never delivered before the time it asked for.
func Hold(rec *message.Record, now time.Time, p Policy) HoldStatus {
	deliverMs, found, ok := deliverTime(rec.Properties, now.UnixMilli())
	if !found {
		return NotTimer
	}
	if lvl, set := message.Property(rec.Properties, message.PropertyDelayTimeLevel); set && lvl != "" && lvl != "0" {
		rec.Properties = stripTimer(rec.Properties)
		return NotTimer
	}
	if !p.Enabled {
		return Disabled
	}
	if !ok {
		return Illegal
	}
	nowMs := now.UnixMilli()
	if deliverMs <= nowMs {
		return NotTimer // due already: an ordinary message
	}
	if deliverMs-nowMs > p.MaxDelay.Milliseconds() {
		return Illegal
	}
	props := message.SetProperty(rec.Properties, message.PropertyTimerOutMS, strconv.FormatInt(deliverMs, 10))
	props = message.SetProperty(props, message.PropertyRealTopic, rec.Topic)
	props = message.SetProperty(props, message.PropertyRealQueueID, strconv.Itoa(int(rec.QueueID)))
	rec.Properties = props
	rec.Topic, rec.QueueID = Topic, 0
	return Held
}

// timerKeyPrefix begins each of the three timer property names.
const timerKeyPrefix = "TIMER_"

// MayHold reports whether props may carry a timer property: when false,
// Hold would answer NotTimer, and the send path skips it, its three
// property scans and its clock read (most messages carry no timer).
func MayHold(props string) bool { return strings.Contains(props, timerKeyPrefix) }

// deliverTime reads the timer properties: found when one is present, ok
// when it parses.
func deliverTime(props string, nowMs int64) (deliverMs int64, found, ok bool) {
	if v, set := message.Property(props, message.PropertyTimerDeliverMS); set {
		ms, err := strconv.ParseInt(v, 10, 64)
		return ms, true, err == nil
	}
	if v, set := message.Property(props, message.PropertyTimerDelaySec); set {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil || sec < 0 || sec > (1<<62)/1000 {
			return 0, true, false
		}
		return nowMs + sec*1000, true, true
	}
	if v, set := message.Property(props, message.PropertyTimerDelayMS); set {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 || ms > 1<<62 {
			return 0, true, false
		}
		return nowMs + ms, true, true
	}
	return 0, false, false
}

func stripTimer(props string) string {
	props = message.DeleteProperty(props, message.PropertyTimerDeliverMS)
	props = message.DeleteProperty(props, message.PropertyTimerDelaySec)
	return message.DeleteProperty(props, message.PropertyTimerDelayMS)
}
