package processor

import (
	"context"
	"fmt"
	"strconv"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// firstRetryDelayLevel is the delay level of a first retry when the
// consumer leaves the choice to the broker (3 = 10 s); each retry adds one.
const firstRetryDelayLevel = 3

// handleSendBack serves CONSUMER_SEND_MSG_BACK (rocketmq-spec.md §10): the
// failed message is copied to %RETRY%group with a delay level (parked in
// SCHEDULE_TOPIC_XXXX by the store until the schedule service delivers it),
// or to %DLQ%group once it has been retried maxReconsumeTimes or the
// consumer asks for it (delayLevel < 0).
func (s *sendFamily) handleSendBack(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ConsumerSendMsgBackRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	gc, found := s.groups.FindOrCreate(h.Group)
	if !found {
		return remoting.NewResponse(protocol.SubscriptionGroupNotExist, "subscription group not exist, "+h.Group)
	}
	if !s.brokerWriteable() {
		return remoting.NewResponse(protocol.NoPermission, fmt.Sprintf("the broker[%s] sending message is forbidden", s.cfg.BrokerIP1))
	}
	if gc.RetryQueueNums <= 0 {
		return ok(nil) // the group does not want retries: drop
	}
	retry, _, err := s.topics.EnsureRetryTopic(h.Group, gc.RetryQueueNums)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("topic[%s] not exist", meta.RetryTopic(h.Group)))
	}
	if !meta.IsWriteable(retry.Perm) {
		return remoting.NewResponse(protocol.NoPermission, fmt.Sprintf("the topic[%s] sending message is forbidden", retry.TopicName))
	}
	orig, buf, err := s.store.LookMessageByOffset(h.Offset)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, "look message by offset failed, "+strconv.FormatInt(h.Offset, 10))
	}
	defer buf.Release()

	props := orig.Properties
	if _, set := message.Property(props, message.PropertyRetryTopic); !set {
		props = message.SetProperty(props, message.PropertyRetryTopic, orig.Topic)
	}
	maxTimes := gc.RetryMaxTimes
	if req.Version >= versionV3_4_9 && h.MaxReconsumeTimes.Set {
		maxTimes = h.MaxReconsumeTimes.Value
	}
	rec := message.Record{
		Topic:          retry.TopicName,
		QueueID:        randomQueue(retry.WriteQueueNums),
		Flag:           orig.Flag,
		SysFlag:        orig.SysFlag,
		BornTimestamp:  orig.BornTimestamp,
		BornHost:       orig.BornHost,
		ReconsumeTimes: orig.ReconsumeTimes + 1,
		Body:           orig.Body,
	}
	if orig.ReconsumeTimes >= maxTimes || h.DelayLevel < 0 {
		dlq, _, err := s.topics.EnsureDLQTopic(h.Group)
		if err != nil {
			return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("topic[%s] not exist", meta.DLQTopic(h.Group)))
		}
		if !meta.IsWriteable(dlq.Perm) {
			return remoting.NewResponse(protocol.NoPermission, fmt.Sprintf("the topic[%s] sending message is forbidden", dlq.TopicName))
		}
		rec.Topic, rec.QueueID = dlq.TopicName, randomQueue(meta.DLQQueueNums)
		props = message.DeleteProperty(props, message.PropertyDelayTimeLevel)
	} else {
		level := h.DelayLevel
		if level == 0 {
			level = firstRetryDelayLevel + orig.ReconsumeTimes
		}
		props = message.SetProperty(props, message.PropertyDelayTimeLevel, strconv.Itoa(int(level)))
	}
	origID, _ := message.Property(props, message.PropertyOriginMessageID)
	if origID == "" {
		origID = h.OriginMsgID
	}
	if origID == "" {
		origID = message.OffsetMsgID(orig.StoreHost, h.Offset)
	}
	props = message.SetProperty(props, message.PropertyOriginMessageID, origID)
	props = message.SetProperty(props, message.PropertyWaitStoreMsgOK, "false")
	rec.Properties = props

	res := s.store.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true})
	if res.Status.Stored() {
		if s.sentToDLQ != nil && meta.IsDLQTopic(rec.Topic) {
			// AbstractSendMessageProcessor labels it with the origin topic.
			s.sentToDLQ(h.Group, h.OriginTopic)
		}
		backTopic, _ := message.Property(props, message.PropertyRetryTopic)
		s.stats.SendBack(h.Group, backTopic)
		return ok(nil)
	}
	return remoting.NewResponse(protocol.SystemError, res.Status.String())
}
