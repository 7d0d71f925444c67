package grpc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Java's ProxyConfig limits on what a message carries.
const (
	userPropertyMaxNum     = 128
	maxUserPropertySize    = 16 * 1024
	maxMessageGroupSize    = 64
	maxTransactionRecovery = 3600 // seconds
	defaultTopicQueueNums  = 4
)

// SendMessage follows SendMessageActivity and ProducerProcessor: the
// messages are checked and turned into a SEND_MESSAGE (one) or
// SEND_BATCH_MESSAGE (several) request that the broker's send processor
// stores, the producer group being the topic (Java's choice, for the
// transaction check-back).
func (s *Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	msgs := req.GetMessages()
	if len(msgs) == 0 {
		return &v2.SendMessageResponse{Status: status(v2.Code_MESSAGE_CORRUPTED, "no message to send")}, nil
	}
	topic := msgs[0].GetTopic().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.SendMessageResponse{Status: st}, nil
	}
	propsList := make([]map[string]string, len(msgs))
	for i, m := range msgs {
		if m.GetTopic().GetName() != topic {
			return &v2.SendMessageResponse{Status: status(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same")}, nil
		}
		props, st := s.messageProperties(m, topic)
		if st != nil {
			return &v2.SendMessageResponse{Status: st}, nil
		}
		propsList[i] = props
	}
	tc, found := s.cfg.Topics.Get(topic)
	if !found {
		return &v2.SendMessageResponse{Status: status(v2.Code_TOPIC_NOT_FOUND, "topic not found: "+topic)}, nil
	}
	if !meta.IsRetryTopic(topic) && !strings.HasPrefix(topic, meta.DLQGroupTopicPrefix) {
		if _, transfer := propsList[0][message.PropertyTransferFlag]; !transfer {
			if st := checkMessageType(s.topicMessageType(topic), propsList[0]); st != nil {
				return &v2.SendMessageResponse{Status: st}, nil
			}
		}
	}
	first := msgs[0]
	sysFlag := int32(0)
	if first.GetSystemProperties().GetBodyEncoding() == v2.Encoding_GZIP {
		sysFlag |= message.SysFlagCompressed
	}
	if first.GetSystemProperties().GetMessageType() == v2.MessageType_TRANSACTION {
		sysFlag |= message.TransactionPreparedType
	}
	h := protocol.SendMessageRequestHeader{
		ProducerGroup: topic, Topic: topic, DefaultTopic: meta.AutoCreateTopic, DefaultTopicQueueNums: defaultTopicQueueNums,
		QueueID: -1, SysFlag: sysFlag, BornTimestamp: time.Now().UnixMilli(),
		ReconsumeTimes: protocol.Some(int32(0)),
	}
	// SendMessageQueueSelector: a single message of a message group goes to
	// the queue its group hashes to; anything else to any queue.
	if group := first.GetSystemProperties().GetMessageGroup(); len(msgs) == 1 && group != "" && tc.WriteQueueNums > 0 {
		h.QueueID = int32(consistentHash(int64(message.JavaHash(group)), int(tc.WriteQueueNums)))
	}
	var cmd *remoting.Command
	if len(msgs) == 1 {
		h.Properties = message.EncodeProperties(propsList[0])
		cmd = remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), first.GetBody())
	} else {
		h.Batch = protocol.Some(true)
		var body []byte
		for i, m := range msgs {
			body = message.AppendBatchItem(body, 0, m.GetBody(), message.EncodeProperties(propsList[i]))
		}
		ext := make(map[string]string, 16)
		h.AppendExtV2(ext) // a batch carries the letter-keyed V2 header
		cmd = remoting.NewRequest(protocol.SendBatchMessage, ext, body)
	}
	resp := s.cfg.Processor.LocalSend(cmd, remoteAddr(ctx))
	return sendResponse(msgs, resp), nil
}

