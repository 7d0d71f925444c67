package pop

import (
	"fmt"
	"math/bits"

	"github.com/rocketd/rocketd/internal/protocol"
)

// Status is a processor outcome: a response code and its remark.
type Status struct {
	Code   int32
	Remark string
}

var success = Status{Code: protocol.Success}

// checkQueue is the processors' topic, queue and offset checks (ACK and
// CHANGE_INVISIBLE_TIME); offsetEnd is the exclusive bound over the max
// offset (ack accepts offset == max, change-invisible does not).
func (s *Service) checkQueue(topic string, qid int32, offset int64, ackBound bool, remote string) (Status, bool) {
	tc, ok := s.cfg.Topics.Get(topic)
	if !ok {
		return Status{protocol.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", topic)}, false
	}
	if qid < 0 || qid >= tc.ReadQueueNums {
		return Status{protocol.MessageIllegal, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			qid, topic, tc.ReadQueueNums, remote)}, false
	}
	minOff, maxOff := s.cfg.Store.MinOffset(topic, qid), s.cfg.Store.MaxOffset(topic, qid)
	if offset < minOff || offset > maxOff || (!ackBound && offset == maxOff) {
		return Status{protocol.NoMessage, fmt.Sprintf("offset is illegal, key:%s@%d, commit:%d, store:%d~%d",
			topic, qid, offset, minOff, maxOff)}, false
	}
	return success, true
}

// Ack serves ACK_MESSAGE (AckMessageProcessor.appendAck).
func (s *Service) Ack(h *protocol.AckMessageRequestHeader, remote string) Status {
	if st, ok := s.checkQueue(h.Topic, h.QueueID, h.Offset, true, remote); !ok {
		return st
	}
	ei, err := ParseExtraInfo(h.ExtraInfo)
	if err != nil {
		return Status{protocol.SystemError, err.Error()}
	}
	if ei.ReviveQid == OrderReviveQueue {
		return s.ackOrderly(h.Topic, h.ConsumerGroup, h.QueueID, h.Offset, ei.PopTime, remote)
	}
	if ei.ReviveQid < 0 || ei.ReviveQid >= s.cfg.ReviveQueueNum {
		return Status{protocol.MessageIllegal, fmt.Sprintf("extraInfo %q: reviveQid %d is not one of the %d revive queues", h.ExtraInfo, ei.ReviveQid, s.cfg.ReviveQueueNum)}
	}
	a := &AckMsg{
		AckOffset: h.Offset, StartOffset: ei.CkQueueOffset, ConsumerGroup: h.ConsumerGroup, Topic: h.Topic,
		QueueID: h.QueueID, PopTime: ei.PopTime, BrokerName: ei.BrokerName,
	}
	if err := s.putAck(a, ei.ReviveQid); err != nil {
		return Status{protocol.SystemError, "ack not stored: " + err.Error()}
	}
	return success
}

