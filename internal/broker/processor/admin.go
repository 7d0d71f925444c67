package processor

import (
	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/store"
	"net/netip"
	"strconv"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// consumerAdmin serves the admin codes about consumers and producers:
// consume stats and progress, connections, who consumes what, offset
// corrections, clone and reset, and the calls passed on to a consumer
// (running info, consume directly, status).
type consumerAdmin struct {
	base
	store     *store.Store
	topics    *meta.Topics
	groups    *meta.Groups
	offsets   *meta.Offsets
	clients   *client.Registry
	storeHost netip.AddrPort // names this broker in GET_BROKER_CONSUME_STATS, QUERY_TOPICS_BY_CONSUMER
	stats     *stats.Stats   // consume TPS
}

func (ca *consumerAdmin) register(srv *remoting.Server, pools Families) {
	srv.Handle(protocol.GetConsumeStats, pools.Admin, ca.handleConsumeStats)
	srv.Handle(protocol.GetBrokerConsumeStats, pools.Admin, ca.handleBrokerConsumeStats)
	srv.Handle(protocol.GetAllConsumerOffset, pools.Admin, ca.handleAllConsumerOffset)
	srv.Handle(protocol.GetConsumerConnectionList, pools.Admin, ca.handleConsumerConnections)
	srv.Handle(protocol.GetProducerConnectionList, pools.Admin, ca.handleProducerConnections)
	srv.Handle(protocol.GetAllProducerInfo, pools.Admin, ca.handleAllProducerInfo)
	srv.Handle(protocol.QueryTopicConsumeByWho, pools.Admin, ca.handleConsumeByWho)
	srv.Handle(protocol.QueryTopicsByConsumer, pools.Admin, ca.handleTopicsByConsumer)
	srv.Handle(protocol.QuerySubscriptionByConsumer, pools.Admin, ca.handleSubscriptionByConsumer)
	srv.Handle(protocol.QueryConsumeTimeSpan, pools.Admin, ca.handleConsumeTimeSpan)
	srv.Handle(protocol.QueryCorrectionOffset, pools.Admin, ca.handleCorrectionOffset)
	srv.Handle(protocol.QueryConsumeQueue, pools.Admin, ca.handleQueryConsumeQueue)
	srv.Handle(protocol.CloneGroupOffset, pools.Admin, ca.masterOnly(ca.handleCloneGroupOffset))
	srv.Handle(protocol.InvokeBrokerToResetOffset, pools.Admin, ca.handleResetOffset)
	srv.Handle(protocol.GetConsumerRunningInfo, pools.Admin, ca.handleConsumerRunningInfo)
	srv.Handle(protocol.ConsumeMessageDirectly, pools.Admin, ca.handleConsumeMessageDirectly)
	srv.Handle(protocol.InvokeBrokerToGetConsumerStatus, pools.Admin, ca.handleConsumerStatus)
}

// handleConsumeStats serves GET_CONSUME_STATS: per queue of the group's
// topics (or the one named), broker max offset and committed offset.
func (ca *consumerAdmin) handleConsumeStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetConsumeStatsRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	topics := ca.offsets.TopicsOfGroup(h.ConsumerGroup)
	if h.Topic != "" {
		topics = []string{h.Topic}
	}
	stats := protocol.ConsumeStats{OffsetTable: map[protocol.MessageQueue]protocol.OffsetWrapper{}}
	for _, topic := range topics {
		tc, found := ca.topics.Get(topic)
		if !found {
			continue
		}
		ca.addQueueProgress(&stats, h.ConsumerGroup, topic, tc.ReadQueueNums)
		stats.ConsumeTps += ca.stats.GroupGetTPS(h.ConsumerGroup, topic)
	}
	return bodyResponse(&stats)
}

