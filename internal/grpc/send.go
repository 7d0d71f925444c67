package grpc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/processor"
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
// transaction check-back). The request's header goes to the processor as
// built (processor.LocalSendHeader), and each message's properties are
// encoded straight from the request, without a map.
func (s *Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	msgs := req.GetMessages()
	if len(msgs) == 0 {
		return &v2.SendMessageResponse{Status: status(v2.Code_MESSAGE_CORRUPTED, "no message to send")}, nil
	}
	topic := msgs[0].GetTopic().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.SendMessageResponse{Status: st}, nil
	}
	var (
		firstProps string
		firstKind  msgKind
		batch      []byte
	)
	for i, m := range msgs {
		if m.GetTopic().GetName() != topic {
			return &v2.SendMessageResponse{Status: status(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same")}, nil
		}
		props, kind, st := s.messageProperties(m, topic)
		if st != nil {
			return &v2.SendMessageResponse{Status: st}, nil
		}
		if i == 0 {
			firstProps, firstKind = props, kind
		}
		if len(msgs) > 1 {
			batch = message.AppendBatchItem(batch, 0, m.GetBody(), props)
		}
	}
	tc, found := s.cfg.Topics.Get(topic)
	if !found {
		return &v2.SendMessageResponse{Status: status(v2.Code_TOPIC_NOT_FOUND, "topic not found: "+topic)}, nil
	}
	// A user cannot set TRANSFER_FLAG (a system property), so the
	// proxy's exemption of transferred messages never applies here.
	if !meta.IsRetryTopic(topic) && !strings.HasPrefix(topic, meta.DLQGroupTopicPrefix) {
		if st := checkMessageType(messageTypeOf(tc), firstKind); st != nil {
			return &v2.SendMessageResponse{Status: st}, nil
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
	var resp *remoting.Command
	if len(msgs) == 1 {
		h.Properties = firstProps
		resp = s.cfg.Processor.LocalSendHeader(protocol.SendMessage, &h, first.GetBody(), remoteAddr(ctx))
	} else {
		h.Batch = protocol.Some(true) // the batch's header has no properties of its own
		resp = s.cfg.Processor.LocalSendHeader(protocol.SendBatchMessage, &h, batch, remoteAddr(ctx))
	}
	return sendResponse(msgs, resp), nil
}

// sendResponse is convertToSendMessageResponse: one entry per message.
func sendResponse(msgs []*v2.Message, resp *remoting.Command) *v2.SendMessageResponse {
	var (
		st *v2.Status
		rh protocol.SendMessageResponseHeader
	)
	if remotingCode(resp.Code) != v2.Code_OK {
		st = remotingStatus(resp.Code, fmt.Sprintf("send message failed, code=%d: %s", resp.Code, resp.Remark))
	} else if r, err := processor.SendResult(resp); err != nil {
		st = status(v2.Code_INTERNAL_SERVER_ERROR, "decode send response: "+err.Error())
	} else {
		st, rh = okStatus(), r
	}
	out := &v2.SendMessageResponse{Status: st, Entries: make([]*v2.SendResultEntry, len(msgs))}
	var offsetIDs []string // split once a transaction message needs them
	for i, m := range msgs {
		e := &v2.SendResultEntry{Status: st}
		if st.Code == v2.Code_OK {
			e.MessageId = m.GetSystemProperties().GetMessageId()
			e.Offset = rh.QueueOffset + int64(i)
			e.RecallHandle = rh.RecallHandle // a single timer message's only
			if m.GetSystemProperties().GetMessageType() == v2.MessageType_TRANSACTION {
				if offsetIDs == nil {
					offsetIDs = strings.Split(rh.MsgID, ",")
				}
				if i < len(offsetIDs) {
					e.TransactionId = transactionID(offsetIDs[i], rh.QueueOffset+int64(i))
				}
			}
		}
		out.Entries[i] = e
	}
	return out
}

// msgKind is what DefaultTopicMessageTypeValidator reads of a message's
// properties (TopicMessageType.parseFromMessageProperty): TRAN_MSG=true,
// a delay property, __SHARDINGKEY present.
type msgKind struct{ transaction, delay, fifo bool }

// prop is one stored property of a message being converted: a string
// value, or a number written where the properties are encoded (no string
// made for it).
type prop struct {
	key, val string
	num      int64
	isNum    bool
}

// maxSystemProps bounds the properties messageProperties adds itself.
const maxSystemProps = 12

// messageProperties is SendMessageActivity.buildMessageProperty: the
// message's stored properties (encoded as message.EncodeProperties
// encodes a map: sorted by key, empty keys and values left out, a
// system property replacing a user property of the same key) and its
// kind, or the status refusing it.
func (s *Server) messageProperties(m *v2.Message, producerGroup string) (string, msgKind, *v2.Status) {
	var kind msgKind
	sp := m.GetSystemProperties()
	if max := s.cfg.Broker.MaxMessageSize; max > 0 && len(m.GetBody()) > max {
		return "", kind, status(v2.Code_MESSAGE_BODY_TOO_LARGE, "message body cannot exceed the max "+strconv.Itoa(max))
	}
	user := m.GetUserProperties()
	if len(user) > userPropertyMaxNum {
		return "", kind, status(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "too many user properties, max is "+strconv.Itoa(userPropertyMaxNum))
	}
	var buf [maxSystemProps + 8]prop
	props := buf[:0]
	size := 0
	for k, v := range user {
		if systemProperty(k) {
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		}
		if hasControl(k) {
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		}
		if hasControl(v) {
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		size += len(k) + len(v)
		if k == message.PropertyShardingKey {
			kind.fifo = true
		}
		props = append(props, prop{key: k, val: v})
	}
	if tag := sp.GetTag(); tag != "" {
		switch {
		case strings.TrimSpace(tag) == "":
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
		case strings.Contains(tag, "|"):
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
		case hasControl(tag):
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
		}
		props = append(props, prop{key: message.PropertyTags, val: tag})
		size += len(tag)
	}
	keys := sp.GetKeys()
	for _, k := range keys {
		if k != "" && strings.TrimSpace(k) == "" {
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
		}
		if hasControl(k) {
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot contain control character")
		}
		size += len(k)
	}
	switch len(keys) {
	case 0:
	case 1:
		props = append(props, prop{key: message.PropertyKeys, val: keys[0]})
	default:
		props = append(props, prop{key: message.PropertyKeys, val: strings.Join(keys, " ")})
	}
	if size > maxUserPropertySize {
		return "", kind, status(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "the total size of user property is too large, max is "+strconv.Itoa(maxUserPropertySize))
	}
	if strings.TrimSpace(sp.GetMessageId()) == "" {
		return "", kind, status(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	props = append(props, prop{key: message.PropertyUniqClientMessageIDKeyIdx, val: sp.GetMessageId()})
	if sp.GetMessageType() == v2.MessageType_TRANSACTION {
		kind.transaction = true
		props = append(props, prop{key: message.PropertyTransactionPrepared, val: "true"})
		if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil {
			sec := d.GetSeconds()
			if sec > maxTransactionRecovery {
				return "", kind, status(v2.Code_BAD_REQUEST, "the max transaction recovery time of message is too large, max is "+strconv.Itoa(maxTransactionRecovery))
			}
			props = setProp(props, prop{key: message.PropertyCheckImmunityTimeInSeconds, num: sec, isNum: true})
		}
	}
	if ts := sp.GetDeliveryTimestamp(); ts != nil {
		at := ts.AsTime()
		if time.Until(at) > maxDelay {
			return "", kind, status(v2.Code_ILLEGAL_DELIVERY_TIME, "the max delay time of message is too large, max is "+strconv.FormatInt(maxDelay.Milliseconds(), 10))
		}
		kind.delay = true
		props = append(props, prop{key: message.PropertyTimerDeliverMS, num: at.UnixMilli(), isNum: true})
	}
	props = append(props,
		prop{key: message.PropertyReconsumeTime, num: int64(sp.GetDeliveryAttempt()), isNum: true},
		prop{key: message.PropertyProducerGroup, val: producerGroup})
	if g := sp.GetMessageGroup(); g != "" {
		switch {
		case strings.TrimSpace(g) == "":
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot be the char sequence of whitespace")
		case len(g) >= maxMessageGroupSize:
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group exceed the max size "+strconv.Itoa(maxMessageGroupSize))
		case hasControl(g):
			return "", kind, status(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot contain control character")
		}
		kind.fifo = true
		props = setProp(props, prop{key: message.PropertyShardingKey, val: g})
	}
	if tc := sp.GetTraceContext(); tc != "" {
		props = setProp(props, prop{key: message.PropertyTraceContext, val: tc})
	}
	if bh := sp.GetBornHost(); strings.TrimSpace(bh) != "" {
		props = append(props, prop{key: message.PropertyBornHost, val: bh})
	}
	if bt := sp.GetBornTimestamp(); bt != nil && bt.IsValid() {
		props = append(props, prop{key: message.PropertyBornTimestamp, num: bt.AsTime().UnixMilli(), isNum: true})
	}
	return encodeProps(props), kind, nil
}

// setProp sets p in props, replacing a user property of its key (the few
// system properties a user may also set: CHECK_IMMUNITY_TIME_IN_SECONDS,
// __SHARDINGKEY, TRACE_CONTEXT).
func setProp(props []prop, p prop) []prop {
	for i := range props {
		if props[i].key == p.key {
			props[i] = p
			return props
		}
	}
	return append(props, p)
}

// encodeProps is message.EncodeProperties of props (unique keys): sorted
// by key, empty keys and values left out, in one allocation.
func encodeProps(props []prop) string {
	slices.SortFunc(props, func(a, b prop) int { return strings.Compare(a.key, b.key) })
	var num [20]byte
	n := 0
	for _, p := range props {
		switch {
		case p.key == "":
		case p.isNum:
			n += len(p.key) + 2 + len(strconv.AppendInt(num[:0], p.num, 10))
		case p.val != "":
			n += len(p.key) + 2 + len(p.val)
		}
	}
	var b strings.Builder
	b.Grow(n)
	last := byte(0)
	for _, p := range props {
		if p.key == "" || !p.isNum && p.val == "" {
			continue
		}
		// message.AppendProperty's separator: none first, nor after a
		// value that ends with one.
		if b.Len() > 0 && last != message.PropertySeparator {
			b.WriteByte(message.PropertySeparator)
		}
		b.WriteString(p.key)
		b.WriteByte(message.NameValueSeparator)
		if p.isNum {
			d := strconv.AppendInt(num[:0], p.num, 10)
			b.Write(d)
			last = d[len(d)-1]
		} else {
			b.WriteString(p.val)
			last = p.val[len(p.val)-1]
		}
	}
	return b.String()
}

// messageTypeOf is the topic's message.type attribute (NORMAL when unset).
func messageTypeOf(tc protocol.TopicConfig) string {
	if t, ok := tc.Attributes[protocol.TopicAttrMessageType]; ok && t != "" {
		return t
	}
	return protocol.MessageTypeNormal
}

// checkMessageType is DefaultTopicMessageTypeValidator with the message's
// type read from its properties (TopicMessageType.parseFromMessageProperty).
func checkMessageType(topicType string, kind msgKind) *v2.Status {
	actual := protocol.MessageTypeNormal
	switch {
	case kind.transaction:
		actual = protocol.MessageTypeTransaction
	case kind.delay:
		actual = protocol.MessageTypeDelay
	case kind.fifo:
		actual = protocol.MessageTypeFIFO
	}
	if actual != topicType && topicType != protocol.MessageTypeMixed {
		return status(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			fmt.Sprintf("TopicMessageType validate failed, the expected type is %s, but actual type is %s", topicType, actual))
	}
	return nil
}

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