// sendResponse is convertToSendMessageResponse: one entry per message.
func sendResponse(msgs []*v2.Message, resp *remoting.Command) *v2.SendMessageResponse {
	st := remotingStatus(resp.Code, fmt.Sprintf("send message failed, code=%d: %s", resp.Code, resp.Remark))
	var rh protocol.SendMessageResponseHeader
	if st.Code == v2.Code_OK {
		if err := rh.Decode(resp.Ext()); err != nil {
			st = status(v2.Code_INTERNAL_SERVER_ERROR, "decode send response: "+err.Error())
		}
	}
	out := &v2.SendMessageResponse{Status: st}
	offsetIDs := strings.Split(rh.MsgID, ",")
	for i, m := range msgs {
		e := &v2.SendResultEntry{Status: st}
		if st.Code == v2.Code_OK {
			e.MessageId = m.GetSystemProperties().GetMessageId()
			e.Offset = rh.QueueOffset + int64(i)
			e.RecallHandle = rh.RecallHandle // a single timer message's only
			if m.GetSystemProperties().GetMessageType() == v2.MessageType_TRANSACTION && i < len(offsetIDs) {
				e.TransactionId = transactionID(offsetIDs[i], rh.QueueOffset+int64(i))
			}
		}
		out.Entries = append(out.Entries, e)
	}
	return out
}