// addQueueProgress puts the progress of group on queues [0, queues) of
// topic into stats: the broker's max offset, the committed offset (0 when
// none) and the store time of the last consumed message (0 when unknown),
// as Java's getConsumeStats and fetchAllConsumeStatsInBroker build it.
func (ca *consumerAdmin) addQueueProgress(stats *protocol.ConsumeStats, group, topic string, queues int32) {
	for q := int32(0); q < queues; q++ {
		w := protocol.OffsetWrapper{BrokerOffset: max(ca.store.MaxOffset(topic, q), 0)}
		if off, ok := ca.offsets.Query(group, topic, q); ok {
			w.ConsumerOffset = max(off, 0)
		}
		if w.ConsumerOffset > 0 {
			w.LastTimestamp = max(ca.store.MessageStoreTimestamp(topic, q, w.ConsumerOffset-1), 0)
		}
		stats.OffsetTable[protocol.MessageQueue{Topic: topic, BrokerName: ca.cfg.BrokerName, QueueID: q}] = w
	}
}

// handleCreateGroup serves UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: the whole
// 5.x SubscriptionGroupConfig is stored (meta.Groups.Update).
func (g *groupAdmin) handleCreateGroup(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(protocol.SystemError, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP without a body")
	}
	var gc protocol.SubscriptionGroupConfig
	if err := protocol.UnmarshalFastJSON(req.Body, &gc); err != nil {
		return remoting.ErrorResponse(err)
	}
	if err := meta.ValidateTopic(gc.GroupName); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if err := g.groups.Update(gc); err != nil {
		return remoting.ErrorResponse(err)
	}
	return ok(nil)
}

// handleConsumerConnections serves GET_CONSUMER_CONNECTION_LIST.
func (ca *consumerAdmin) handleConsumerConnections(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ConsumerGroupRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	g, found := ca.clients.ConsumerGroup(h.ConsumerGroup)
	if !found {
		return remoting.NewResponse(protocol.ConsumerNotOnline, "the consumer group not online")
	}
	cc := g.ConsumerConnection()
	return bodyResponse(&cc)
}

// handleViewMessage serves VIEW_MESSAGE_BY_ID: the stored record at a
// CommitLog offset (decoded by the caller from an offset message id).
func (ma *messageAdmin) handleViewMessage(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ViewMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	rec, found := readRecord(ma.store, ma.live().MaxMessageSize, h.Offset)
	if !found {
		return remoting.NewResponse(protocol.SystemError, "can not find message by the offset, "+strconv.FormatInt(h.Offset, 10))
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = rec
	return resp
}

// readRecord returns a copy of the whole stored record at a CommitLog
// offset; false when there is none (or its size field is absurd:
// more than maxMessageSize and 64 KiB of header).
func readRecord(st *store.Store, maxMessageSize int, offset int64) ([]byte, bool) {
	size, err := st.ReadMessage(offset, 4)
	if err != nil || len(size.Bytes) < 4 {
		size.Release()
		return nil, false
	}
	total := int32(uint32(size.Bytes[0])<<24 | uint32(size.Bytes[1])<<16 | uint32(size.Bytes[2])<<8 | uint32(size.Bytes[3]))
	size.Release()
	if total <= 0 || total > int32(maxMessageSize)+64<<10 {
		return nil, false
	}
	buf, err := st.ReadMessage(offset, total)
	if err != nil {
		return nil, false
	}
	rec := append([]byte(nil), buf.Bytes...)
	buf.Release()
	return rec, true
}

// handleProducerConnections serves GET_PRODUCER_CONNECTION_LIST.
func (ca *consumerAdmin) handleProducerConnections(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetProducerConnectionListRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	chans := ca.clients.ProducerChannels(h.ProducerGroup)
	if len(chans) == 0 {
		return remoting.NewResponse(protocol.SystemError, "the producer group["+h.ProducerGroup+"] not exist")
	}
	pc := protocol.ProducerConnection{ConnectionSet: make([]protocol.Connection, len(chans))}
	for i, ch := range chans {
		pc.ConnectionSet[i] = ch.Connection()
	}
	return bodyResponse(&pc)
}

// handleConsumeByWho serves QUERY_TOPIC_CONSUME_BY_WHO: the groups online
// on the topic and those with offsets on it.
func (ca *consumerAdmin) handleConsumeByWho(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.TopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	seen := map[string]bool{}
	list := protocol.GroupList{GroupList: []string{}}
	for _, g := range append(ca.clients.GroupsSubscribing(h.Topic), ca.offsets.GroupsOfTopic(h.Topic)...) {
		if !seen[g] {
			seen[g] = true
			list.GroupList = append(list.GroupList, g)
		}
	}
	return bodyResponse(&list)
}
