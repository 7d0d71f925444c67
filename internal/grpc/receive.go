package grpc

import (
	"context"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// Java's ProxyConfig bounds on receive.
const (
	minInvisibleForReceive = 10 * time.Second
	defaultInvisible       = 60 * time.Second
	maxInvisible           = 12 * time.Hour
	minPollTime            = 5 * time.Second
	maxPollTime            = 20 * time.Second
)

// ReceiveMessage follows ReceiveMessageActivity: a POP of the request's
// broker (queue -1: every readable queue; orderly for a FIFO group) that
// waits up to the long polling time, then a status response followed by
// one response per message (ReceiveMessageResponseStreamWriter).
func (s *Server) ReceiveMessage(req *v2.ReceiveMessageRequest, stream grpc.ServerStreamingServer[v2.ReceiveMessageResponse]) error {
	ctx, cancel := s.untilClosed(stream.Context())
	defer cancel()
	reply := func(st *v2.Status) error {
		return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
	}

	poll := defaultPollTime
	if req.GetLongPollingTimeout() != nil {
		poll = req.GetLongPollingTimeout().AsDuration()
	}
	poll = min(max(poll, minPollTime), maxPollTime)
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl) - pollReserve
		if poll > left {
			if left < minPollTime {
				return reply(status(v2.Code_ILLEGAL_POLLING_TIME, "The deadline time remaining is not enough for polling, please check network condition"))
			}
			poll = left
		}
	}
	topic, group := req.GetMessageQueue().GetTopic().GetName(), req.GetGroup().GetName()
	if st := checkTopicName(topic); st != nil {
		return reply(st)
	}
	if st := checkGroupName(group); st != nil {
		return reply(st)
	}
	// An auto-renew receive (push consumers) gets the proxy's default
	// invisible time, as Java's does with enableProxyAutoRenew, and its
	// messages are renewed while the client holds them (renew.go).
	autoRenew := req.GetAutoRenew() && s.cfg.Broker.EnableProxyAutoRenew
	invisible := s.cfg.Broker.DefaultInvisibleTime
	if invisible <= 0 {
		invisible = defaultInvisible
	}
	if !autoRenew {
		invisible = req.GetInvisibleDuration().AsDuration()
		if st := checkInvisible(invisible, minInvisibleForReceive); st != nil {
			return reply(st)
		}
	}
	expType, exp := filterOf(req.GetFilterExpression())
	fifo := false
	if gc, ok := s.cfg.Groups.Get(group); ok {
		fifo = gc.ConsumeMessageOrderly
	}
	// Every readable queue of the broker, FIFO or not: Java's
	// ReceiveMessageQueueSelector picks the broker's queue -1.
	h := protocol.PopMessageRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: -1, MaxMsgNums: min(max(req.GetBatchSize(), 1), pop.MaxPopNums),
		InvisibleTime: invisible.Milliseconds(), PollTime: poll.Milliseconds(), BornTime: time.Now().UnixMilli(),
		InitMode: 0, ExpType: expType, Exp: exp, Order: fifo, AttemptID: req.GetAttemptId(),
	}
	resp := s.cfg.Processor.LocalPop(ctx, &h)
	if resp.Release != nil {
		defer resp.Release()
	}
	switch resp.Code {
	case protocol.Success:
	case protocol.PollingFull:
		return reply(status(v2.Code_TOO_MANY_REQUESTS, "polling full"))
	case protocol.PollingTimeout, protocol.NoMessage:
		return reply(status(v2.Code_MESSAGE_NOT_FOUND, "no new message"))
	case protocol.SubscriptionGroupNotExist:
		return reply(status(v2.Code_CONSUMER_GROUP_NOT_FOUND, resp.Remark))
	case protocol.TopicNotExist:
		return reply(status(v2.Code_TOPIC_NOT_FOUND, resp.Remark))
	default:
		return reply(remotingStatus(resp.Code, resp.Remark))
	}
	var rh protocol.PopMessageResponseHeader
	if err := rh.Decode(resp.Ext()); err != nil {
		return reply(status(v2.Code_INTERNAL_SERVER_ERROR, "decode pop response: "+err.Error()))
	}
	msgs, err := s.poppedMessages(topic, group, &rh, resp.BodyParts, resp.Body)
	if err != nil {
		return reply(status(v2.Code_INTERNAL_SERVER_ERROR, err.Error()))
	}
	msgs = s.dropExhausted(ctx, topic, group, msgs)
	if len(msgs) == 0 {
		return reply(status(v2.Code_MESSAGE_NOT_FOUND, "no match message"))
	}
	if err := reply(okStatus()); err != nil {
		s.nack(topic, group, msgs)
		return err
	}
	// Java registers the messages for renewal only while the client's
	// channel is there; a client without one gets them unrenewed.
	renewFor := renewKey{clientID(ctx), group}
	renew := autoRenew && renewFor.clientID != "" && s.clients.alive(renewFor.clientID)
	for i, m := range msgs {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
			s.nack(topic, group, msgs[i:])
			return err
		}
		if renew {
			s.renewLater(renewFor, topic, m)
		}
	}
	return nil
}

