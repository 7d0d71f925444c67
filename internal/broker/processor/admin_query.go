package processor

import (
	"fmt"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Admin requests about groups and their progress that mqadmin and the
// dashboard send (Java's AdminBrokerProcessor): consumerProgress's time
// span, topics and subscriptions by group, offset correction and cloning,
// group delete, the producer table, the broker's system topics.

// missing answers a request without one of its required header fields
// as Java's decoder does (@CFNotNull).
func missing(req *remoting.Command, fields ...string) *remoting.Command {
	for _, f := range fields {
		if _, ok := req.ExtFields[f]; !ok {
			return remoting.NewResponse(protocol.SystemError, "the custom field <"+f+"> is null")
		}
	}
	return nil
}

// handleSystemTopicsFromBroker serves GET_SYSTEM_TOPIC_LIST_FROM_BROKER
// (305): the fixed system topics (Java's TopicValidator set).
func (t *topicAdmin) handleSystemTopicsFromBroker(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	return bodyResponse(&protocol.TopicList{TopicList: meta.FixedSystemTopics()})
}

// handleTopicsByConsumer serves QUERY_TOPICS_BY_CONSUMER (343): the topics
// the group has offsets for here.
func (ca *consumerAdmin) handleTopicsByConsumer(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "group"); resp != nil {
		return resp
	}
	var h protocol.QueryTopicsByConsumerRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	topics := ca.offsets.TopicsOfGroup(h.Group)
	if topics == nil {
		topics = []string{}
	}
	return bodyResponse(&protocol.TopicList{TopicList: topics, BrokerAddr: ca.storeHost.String()})
}

// handleSubscriptionByConsumer serves QUERY_SUBSCRIPTION_BY_CONSUMER (345):
// the subscription the group's online consumers hold for the topic.
func (ca *consumerAdmin) handleSubscriptionByConsumer(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "group"); resp != nil {
		return resp
	}
	var h protocol.QuerySubscriptionByConsumerRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	body := protocol.QuerySubscriptionResponseBody{Group: h.Group, Topic: h.Topic}
	if sub, ok := ca.clients.FindSubscription(h.Group, h.Topic); ok {
		body.SubscriptionData = sub
	}
	return bodyResponse(&body)
}

// handleConsumeTimeSpan serves QUERY_CONSUME_TIME_SPAN (303): per write
// queue of the topic, the store times of its first and last message, of
// the group's position and how long the next message has waited.
func (ca *consumerAdmin) handleConsumeTimeSpan(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "topic", "group"); resp != nil {
		return resp
	}
	var h protocol.QueryConsumeTimeSpanRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	tc, found := ca.topics.Get(h.Topic)
	if !found {
		return remoting.NewResponse(protocol.TopicNotExist, "topic["+h.Topic+"] not exist")
	}
	body := protocol.QueryConsumeTimeSpanBody{ConsumeTimeSpanSet: make([]protocol.QueueTimeSpan, 0, tc.WriteQueueNums)}
	now := time.Now().UnixMilli()
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		span := protocol.QueueTimeSpan{MessageQueue: protocol.MessageQueue{Topic: h.Topic, BrokerName: ca.cfg.BrokerName, QueueID: q}}
		lo, hi := ca.store.MinOffset(h.Topic, q), ca.store.MaxOffset(h.Topic, q)
		span.MinTimeStamp = ca.store.MessageStoreTimestamp(h.Topic, q, lo)
		span.MaxTimeStamp = ca.store.MessageStoreTimestamp(h.Topic, q, hi-1)
		consumed, _ := ca.offsets.Query(h.Group, h.Topic, q)
		span.ConsumeTimeStamp = span.MinTimeStamp
		if consumed > 0 {
			span.ConsumeTimeStamp = ca.store.MessageStoreTimestamp(h.Topic, q, consumed-1)
		}
		if consumed < hi {
			if next := ca.store.MessageStoreTimestamp(h.Topic, q, max(consumed, lo)); next > 0 {
				span.DelayTime = now - next
			}
		}
		body.ConsumeTimeSpanSet = append(body.ConsumeTimeSpanSet, span)
	}
	return bodyResponse(&body)
}

