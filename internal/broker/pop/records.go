package pop

import (
	"encoding/json"
	"strconv"
	"strings"
)

// CheckPoint is Java's PopCheckPoint: the messages one pop handed out of
// one queue, written as a "ck" record into the revive log (doc.go).
type CheckPoint struct {
	StartOffset   int64   `json:"so"`
	PopTime       int64   `json:"pt"`
	InvisibleTime int64   `json:"it"`
	BitMap        int32   `json:"bm"`
	Num           int8    `json:"n"`
	QueueID       int32   `json:"q"`
	Topic         string  `json:"t"`
	CID           string  `json:"c"`
	ReviveOffset  int64   `json:"ro"`
	OffsetDiff    []int32 `json:"d"`
	BrokerName    string  `json:"bn"`
	RePutTimes    string  `json:"rp,omitempty"`
	// ReviveTime is written as fastjson writes getReviveTime(); read back
	// it is ignored (PopTime+InvisibleTime decides).
	ReviveTime int64 `json:"reviveTime"`
}

// Revive is when the check point's unacked messages become visible again.
func (c *CheckPoint) Revive() int64 { return c.PopTime + c.InvisibleTime }

// indexOf is PopCheckPoint.indexOfAck: the bit of a queue offset, or -1.
func (c *CheckPoint) indexOf(offset int64) int {
	if offset < c.StartOffset {
		return -1
	}
	if len(c.OffsetDiff) == 0 { // an old check point: consecutive offsets
		if offset-c.StartOffset < int64(c.Num) {
			return int(offset - c.StartOffset)
		}
		return -1
	}
	for i, d := range c.OffsetDiff {
		if int64(d) == offset-c.StartOffset {
			return i
		}
	}
	return -1
}

// offsetAt is PopCheckPoint.ackOffsetByIndex.
func (c *CheckPoint) offsetAt(i int) int64 {
	if len(c.OffsetDiff) == 0 {
		return c.StartOffset + int64(i)
	}
	return c.StartOffset + int64(c.OffsetDiff[i])
}

// key identifies the check point an ack belongs to: Java's
// genCkUniqueId without the tag (topic@queueId@startOffset@group@popTime@brokerName).
func (c *CheckPoint) key() string {
	return ckKey(c.Topic, c.QueueID, c.StartOffset, c.CID, c.PopTime, c.BrokerName)
}

func ckKey(topic string, queueID int32, start int64, group string, popTime int64, broker string) string {
	return topic + keySplit + strconv.Itoa(int(queueID)) + keySplit + strconv.FormatInt(start, 10) + keySplit +
		group + keySplit + strconv.FormatInt(popTime, 10) + keySplit + broker
}

// AckMsg is Java's AckMsg ("ack" record) and, with AckOffsetList,
// BatchAckMsg ("bAck").
type AckMsg struct {
	AckOffset     int64   `json:"ao"`
	StartOffset   int64   `json:"so"`
	ConsumerGroup string  `json:"c"`
	Topic         string  `json:"t"`
	QueueID       int32   `json:"q"`
	PopTime       int64   `json:"pt"`
	BrokerName    string  `json:"bn"`
	AckOffsetList []int64 `json:"aol,omitempty"`
}

func (a *AckMsg) key() string {
	return ckKey(a.Topic, a.QueueID, a.StartOffset, a.ConsumerGroup, a.PopTime, a.BrokerName)
}

// uniqKey is Java's genAckUniqueId / genBatchAckUniqueId (the record's
// UNIQ_KEY).
func (a *AckMsg) uniqKey() string { return string(a.appendUniqKey(nil)) }

func (a *AckMsg) appendUniqKey(dst []byte) []byte {
	dst = append(dst, a.Topic...)
	dst = append(dst, keySplit...)
	dst = strconv.AppendInt(dst, int64(a.QueueID), 10)
	dst = append(dst, keySplit...)
	if a.AckOffsetList != nil {
		dst = append(dst, javaList(a.AckOffsetList)...)
	} else {
		dst = strconv.AppendInt(dst, a.AckOffset, 10)
	}
	dst = append(dst, keySplit...)
	dst = append(dst, a.ConsumerGroup...)
	dst = append(dst, keySplit...)
	dst = strconv.AppendInt(dst, a.PopTime, 10)
	dst = append(dst, keySplit...)
	if a.AckOffsetList != nil {
		return append(dst, batchAckTag...)
	}
	dst = append(dst, a.BrokerName...)
	dst = append(dst, keySplit...)
	return append(dst, ackTag...)
}

func marshalCK(ck *CheckPoint) []byte {
	ck.ReviveTime = ck.Revive()
	b, _ := json.Marshal(ck) // plain fields: cannot fail
	return b
}