// renewLater registers a message written to a push consumer for renewal
// (DefaultReceiptHandleManager.addReceiptHandle).
func (s *Server) renewLater(k renewKey, topic string, m *v2.Message) {
	sp := m.GetSystemProperties()
	handle := sp.GetReceiptHandle()
	next, ok := nextVisibleOf(handle)
	if !ok {
		return
	}
	s.renewals.add(k, &renewEntry{
		topic: topic, msgID: sp.GetMessageId(), orig: handle, reconsume: sp.GetDeliveryAttempt() - 1, received: time.Now(),
		handle: handle, nextVisible: next,
	})
}

// dropExhausted is PopMessageResultFilterImpl's TO_DLQ, which Java's
// proxy applies to every popped message before answering: a message
// whose reconsume times reached the consumer's max attempts (its
// settings' backoff policy, which the proxy merges from the group's
// retryMaxTimes+1 on every read: the group's config here) is forwarded
// to the group's DLQ and acked instead of delivered. This is what ends a
// FIFO message's redeliveries, which the broker's revive never sees. A
// forward that fails leaves the message in the answer, as Java's does.
func (s *Server) dropExhausted(ctx context.Context, topic, group string, msgs []*v2.Message) []*v2.Message {
	gc, ok := s.cfg.Groups.Get(group)
	if !ok {
		gc = protocol.NewSubscriptionGroupConfig(group)
	}
	maxAttempts := gc.RetryMaxTimes + 1
	kept := msgs[:0]
	for _, m := range msgs {
		sp := m.GetSystemProperties()
		if reconsume := sp.GetDeliveryAttempt() - 1; reconsume < maxAttempts {
			kept = append(kept, m)
			continue
		}
		if st := s.forwardToDLQ(ctx, topic, group, sp.GetReceiptHandle(), sp.GetMessageId(), 0); st.GetCode() != v2.Code_OK {
			s.log.Warn("grpc: message past its max attempts not forwarded to the DLQ; delivered", "topic", topic, "group", group,
				"msgId", sp.GetMessageId(), "attempt", sp.GetDeliveryAttempt(), "code", st.GetCode(), "remark", st.GetMessage())
			kept = append(kept, m)
		}
	}
	return kept
}

// nackInvisible is how soon a message the client did not get is visible
// again (ReceiveMessageResponseStreamWriter.NACK_INVISIBLE_TIME).
const nackInvisible = time.Second

// nack makes messages that could not be written to the client visible
// again soon (processThrowableWhenWriteMessage) instead of after their
// whole invisible time.
func (s *Server) nack(topic, group string, msgs []*v2.Message) {
	for _, m := range msgs {
		if _, st := s.changeInvisible(context.Background(), topic, group, m.GetSystemProperties().GetReceiptHandle(), nackInvisible); st.Code != v2.Code_OK {
			s.log.Debug("grpc: nack of an unwritten message failed", "topic", topic, "group", group,
				"msgId", m.GetSystemProperties().GetMessageId(), "code", st.Code, "remark", st.Message)
		}
	}
}

