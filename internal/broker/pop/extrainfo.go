package pop

import (
	"fmt"
	"strconv"
	"strings"
)

// ExtraInfo is a message's receipt handle as Java's ExtraInfoUtil builds
// it (the POP_CK property the client sets on each popped message and
// sends back in ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME): eight
// fields separated by one space, see doc.go.
type ExtraInfo struct {
	CkQueueOffset int64 // the check point's start offset (the pop's first offset in the queue)
	PopTime       int64 // ms
	InvisibleTime int64 // ms
	ReviveQid     int32 // revive queue of the check point; OrderReviveQueue for an orderly pop
	Mark          string
	BrokerName    string
	QueueID       int32
	QueueOffset   int64 // the message's own offset; -1 when the handle has only seven fields
}

// String renders the eight-field form.
func (e ExtraInfo) String() string {
	return fmt.Sprintf("%d %d %d %d %s %s %d %d", e.CkQueueOffset, e.PopTime, e.InvisibleTime, e.ReviveQid,
		e.Mark, e.BrokerName, e.QueueID, e.QueueOffset)
}

// SplitFields splits s at single spaces into f and returns how many
// fields it filled; text beyond len(f) fields is dropped, as Java's
// receipt-handle decoders ignore extra fields. It does not allocate.
func SplitFields(s string, f []string) int {
	n, rest := 0, s
	for n < len(f) {
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			f[n] = rest
			return n + 1
		}
		f[n], rest = rest[:i], rest[i+1:]
		n++
	}
	return n
}

// ParseExtraInfo reads a receipt handle. Java's accessors need at least
// the first field for the one they read; the processors read fields 1-4
// and 6, so fewer than seven fields is refused. Fields beyond the eighth
// are ignored. It allocates nothing but its error (one call per ack).
func ParseExtraInfo(s string) (ExtraInfo, error) {
	var f [8]string
	n := SplitFields(s, f[:])
	if n < 7 {
		return ExtraInfo{}, fmt.Errorf("extraInfo %q: %d fields, want 7 or 8", s, strings.Count(s, " ")+1)
	}
	var e ExtraInfo
	var err error
	num := func(i int) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(f[i], 10, 64)
		return v
	}
	e.CkQueueOffset, e.PopTime, e.InvisibleTime = num(0), num(1), num(2)
	e.ReviveQid = int32(num(3))
	e.Mark, e.BrokerName = f[4], f[5]
	e.QueueID = int32(num(6))
	e.QueueOffset = -1
	if n > 7 {
		e.QueueOffset = num(7)
	}
	if err != nil {
		return ExtraInfo{}, fmt.Errorf("extraInfo %q: %w", s, err)
	}
	return e, nil
}

// offsetInfo builds the response header's startOffsetInfo, msgOffsetInfo
// and orderCountInfo: entries "mark queueId value" joined by ";".
type offsetInfo struct{ start, msg, order strings.Builder }

func (o *offsetInfo) add(topic string, queueID int32, start int64, offsets []int64) {
	sep(&o.start)
	fmt.Fprintf(&o.start, "%s %d %d", topicMark(topic), queueID, start)
	sep(&o.msg)
	fmt.Fprintf(&o.msg, "%s %d ", topicMark(topic), queueID)
	for i, off := range offsets {
		if i > 0 {
			o.msg.WriteByte(',')
		}
		o.msg.WriteString(strconv.FormatInt(off, 10))
	}
}

// addOrderCount records how often a queue offset was handed out before
// (Java's buildQueueOffsetOrderCountInfo: "mark qo<queueId>%<offset> n").
func (o *offsetInfo) addOrderCount(topic string, queueID int32, offset int64, count int) {
	sep(&o.order)
	fmt.Fprintf(&o.order, "%s qo%d%%%d %d", topicMark(topic), queueID, offset, count)
}

func sep(b *strings.Builder) {
	if b.Len() > 0 {
		b.WriteByte(';')
	}
}