// messageProperties is SendMessageActivity.buildMessageProperty: the
// message's stored properties, or the status refusing it.
func (s *Server) messageProperties(m *v2.Message, producerGroup string) (map[string]string, *v2.Status) {
	sp := m.GetSystemProperties()
	if max := s.cfg.Broker.MaxMessageSize; max > 0 && len(m.GetBody()) > max {
		return nil, status(v2.Code_MESSAGE_BODY_TOO_LARGE, "message body cannot exceed the max "+strconv.Itoa(max))
	}
	user := m.GetUserProperties()
	if len(user) > userPropertyMaxNum {
		return nil, status(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "too many user properties, max is "+strconv.Itoa(userPropertyMaxNum))
	}
	props := make(map[string]string, len(user)+8)
	size := 0
	for k, v := range user {
		if systemProperty(k) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		}
		if hasControl(k) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		}
		if hasControl(v) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		size += len(k) + len(v)
		props[k] = v
	}
	if tag := sp.GetTag(); tag != "" {
		switch {
		case strings.TrimSpace(tag) == "":
			return nil, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
		case strings.Contains(tag, "|"):
			return nil, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
		case hasControl(tag):
			return nil, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
		}
		props[message.PropertyTags] = tag
		size += len(tag)
	}
	for _, k := range sp.GetKeys() {
		if k != "" && strings.TrimSpace(k) == "" {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
		}
		if hasControl(k) {
			return nil, status(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot contain control character")
		}
		size += len(k)
	}
	if len(sp.GetKeys()) > 0 {
		props[message.PropertyKeys] = strings.Join(sp.GetKeys(), " ")
	}
	if size > maxUserPropertySize {
		return nil, status(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "the total size of user property is too large, max is "+strconv.Itoa(maxUserPropertySize))
	}
	if strings.TrimSpace(sp.GetMessageId()) == "" {
		return nil, status(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	props[message.PropertyUniqClientMessageIDKeyIdx] = sp.GetMessageId()
	if sp.GetMessageType() == v2.MessageType_TRANSACTION {
		props[message.PropertyTransactionPrepared] = "true"
		if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil {
			sec := d.GetSeconds()
			if sec > maxTransactionRecovery {
				return nil, status(v2.Code_BAD_REQUEST, "the max transaction recovery time of message is too large, max is "+strconv.Itoa(maxTransactionRecovery))
			}
			props[message.PropertyCheckImmunityTimeInSeconds] = strconv.FormatInt(sec, 10)
		}
	}
	if ts := sp.GetDeliveryTimestamp(); ts != nil {
		at := ts.AsTime()
		if time.Until(at) > maxDelay {
			return nil, status(v2.Code_ILLEGAL_DELIVERY_TIME, "the max delay time of message is too large, max is "+strconv.FormatInt(maxDelay.Milliseconds(), 10))
		}
		props[message.PropertyTimerDeliverMS] = strconv.FormatInt(at.UnixMilli(), 10)
	}
	props[message.PropertyReconsumeTime] = strconv.Itoa(int(sp.GetDeliveryAttempt()))
	props[message.PropertyProducerGroup] = producerGroup
	if g := sp.GetMessageGroup(); g != "" {
		switch {
		case strings.TrimSpace(g) == "":
			return nil, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot be the char sequence of whitespace")
		case len(g) >= maxMessageGroupSize:
			return nil, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group exceed the max size "+strconv.Itoa(maxMessageGroupSize))
		case hasControl(g):
			return nil, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot contain control character")
		}
		props[message.PropertyShardingKey] = g
	}
	if tc := sp.GetTraceContext(); tc != "" {
		props[message.PropertyTraceContext] = tc
	}
	if bh := sp.GetBornHost(); strings.TrimSpace(bh) != "" {
		props[message.PropertyBornHost] = bh
	}
	if bt := sp.GetBornTimestamp(); bt != nil && bt.IsValid() {
		props[message.PropertyBornTimestamp] = strconv.FormatInt(bt.AsTime().UnixMilli(), 10)
	}
	return props, nil
}

// checkMessageType is DefaultTopicMessageTypeValidator with the message's
// type read from its properties (TopicMessageType.parseFromMessageProperty).
func checkMessageType(topicType string, props map[string]string) *v2.Status {
	actual := protocol.MessageTypeNormal
	switch {
	case props[message.PropertyTransactionPrepared] == "true":
		actual = protocol.MessageTypeTransaction
	case has(props, message.PropertyDelayTimeLevel) || has(props, message.PropertyTimerDeliverMS) ||
		has(props, message.PropertyTimerDelaySec) || has(props, message.PropertyTimerDelayMS):
		actual = protocol.MessageTypeDelay
	case has(props, message.PropertyShardingKey):
		actual = protocol.MessageTypeFIFO
	}
	if actual != topicType && topicType != protocol.MessageTypeMixed {
		return status(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			fmt.Sprintf("TopicMessageType validate failed, the expected type is %s, but actual type is %s", topicType, actual))
	}
	return nil
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// hasControl is GrpcValidator.containControlCharacter.
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// systemProperty is MessageConst.STRING_HASH_SET: the keys a user may not
// set, and that a received message's user properties leave out
// (GrpcConverter.buildUserAttributes).
func systemProperty(k string) bool {
	switch k {
	case message.PropertyTraceSwitch, message.PropertyMsgRegion, message.PropertyKeys, message.PropertyTags,
		message.PropertyWaitStoreMsgOK, message.PropertyDelayTimeLevel, message.PropertyRetryTopic,
		message.PropertyRealTopic, message.PropertyRealQueueID, message.PropertyTransactionPrepared,
		message.PropertyProducerGroup, message.PropertyMinOffset, message.PropertyMaxOffset, message.PropertyBuyerID,
		message.PropertyOriginMessageID, message.PropertyTransferFlag, message.PropertyCorrectionFlag, message.PropertyMQ2Flag,
		message.PropertyReconsumeTime, message.PropertyUniqClientMessageIDKeyIdx, message.PropertyMaxReconsumeTimes,
		message.PropertyConsumeStartTimestamp, message.PropertyPopCK, message.PropertyPopCKOffset, message.PropertyFirstPopTime,
		message.PropertyTransactionPreparedQueueOff, message.PropertyDupInfo, message.PropertyExtendUniqInfo,
		message.PropertyInstanceID, message.PropertyCorrelationID, message.PropertyMessageReplyToClient, message.PropertyMessageTTL,
		message.PropertyReplyMessageArriveTime, message.PropertyPushReplyTime, message.PropertyCluster,
		message.PropertyMessageType, message.PropertyInnerMultiQueueOffset, message.PropertyTimerDelayMS,
		message.PropertyTimerDelaySec, message.PropertyTimerDeliverMS, message.PropertyTimerEnqueueMS,
		message.PropertyTimerDequeueMS, message.PropertyTimerRollTimes, message.PropertyTimerOutMS,
		message.PropertyTimerDelUniqKey, propertyTimerDelayLevel, message.PropertyBornHost, message.PropertyBornTimestamp,
		message.PropertyDLQOriginTopic, message.PropertyDLQOriginMessageID, message.PropertyCRC32:
		return true
	}
	return false
}

// propertyTimerDelayLevel is MessageConst.PROPERTY_TIMER_DELAY_LEVEL.
const propertyTimerDelayLevel = "TIMER_DELAY_LEVEL"

// consistentHash is Guava's Hashing.consistentHash(long, int), which the
// proxy uses to map a message group to a queue.
func consistentHash(input int64, buckets int) int {
	state := uint64(input)
	candidate := 0
	for {
		state = 2862933555777941757*state + 1
		d := float64(int32(state>>33)+1) / float64(1<<31)
		next := int(float64(candidate+1) / d)
		if next >= 0 && next < buckets {
			candidate = next
		} else {
			return candidate
		}
	}
}
