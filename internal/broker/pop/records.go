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
func (a *AckMsg) uniqKey() string {
	if a.AckOffsetList != nil {
		return a.Topic + keySplit + strconv.Itoa(int(a.QueueID)) + keySplit + javaList(a.AckOffsetList) + keySplit +
			a.ConsumerGroup + keySplit + strconv.FormatInt(a.PopTime, 10) + keySplit + batchAckTag
	}
	return a.Topic + keySplit + strconv.Itoa(int(a.QueueID)) + keySplit + strconv.FormatInt(a.AckOffset, 10) + keySplit +
		a.ConsumerGroup + keySplit + strconv.FormatInt(a.PopTime, 10) + keySplit + a.BrokerName + keySplit + ackTag
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