// poppedMessages decodes a POP answer's records and gives each the
// receipt handle Java's client builds from the response header
// (MQClientAPIImpl.processPopResponse) plus the commit-log offset the
// proxy appends (ConsumerProcessor.createHandle).
func (s *Server) poppedMessages(topic, group string, rh *protocol.PopMessageResponseHeader, parts [][]byte, body []byte) ([]*v2.Message, error) {
	starts := parseStartOffsets(rh.StartOffsetInfo)
	orderCounts := parseOrderCounts(rh.OrderCountInfo)
	if body != nil {
		parts = [][]byte{body}
	}
	// The receipt handle: "<start> <popTime> <invisibleTime> <reviveQid>
	// <mark> <brokerName> <queueId> <offset> <commitLogOffset>".
	common := strconv.AppendInt(nil, rh.PopTime, 10)
	common = append(common, ' ')
	common = strconv.AppendInt(common, rh.InvisibleTime, 10)
	common = append(common, ' ')
	common = strconv.AppendInt(common, int64(rh.ReviveQid), 10)
	common = append(common, ' ')
	var hbuf []byte
	out := make([]*v2.Message, 0, len(parts))
	for _, part := range parts {
		for len(part) > 0 {
			rec, n, err := message.DecodeRecord(part, false)
			if err != nil {
				return nil, fmt.Errorf("decode popped message: %w", err)
			}
			part = part[n:]
			mark := pop.TopicMark(rec.Topic)
			start, ok := starts[mark+" "+strconv.Itoa(int(rec.QueueID))]
			if !ok {
				return nil, fmt.Errorf("popped message of %s queue %d has no start offset in %q", rec.Topic, rec.QueueID, rh.StartOffsetInfo)
			}
			hb := strconv.AppendInt(hbuf[:0], start, 10)
			hb = append(hb, ' ')
			hb = append(hb, common...)
			hb = append(hb, mark...)
			hb = append(hb, ' ')
			hb = append(hb, s.cfg.Broker.BrokerName...)
			hb = append(hb, ' ')
			hb = strconv.AppendInt(hb, int64(rec.QueueID), 10)
			hb = append(hb, ' ')
			hb = strconv.AppendInt(hb, rec.QueueOffset, 10)
			hb = append(hb, ' ')
			hb = strconv.AppendInt(hb, rec.PhysicalOffset, 10)
			handle := string(hb)
			hbuf = hb[:0]
			reconsume := rec.ReconsumeTimes
			if len(orderCounts) > 0 {
				if c, ok := orderCounts[mark+" "+strconv.Itoa(int(rec.QueueID))+" "+strconv.FormatInt(rec.QueueOffset, 10)]; ok {
					reconsume = c
				}
			}
			out = append(out, grpcMessage(topic, &rec, handle, reconsume, time.Duration(rh.InvisibleTime)*time.Millisecond))
		}
	}
	return out, nil
}

// parseStartOffsets reads "mark queueId startOffset;..." keyed by
// "mark queueId".
func parseStartOffsets(info string) map[string]int64 {
	m := make(map[string]int64)
	for _, e := range strings.Split(info, ";") {
		f := strings.Fields(e)
		if len(f) != 3 {
			continue
		}
		if v, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			m[f[0]+" "+f[1]] = v
		}
	}
	return m
}

// parseOrderCounts reads "mark qo<queueId>%<offset> count;..." keyed by
// "mark queueId offset".
func parseOrderCounts(info string) map[string]int32 {
	m := make(map[string]int32)
	for _, e := range strings.Split(info, ";") {
		f := strings.Fields(e)
		if len(f) != 3 || !strings.HasPrefix(f[1], "qo") {
			continue
		}
		q, off, ok := strings.Cut(f[1][2:], "%")
		c, err := strconv.Atoi(f[2])
		if !ok || err != nil {
			continue
		}
		m[f[0]+" "+q+" "+off] = int32(c)
	}
	return m
}