// javaList renders a List<Long> as Java's toString: "[1, 2, 3]".
func javaList(v []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, n := range v {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(n, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// appendAckJSON appends a's body exactly as encoding/json writes it
// (field order, omitempty aol) without reflection: one ack record is
// written per acknowledged message.
func appendAckJSON(dst []byte, a *AckMsg) []byte {
	dst = append(dst, `{"ao":`...)
	dst = strconv.AppendInt(dst, a.AckOffset, 10)
	dst = append(dst, `,"so":`...)
	dst = strconv.AppendInt(dst, a.StartOffset, 10)
	dst = append(dst, `,"c":`...)
	dst = appendJSONString(dst, a.ConsumerGroup)
	dst = append(dst, `,"t":`...)
	dst = appendJSONString(dst, a.Topic)
	dst = append(dst, `,"q":`...)
	dst = strconv.AppendInt(dst, int64(a.QueueID), 10)
	dst = append(dst, `,"pt":`...)
	dst = strconv.AppendInt(dst, a.PopTime, 10)
	dst = append(dst, `,"bn":`...)
	dst = appendJSONString(dst, a.BrokerName)
	if len(a.AckOffsetList) > 0 {
		dst = append(dst, `,"aol":[`...)
		for i, o := range a.AckOffsetList {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, o, 10)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendJSONString appends s as encoding/json quotes it: printable ASCII
// other than the characters it escapes is copied, anything else goes
// through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string: cannot fail
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// ackView is an ack record's body as parseAckJSON reads it: the strings
// alias the body.
type ackView struct {
	ackOffset, startOffset, popTime int64
	queueID                         int32
	group, topic, broker            []byte
	offsets                         []int64 // aol; nil for a single ack
}

// appendKey appends the key of the check point the ack belongs to (as
// AckMsg.key).
func (v *ackView) appendKey(dst []byte) []byte {
	dst = append(dst, v.topic...)
	dst = append(dst, keySplit...)
	dst = strconv.AppendInt(dst, int64(v.queueID), 10)
	dst = append(dst, keySplit...)
	dst = strconv.AppendInt(dst, v.startOffset, 10)
	dst = append(dst, keySplit...)
	dst = append(dst, v.group...)
	dst = append(dst, keySplit...)
	dst = strconv.AppendInt(dst, v.popTime, 10)
	dst = append(dst, keySplit...)
	return append(dst, v.broker...)
}

// parseAckJSON reads an ack body in the exact form appendAckJSON writes
// (strings without escapes or non-ASCII bytes) without reflection; ok is
// false for anything else, which encoding/json then reads. offsets reuses
// v.offsets' array.
func parseAckJSON(b []byte, v *ackView) (ok bool) {
	p := ackParser{b: b, ok: true}
	p.lit(`{"ao":`)
	v.ackOffset = p.int()
	p.lit(`,"so":`)
	v.startOffset = p.int()
	p.lit(`,"c":`)
	v.group = p.str()
	p.lit(`,"t":`)
	v.topic = p.str()
	p.lit(`,"q":`)
	q := p.int()
	v.queueID = int32(q)
	p.lit(`,"pt":`)
	v.popTime = p.int()
	p.lit(`,"bn":`)
	v.broker = p.str()
	offsets := v.offsets[:0]
	v.offsets = nil
	if p.ok && p.i < len(b) && b[p.i] == ',' {
		p.lit(`,"aol":[`)
		for p.ok && p.i < len(b) && b[p.i] != ']' {
			if len(offsets) > 0 {
				p.lit(",")
			}
			offsets = append(offsets, p.int())
		}
		p.lit("]")
		if len(offsets) == 0 {
			return false // encoding/json omits an empty aol
		}
		v.offsets = offsets
	}
	p.lit("}")
	return p.ok && p.i == len(b) && int64(v.queueID) == q
}

type ackParser struct {
	b  []byte
	i  int
	ok bool
}

func (p *ackParser) lit(s string) {
	if !p.ok || len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		p.ok = false
		return
	}
	p.i += len(s)
}

func (p *ackParser) int() int64 {
	if !p.ok {
		return 0
	}
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(p.b[p.i:j]), 10, 64)
	if err != nil || (j-p.i > 1 && p.b[p.i] == '0') || (j-p.i > 1 && p.b[p.i] == '-' && p.b[p.i+1] == '0') {
		p.ok = false // not a number, or not as encoding/json writes it
		return 0
	}
	p.i = j
	return v
}

// str reads a quoted string of the bytes appendJSONString copies as is
// (no escapes, no non-ASCII); the result aliases the body.
func (p *ackParser) str() []byte {
	if !p.ok || p.i >= len(p.b) || p.b[p.i] != '"' {
		p.ok = false
		return nil
	}
	j := p.i + 1
	for j < len(p.b) && p.b[j] != '"' {
		if c := p.b[j]; c < 0x20 || c > 0x7e || c == '\\' || c == '<' || c == '>' || c == '&' {
			p.ok = false
			return nil
		}
		j++
	}
	if j >= len(p.b) {
		p.ok = false
		return nil
	}
	s := p.b[p.i+1 : j]
	p.i = j + 1
	return s
}
