package processor

import (
	"context"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// topicAdmin serves the topic admin codes (Java's AdminBrokerProcessor):
// create (also static and in a list), delete, read one or all topic
// configs, topic stats and the system topic list. Changes are refused on
// a slave.
type topicAdmin struct {
	base
	store    *store.Store
	topics   *meta.Topics
	offsets  *meta.Offsets  // a deleted topic's offsets go too
	mappings *meta.Mappings // static topics; nil: UPDATE_AND_CREATE_STATIC_TOPIC refused
	// awaitReg waits for a NameServer registration round (Deps.AwaitRegistration).
	awaitReg func(ctx context.Context) error
}

func (t *topicAdmin) register(srv *remoting.Server, pools Families) {
	srv.Handle(protocol.UpdateAndCreateTopic, pools.Admin, t.masterOnly(t.handleCreateTopic))
	srv.Handle(protocol.UpdateAndCreateTopicList, pools.Admin, t.masterOnly(t.handleCreateTopicList))
	srv.Handle(protocol.DeleteTopicInBroker, pools.Admin, t.masterOnly(t.handleDeleteTopic))
	srv.Handle(protocol.UpdateAndCreateStaticTopic, pools.Admin, t.masterOnly(t.handleCreateStaticTopic))
	srv.Handle(protocol.GetAllTopicConfig, pools.Admin, t.handleAllTopicConfig)
	srv.Handle(protocol.GetTopicConfig, pools.Admin, t.handleGetTopicConfig)
	srv.Handle(protocol.GetTopicStatsInfo, pools.Admin, t.handleTopicStats)
	srv.Handle(protocol.GetSystemTopicListFromBroker, pools.Admin, t.handleSystemTopicsFromBroker)
}

// handleCreateTopic serves UPDATE_AND_CREATE_TOPIC, with the 5.x topic
// attributes of its header (attributes.go of meta). The topic table's
// change listener re-registers the broker with the NameServers; a request
// that changes nothing is answered at once, as in Java.
func (t *topicAdmin) handleCreateTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.CreateTopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if err := meta.ValidateTopic(h.Topic); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if t.topics.IsSystemTopic(h.Topic) {
		return remoting.NewResponse(protocol.SystemError, meta.SystemTopicConflictRemark(h.Topic))
	}
	changes, err := meta.ParseAttributeChanges(h.Attributes)
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	if code, remark := t.checkMixedType(changes); code != protocol.Success {
		return remoting.NewResponse(code, remark)
	}
	changed, err := t.topics.Update(h.TopicConfig(), changes)
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	if changed {
		t.awaitRegistration(h.Topic)
	}
	return ok(nil)
}

// checkMixedType refuses message.type=MIXED unless enableMixedMessageType
// (AdminBrokerProcessor.updateAndCreateTopic).
func (t *topicAdmin) checkMixedType(changes []meta.AttributeChange) (int32, string) {
	if t.live().EnableMixedMessageType {
		return protocol.Success, ""
	}
	for _, c := range changes {
		if c.Key == "+"+protocol.TopicAttrMessageType && c.Value == protocol.MessageTypeMixed {
			return protocol.SystemError, "MIXED message type is not supported."
		}
	}
	return protocol.Success, ""
}

// awaitRegistration waits until the NameServers were told about a topic
// change (Deps.AwaitRegistration), at most two registration timeouts (a
// round in progress, then the one with the change). A failure is logged:
// the topic is created and the next round registers it, as in Java, whose
// answer does not depend on the registration either.
func (t *topicAdmin) awaitRegistration(topic string) {
	if t.awaitReg == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*t.cfg.RegisterBrokerTimeout)
	defer cancel()
	if err := t.awaitReg(ctx); err != nil {
		t.log.Warn("processor: topic created; its registration with the NameServers is late", "topic", topic, "err", err)
	}
}

// handleDeleteTopic serves DELETE_TOPIC_IN_BROKER: the config, every
// group's offsets on it and its ConsumeQueues go (its records stay in the
// CommitLog until retention removes them, as in Java).
func (t *topicAdmin) handleDeleteTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.TopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if t.topics.IsSystemTopic(h.Topic) {
		return remoting.NewResponse(protocol.SystemError, meta.SystemTopicConflictRemark(h.Topic))
	}
	if _, err := t.topics.Delete(h.Topic); err != nil {
		return remoting.ErrorResponse(err)
	}
	t.offsets.DeleteTopic(h.Topic)
	if _, err := t.mappings.Delete(h.Topic); err != nil {
		return remoting.ErrorResponse(err)
	}
	if err := t.store.DeleteTopic(h.Topic); err != nil {
		return remoting.ErrorResponse(err)
	}
	return ok(nil)
}

// handleTopicStats serves GET_TOPIC_STATS_INFO: min/max offset and last
// store time of each write queue.
func (t *topicAdmin) handleTopicStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.TopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	tc, found := t.topics.Get(h.Topic)
	if !found {
		return remoting.NewResponse(protocol.TopicNotExist, "topic["+h.Topic+"] not exist")
	}
	stats := protocol.TopicStatsTable{OffsetTable: map[protocol.MessageQueue]protocol.TopicOffset{}}
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		to := protocol.TopicOffset{MinOffset: t.store.MinOffset(h.Topic, q), MaxOffset: t.store.MaxOffset(h.Topic, q)}
		if to.MaxOffset > 0 {
			to.LastUpdateTimestamp = t.store.MessageStoreTimestamp(h.Topic, q, to.MaxOffset-1)
		}
		stats.OffsetTable[protocol.MessageQueue{Topic: h.Topic, BrokerName: t.cfg.BrokerName, QueueID: q}] = to
	}
	return bodyResponse(&stats)
}