// grpcMessage is GrpcConverter.buildMessage. rec's properties are read
// in one pass without a map of them; the strings alias rec.Properties, so
// rec must own its bytes (message.DecodeRecord's copy).
func grpcMessage(topic string, rec *message.Record, handle string, reconsume int32, invisible time.Duration) *v2.Message {
	// The system properties read here, the last entry of a key winning
	// as in Java's map.
	var tags, uniq, keys, prepared, group, trace, deliverMS string
	var delay bool
	var user map[string]string // nil when there is none: marshalled as an empty map
	for k, v := range message.AllProperties(rec.Properties) {
		switch k {
		case message.PropertyTags:
			tags = v
		case message.PropertyUniqClientMessageIDKeyIdx:
			uniq = v
		case message.PropertyKeys:
			keys = v
		case message.PropertyTransactionPrepared:
			prepared = v
		case message.PropertyShardingKey:
			group = v
		case message.PropertyTraceContext:
			trace = v
		case message.PropertyTimerDeliverMS:
			deliverMS, delay = v, true
		case message.PropertyDelayTimeLevel, message.PropertyTimerDelaySec, message.PropertyTimerDelayMS:
			delay = true
		}
		if systemProperty(k) {
			continue
		}
		if user == nil {
			user = make(map[string]string, 4)
		}
		user[k] = v
	}
	sp := &v2.SystemProperties{
		Tag: proto(tags), MessageId: uniq,
		BodyDigest:      &v2.Digest{Type: v2.DigestType_CRC32, Checksum: crc32Hex(rec.Body)},
		BodyEncoding:    v2.Encoding_IDENTITY,
		MessageType:     v2.MessageType_NORMAL,
		BornTimestamp:   timestamppb.New(time.UnixMilli(rec.BornTimestamp)),
		BornHost:        rec.BornHost.Addr().String(),
		StoreTimestamp:  timestamppb.New(time.UnixMilli(rec.StoreTimestamp)),
		StoreHost:       rec.StoreHost.String(),
		QueueId:         rec.QueueID,
		QueueOffset:     &rec.QueueOffset,
		DeliveryAttempt: proto32(reconsume + 1),
	}
	if handle != "" {
		sp.ReceiptHandle, sp.InvisibleDuration = &handle, durationpb.New(invisible)
	}
	if keys != "" {
		sp.Keys = strings.Fields(keys)
	}
	if sp.MessageId == "" {
		sp.MessageId = message.OffsetMsgID(rec.StoreHost, rec.PhysicalOffset)
	}
	if message.IsCompressed(rec.SysFlag) {
		sp.BodyEncoding = v2.Encoding_GZIP
	}
	switch {
	case prepared == "true":
		sp.MessageType = v2.MessageType_TRANSACTION
	case delay:
		sp.MessageType = v2.MessageType_DELAY
	case group != "":
		sp.MessageType = v2.MessageType_FIFO
	}
	if ms, err := strconv.ParseInt(deliverMS, 10, 64); err == nil {
		sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(ms))
	}
	if group != "" {
		sp.MessageGroup = &group
	}
	if trace != "" {
		sp.TraceContext = &trace
	}
	return &v2.Message{Topic: &v2.Resource{Name: topic}, UserProperties: user, SystemProperties: sp, Body: rec.Body}
}

// crc32Hex is the body digest as Java's proxy writes it: the CRC32 in
// upper-case hex, no leading zeros.
func crc32Hex(body []byte) string {
	var b [8]byte
	h := strconv.AppendUint(b[:0], uint64(crc32.ChecksumIEEE(body)), 16)
	for i, c := range h {
		if c >= 'a' {
			h[i] = c - 'a' + 'A'
		}
	}
	return string(h)
}

func proto(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func proto32(v int32) *int32 { return &v }

// checkInvisible is GrpcValidator.validateInvisibleTime.
func checkInvisible(d, minimum time.Duration) *v2.Status {
	if d < minimum {
		return status(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisibleTime is too small. min is "+strconv.FormatInt(minimum.Milliseconds(), 10))
	}
	if d > maxInvisible {
		return status(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisibleTime is too large. max is "+strconv.FormatInt(maxInvisible.Milliseconds(), 10))
	}
	return nil
}

// filterOf is the broker's expression type and text for a request's
// filter: a tag expression "*" when there is none or it is blank.
func filterOf(f *v2.FilterExpression) (expType, exp string) {
	expType, exp = protocol.ExpressionTag, "*"
	if f == nil {
		return expType, exp
	}
	if f.GetType() == v2.FilterType_SQL {
		expType = protocol.ExpressionSQL92
	}
	if strings.TrimSpace(f.GetExpression()) != "" {
		exp = f.GetExpression()
	}
	return expType, exp
}