// BatchAck serves BATCH_ACK_MESSAGE: one "bAck" record per entry.
func (s *Service) BatchAck(body *protocol.BatchAckMessageRequestBody, remote string) Status {
	if body == nil || len(body.Acks) == 0 {
		return Status{Code: protocol.NoMessage}
	}
	for _, b := range body.Acks {
		topic, ok := RealTopic(b.Topic, b.ConsumerGroup, b.Retry)
		if !ok {
			return Status{protocol.SystemError, fmt.Sprintf("batch ack: retry mark %q: want 0, 1 or 2", b.Retry)}
		}
		if _, ok := s.cfg.Topics.Get(topic); !ok {
			continue // Java: min/max offset -1, the entry is skipped
		}
		minOff, maxOff := s.cfg.Store.MinOffset(topic, b.QueueID), s.cfg.Store.MaxOffset(topic, b.QueueID)
		var offsets []int64
		for i, by := range b.BitSet {
			for x := by; x != 0; x &= x - 1 {
				off := b.StartOffset + int64(i*8+bits.TrailingZeros8(x))
				if off >= minOff && off <= maxOff {
					offsets = append(offsets, off)
				}
			}
		}
		if b.ReviveQueueID == OrderReviveQueue {
			for _, off := range offsets {
				if st := s.ackOrderly(topic, b.ConsumerGroup, b.QueueID, off, b.PopTime, remote); st.Code != protocol.Success {
					return st
				}
			}
			continue
		}
		if len(offsets) == 0 {
			continue
		}
		if b.ReviveQueueID < 0 || b.ReviveQueueID >= s.cfg.ReviveQueueNum {
			return Status{protocol.MessageIllegal, fmt.Sprintf("batch ack: reviveQid %d is not one of the %d revive queues", b.ReviveQueueID, s.cfg.ReviveQueueNum)}
		}
		a := &AckMsg{
			AckOffset: -1, StartOffset: b.StartOffset, ConsumerGroup: b.ConsumerGroup, Topic: topic,
			QueueID: b.QueueID, PopTime: b.PopTime, BrokerName: body.BrokerName, AckOffsetList: offsets,
		}
		if err := s.putAck(a, b.ReviveQueueID); err != nil {
			return Status{protocol.SystemError, "batch ack not stored: " + err.Error()}
		}
	}
	return success
}

// ChangeInvisible serves CHANGE_MESSAGE_INVISIBLETIME: a new one-message
// check point from now, then an ack of the message in its old one.
func (s *Service) ChangeInvisible(h *protocol.ChangeInvisibleTimeRequestHeader, remote string) (protocol.ChangeInvisibleTimeResponseHeader, Status) {
	var rh protocol.ChangeInvisibleTimeResponseHeader
	if st, ok := s.checkQueue(h.Topic, h.QueueID, h.Offset, false, remote); !ok {
		return rh, st
	}
	ei, err := ParseExtraInfo(h.ExtraInfo)
	if err != nil {
		return rh, Status{protocol.SystemError, err.Error()}
	}
	if ei.ReviveQid == OrderReviveQueue {
		return s.changeInvisibleOrderly(h, ei)
	}
	if ei.ReviveQid < 0 || ei.ReviveQid >= s.cfg.ReviveQueueNum {
		return rh, Status{protocol.MessageIllegal, fmt.Sprintf("extraInfo %q: reviveQid %d is not one of the %d revive queues", h.ExtraInfo, ei.ReviveQid, s.cfg.ReviveQueueNum)}
	}
	now := s.cfg.Now().UnixMilli()
	if h.Offset == ei.CkQueueOffset && now <= ei.PopTime {
		// The new check point would have the old one's key (start
		// offset and pop time; a consumer failing a message in the
		// millisecond of its pop), and the ack below would resolve both:
		// the message would never come back.
		now = ei.PopTime + 1
	}
	ck := &CheckPoint{
		StartOffset: h.Offset, PopTime: now, InvisibleTime: h.InvisibleTime, Num: 1, QueueID: h.QueueID,
		Topic: h.Topic, CID: h.ConsumerGroup, BrokerName: ei.BrokerName, OffsetDiff: []int32{0},
	}
	if err := s.putCheckPoint(ck, ei.ReviveQid); err != nil {
		return rh, Status{protocol.SystemError, "check point not stored: " + err.Error()}
	}
	a := &AckMsg{
		AckOffset: h.Offset, StartOffset: ei.CkQueueOffset, ConsumerGroup: h.ConsumerGroup, Topic: h.Topic,
		QueueID: h.QueueID, PopTime: ei.PopTime, BrokerName: ei.BrokerName,
	}
	if err := s.putAck(a, ei.ReviveQid); err != nil {
		// The new check point is stored: the message comes back once, at
		// the earlier of the two times.
		return rh, Status{protocol.SystemError, "ack of the old check point not stored: " + err.Error()}
	}
	rh = protocol.ChangeInvisibleTimeResponseHeader{PopTime: now, InvisibleTime: h.InvisibleTime, ReviveQid: ei.ReviveQid}
	return rh, success
}
