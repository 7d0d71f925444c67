package grpc

import (
	"context"
	"strconv"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// receiptHandle is Java's ReceiptHandle: the POP_CK fields and the
// commit-log offset ("<ckQueueOffset> <popTime> <invisibleTime>
// <reviveQid> <mark> <brokerName> <queueId> <offset> [<commitLogOffset>]").
type receiptHandle struct {
	raw             string
	mark            string
	queueID         int32
	offset          int64
	commitLogOffset int64 // -1: none
}

// parseReceiptHandle is ReceiptHandle.decode. Fields beyond the ninth
// are ignored, as Java's decode does.
func parseReceiptHandle(s string) (receiptHandle, bool) {
	var f [9]string
	n := pop.SplitFields(s, f[:])
	if n < 8 {
		return receiptHandle{}, false
	}
	for _, i := range []int{0, 1, 2, 3} {
		if _, err := strconv.ParseInt(f[i], 10, 64); err != nil {
			return receiptHandle{}, false
		}
	}
	q, err1 := strconv.ParseInt(f[6], 10, 32)
	off, err2 := strconv.ParseInt(f[7], 10, 64)
	if err1 != nil || err2 != nil {
		return receiptHandle{}, false
	}
	h := receiptHandle{raw: s, mark: f[4], queueID: int32(q), offset: off, commitLogOffset: -1}
	if n >= 9 {
		clo, err := strconv.ParseInt(f[8], 10, 64)
		if err != nil {
			return receiptHandle{}, false
		}
		h.commitLogOffset = clo
	}
	return h, true
}

var invalidHandle = status(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is invalid")

// AckMessage follows AckMessageActivity: one ACK_MESSAGE per entry, each
// answered on its own; the response's status is the entries' common code
// or MULTIPLE_RESULTS.
func (s *Server) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	topic, group := req.GetTopic().GetName(), req.GetGroup().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.AckMessageResponse{Status: st}, nil
	}
	if st := checkGroupName(group); st != nil {
		return &v2.AckMessageResponse{Status: st}, nil
	}
	if len(req.GetEntries()) == 0 {
		return &v2.AckMessageResponse{Status: status(v2.Code_BAD_REQUEST, "no ack entry")}, nil
	}
	out := &v2.AckMessageResponse{Entries: make([]*v2.AckMessageResultEntry, 0, len(req.GetEntries()))}
	mixed := false
	for _, e := range req.GetEntries() {
		st := s.ackOne(ctx, topic, group, s.currentHandle(ctx, group, e.GetMessageId(), e.GetReceiptHandle()))
		mixed = mixed || (len(out.Entries) > 0 && out.Entries[0].Status.Code != st.Code)
		out.Entries = append(out.Entries, &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: st})
	}
	if mixed {
		out.Status = status(v2.Code_MULTIPLE_RESULTS, v2.Code_MULTIPLE_RESULTS.String())
	} else {
		out.Status = out.Entries[0].Status
	}
	return out, nil
}

// currentHandle ends the renewal of a message the client acks, changes
// or forwards, and returns the handle to use: the message's current one
// when the server renewed it (as Java's activities take it from
// removeReceiptHandle), else the client's.
func (s *Server) currentHandle(ctx context.Context, group, msgID, handle string) string {
	if h, ok := s.renewals.take(ctx, renewKey{clientID(ctx), group}, msgID, handle); ok {
		return h
	}
	return handle
}

func (s *Server) ackOne(ctx context.Context, topic, group, handle string) *v2.Status {
	h, ok := parseReceiptHandle(handle)
	if !ok {
		return invalidHandle
	}
	real, ok := pop.RealTopic(topic, group, h.mark)
	if !ok {
		return invalidHandle
	}
	code, remark := s.cfg.Processor.LocalAck(&protocol.AckMessageRequestHeader{
		ConsumerGroup: group, Topic: real, QueueID: h.queueID, ExtraInfo: h.raw, Offset: h.offset,
	}, remoteString(ctx))
	return remotingStatus(code, remark)
}

