package processor

import (
	"context"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleCreateTopic serves UPDATE_AND_CREATE_TOPIC, with the 5.x topic
// attributes of its header (attributes.go of meta). The topic table's
// change listener re-registers the broker with the NameServers; a request
// that changes nothing is answered at once, as in Java.
func (p *Processor) handleCreateTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.CreateTopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if err := meta.ValidateTopic(h.Topic); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if p.topics.IsSystemTopic(h.Topic) {
		return remoting.NewResponse(protocol.SystemError, meta.SystemTopicConflictRemark(h.Topic))
	}
	changes, err := meta.ParseAttributeChanges(h.Attributes)
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	if code, remark := p.checkMixedType(changes); code != protocol.Success {
		return remoting.NewResponse(code, remark)
	}
	changed, err := p.topics.Update(h.TopicConfig(), changes)
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	if changed {
		p.awaitRegistration(h.Topic)
	}
	return ok(nil)
}

// checkMixedType refuses message.type=MIXED unless enableMixedMessageType
// (AdminBrokerProcessor.updateAndCreateTopic).
func (p *Processor) checkMixedType(changes []meta.AttributeChange) (int32, string) {
	if p.live().EnableMixedMessageType {
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
func (p *Processor) awaitRegistration(topic string) {
	if p.awaitReg == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*p.cfg.RegisterBrokerTimeout)
	defer cancel()
	if err := p.awaitReg(ctx); err != nil {
		p.log.Warn("processor: topic created; its registration with the NameServers is late", "topic", topic, "err", err)
	}
}

// handleDeleteTopic serves DELETE_TOPIC_IN_BROKER: the config, every
// group's offsets on it and its ConsumeQueues go (its records stay in the
// CommitLog until retention removes them, as in Java).
func (p *Processor) handleDeleteTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.TopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if p.topics.IsSystemTopic(h.Topic) {
		return remoting.NewResponse(protocol.SystemError, meta.SystemTopicConflictRemark(h.Topic))
	}
	if _, err := p.topics.Delete(h.Topic); err != nil {
		return remoting.ErrorResponse(err)
	}
	p.offsets.DeleteTopic(h.Topic)
	if _, err := p.mappings.Delete(h.Topic); err != nil {
		return remoting.ErrorResponse(err)
	}
	if err := p.store.DeleteTopic(h.Topic); err != nil {
		return remoting.ErrorResponse(err)
	}
	return ok(nil)
}

// handleTopicStats serves GET_TOPIC_STATS_INFO: min/max offset and last
// store time of each write queue.
func (p *Processor) handleTopicStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.TopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	tc, found := p.topics.Get(h.Topic)
	if !found {
		return remoting.NewResponse(protocol.TopicNotExist, "topic["+h.Topic+"] not exist")
	}
	stats := protocol.TopicStatsTable{OffsetTable: map[protocol.MessageQueue]protocol.TopicOffset{}}
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		to := protocol.TopicOffset{MinOffset: p.store.MinOffset(h.Topic, q), MaxOffset: p.store.MaxOffset(h.Topic, q)}
		if to.MaxOffset > 0 {
			to.LastUpdateTimestamp = p.store.MessageStoreTimestamp(h.Topic, q, to.MaxOffset-1)
		}
		stats.OffsetTable[protocol.MessageQueue{Topic: h.Topic, BrokerName: p.cfg.BrokerName, QueueID: q}] = to
	}
	return bodyResponse(&stats)
}