// handleCorrectionOffset serves QUERY_CORRECTION_OFFSET (308): per queue,
// the lowest offset the topic's other groups (all but filterGroups) have
// committed, or MaxInt64 where compareGroup is already behind it. Java's
// version also deletes the filter groups' offsets as a side effect of
// iterating; rocketd does not.
func (ca *consumerAdmin) handleCorrectionOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "compareGroup", "topic"); resp != nil {
		return resp
	}
	var h protocol.QueryCorrectionOffsetHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	var exclude []string
	if strings.TrimSpace(h.FilterGroups) != "" {
		exclude = strings.Split(h.FilterGroups, ",")
	}
	correction := ca.offsets.MinOffsets(h.Topic, exclude, func(q int32) int64 { return ca.store.MinOffset(h.Topic, q) })
	for q, off := range ca.offsets.QueryAll(h.CompareGroup, h.Topic) {
		if cur, ok := correction[q]; ok && cur > off {
			correction[q] = 1<<63 - 1
		}
	}
	return bodyResponse(&protocol.QueryCorrectionOffsetBody{CorrectionOffsets: correction})
}

// handleCloneGroupOffset serves CLONE_GROUP_OFFSET (314): the source
// group's offsets copied to the destination group, for one topic or all
// the source has. Unless offline, a topic the source's online consumers do
// not subscribe (while they subscribe others) is skipped, as in Java.
func (ca *consumerAdmin) handleCloneGroupOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "srcGroup", "destGroup"); resp != nil {
		return resp
	}
	var h protocol.CloneGroupOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	topics := []string{h.Topic}
	if strings.TrimSpace(h.Topic) == "" {
		topics = ca.offsets.TopicsOfGroup(h.SrcGroup)
	}
	online, subscribesAny := ca.clients.ConsumerGroup(h.SrcGroup)
	subscribesAny = subscribesAny && len(online.Subscriptions) > 0
	for _, topic := range topics {
		if !ca.topics.Contains(topic) {
			ca.log.Warn("clone group offset: topic does not exist", "topic", topic, "src", h.SrcGroup)
			continue
		}
		if !h.Offline && subscribesAny {
			if _, ok := ca.clients.FindSubscription(h.SrcGroup, topic); !ok {
				ca.log.Warn("clone group offset: the source group's consumers do not subscribe the topic",
					"topic", topic, "src", h.SrcGroup)
				continue
			}
		}
		ca.offsets.Clone(h.SrcGroup, h.DestGroup, topic)
	}
	return ok(nil)
}

// handleDeleteGroup serves DELETE_SUBSCRIPTIONGROUP (207): the group's
// config, and with removeOffset (4.9) / cleanOffset (5.x) its offsets.
func (g *groupAdmin) handleDeleteGroup(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "groupName"); resp != nil {
		return resp
	}
	var h protocol.DeleteSubscriptionGroupRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if _, err := g.groups.Delete(h.GroupName); err != nil {
		return remoting.ErrorResponse(err)
	}
	removed := 0
	if h.RemoveOffset {
		removed = g.offsets.DeleteGroup(h.GroupName)
	}
	g.log.Info("subscription group deleted", "group", h.GroupName, "offsetsRemoved", removed, "remote", conn.RemoteAddr())
	return ok(nil)
}