// ChangeInvisibleDuration follows ChangeInvisibleDurationActivity: the
// answer's receipt handle is the one the message now has
// (ExtraInfoUtil.buildExtraInfo with the new pop time, plus the offset and
// the commit-log offset).
func (s *Server) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	topic, group := req.GetTopic().GetName(), req.GetGroup().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: st}, nil
	}
	if st := checkGroupName(group); st != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: st}, nil
	}
	d := req.GetInvisibleDuration().AsDuration()
	if st := checkInvisible(d, 0); st != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: st}, nil
	}
	handle, st := s.changeInvisible(ctx, topic, group, s.currentHandle(ctx, group, req.GetMessageId(), req.GetReceiptHandle()), d)
	return &v2.ChangeInvisibleDurationResponse{Status: st, ReceiptHandle: handle}, nil
}

// changeInvisible runs CHANGE_MESSAGE_INVISIBLETIME for the message with
// receipt handle handle and returns its new handle.
func (s *Server) changeInvisible(ctx context.Context, topic, group, handle string, d time.Duration) (string, *v2.Status) {
	h, ok := parseReceiptHandle(handle)
	if !ok {
		return "", invalidHandle
	}
	real, ok := pop.RealTopic(topic, group, h.mark)
	if !ok {
		return "", invalidHandle
	}
	rh, code, remark := s.cfg.Processor.LocalChangeInvisible(&protocol.ChangeInvisibleTimeRequestHeader{
		ConsumerGroup: group, Topic: real, QueueID: h.queueID, ExtraInfo: h.raw, Offset: h.offset, InvisibleTime: d.Milliseconds(),
	}, remoteString(ctx))
	if code != protocol.Success {
		return "", remotingStatus(code, remark)
	}
	fields := []string{
		strconv.FormatInt(h.offset, 10), strconv.FormatInt(rh.PopTime, 10), strconv.FormatInt(rh.InvisibleTime, 10),
		strconv.Itoa(int(rh.ReviveQid)), h.mark, s.cfg.Broker.BrokerName, strconv.Itoa(int(h.queueID)), strconv.FormatInt(h.offset, 10),
	}
	if h.commitLogOffset >= 0 {
		fields = append(fields, strconv.FormatInt(h.commitLogOffset, 10))
	}
	return strings.Join(fields, " "), okStatus()
}

// ForwardMessageToDeadLetterQueue follows ForwardMessageToDLQActivity:
// CONSUMER_SEND_MSG_BACK with delay level -1 moves the message (found by
// the commit-log offset in its receipt handle) to %DLQ%group, then the
// message is acknowledged so that it is not revived.
func (s *Server) ForwardMessageToDeadLetterQueue(ctx context.Context, req *v2.ForwardMessageToDeadLetterQueueRequest) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
	topic, group := req.GetTopic().GetName(), req.GetGroup().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: st}, nil
	}
	if st := checkGroupName(group); st != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: st}, nil
	}
	return &v2.ForwardMessageToDeadLetterQueueResponse{
		Status: s.forwardToDLQ(ctx, topic, group, s.currentHandle(ctx, group, req.GetMessageId(), req.GetReceiptHandle()),
			req.GetMessageId(), req.GetMaxDeliveryAttempts()),
	}, nil
}

// forwardToDLQ is ProducerProcessor.forwardMessageToDeadLetterQueue: a
// CONSUMER_SEND_MSG_BACK with delay level -1 (straight to the group's
// DLQ) by the handle's commit-log offset, then the ack of the handle.
func (s *Server) forwardToDLQ(ctx context.Context, topic, group, handle, msgID string, maxReconsume int32) *v2.Status {
	h, ok := parseReceiptHandle(handle)
	if !ok || h.commitLogOffset < 0 {
		return invalidHandle
	}
	real, ok := pop.RealTopic(topic, group, h.mark)
	if !ok {
		return invalidHandle
	}
	sh := protocol.ConsumerSendMsgBackRequestHeader{
		Offset: h.commitLogOffset, Group: group, DelayLevel: -1, OriginMsgID: msgID, OriginTopic: real,
		MaxReconsumeTimes: protocol.Some(maxReconsume),
	}
	cmd := remoting.NewRequest(protocol.ConsumerSendMsgBack, protocol.Ext(&sh), nil)
	cmd.Version = versionV3_4_9
	resp := s.cfg.Processor.LocalSendBack(cmd)
	if resp.Code != protocol.Success {
		return remotingStatus(resp.Code, resp.Remark)
	}
	return s.ackOne(ctx, topic, group, handle)
}

// versionV3_4_9 is the request version from which a send back's
// maxReconsumeTimes is honoured (MQVersion ordinal).
const versionV3_4_9 = 121