// handleAllProducerInfo serves GET_ALL_PRODUCER_INFO (328): every producer
// channel by group.
func (ca *consumerAdmin) handleAllProducerInfo(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	table := protocol.ProducerTableInfo{Data: map[string][]protocol.ProducerInfo{}}
	for _, g := range ca.clients.ProducerGroups() {
		chans := ca.clients.ProducerChannels(g)
		infos := make([]protocol.ProducerInfo, 0, len(chans))
		for _, ci := range chans {
			infos = append(infos, protocol.ProducerInfo{ClientID: ci.ClientID, RemoteIP: ci.Channel.RemoteAddr(),
				Language: ci.Language.String(), Version: ci.Version, LastUpdateTimestamp: ci.LastUpdate.UnixMilli()})
		}
		table.Data[g] = infos
	}
	return bodyResponse(&table)
}

// maxQueryConsumeQueueCount bounds one QUERY_CONSUME_QUEUE answer (Java
// has no bound; a count of millions would build a huge body).
const maxQueryConsumeQueueCount = 10000

// handleQueryConsumeQueue serves QUERY_CONSUME_QUEUE (321, mqadmin
// queryCq): count units of a ConsumeQueue from index, with the group's
// subscription when a group is named.
func (ca *consumerAdmin) handleQueryConsumeQueue(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueryConsumeQueueRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	count := int(min(max(h.Count, 0), maxQueryConsumeQueueCount))
	units, found, err := ca.store.QueueUnits(h.Topic, h.QueueID, h.Index, count)
	if !found {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("%d@%s is not exist!", h.QueueID, h.Topic))
	}
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	body := protocol.QueryConsumeQueueResponseBody{QueueData: make([]protocol.ConsumeQueueData, 0, len(units)),
		MaxQueueIndex: ca.store.MaxOffset(h.Topic, h.QueueID), MinQueueIndex: ca.store.MinOffset(h.Topic, h.QueueID)}
	if _, named := req.ExtFields["consumerGroup"]; named {
		if sub, ok := ca.clients.FindSubscription(h.ConsumerGroup, h.Topic); ok {
			body.SubscriptionData = sub
			body.FilterData = "null" // no ConsumerFilterData: Java's JSON of null
		} else {
			body.FilterData = fmt.Sprintf("%s@%s is not online!", h.ConsumerGroup, h.Topic)
		}
	}
	for _, u := range units {
		body.QueueData = append(body.QueueData, protocol.ConsumeQueueData{PhysicOffset: u.PhysicOffset, PhysicSize: u.Size, TagsCode: u.TagsCode})
	}
	resp := bodyResponse(&body)
	if len(units) == 0 && resp.Code == protocol.Success {
		resp.Remark = fmt.Sprintf("Index %d of %d@%s is not exist!", h.Index, h.QueueID, h.Topic)
	}
	return resp
}

// handleCreateGroupList serves UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST
// (225): body {groupConfigList: [...]}, each applied as
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP would; every config is checked
// before any is applied.
func (g *groupAdmin) handleCreateGroupList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(protocol.SystemError, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST without a body")
	}
	var list protocol.SubscriptionGroupList
	if err := protocol.UnmarshalFastJSON(req.Body, &list); err != nil {
		return remoting.NewResponse(protocol.SystemError, "bad SubscriptionGroupList body: "+err.Error())
	}
	for _, gc := range list.GroupConfigList {
		if err := meta.ValidateTopic(gc.GroupName); err != nil {
			return remoting.NewResponse(protocol.SystemError, err.Error())
		}
	}
	for _, gc := range list.GroupConfigList {
		if err := g.groups.Update(gc); err != nil {
			return remoting.ErrorResponse(err)
		}
	}
	return ok(nil)
}

// handleAllMessageRequestModes serves GET_ALL_MESSAGE_REQUEST_MODE (402):
// config/messageRequestMode.json's content, or Java's SYSTEM_ERROR when
// there is no table.
func (g *groupAdmin) handleAllMessageRequestModes(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	if g.modes == nil {
		return remoting.NewResponse(protocol.SystemError, "No message request mode in this broker")
	}
	body, err := protocol.MarshalFastJSONPretty(g.modes.Snapshot())
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = body
	return resp
}
