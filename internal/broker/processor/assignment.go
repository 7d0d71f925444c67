package processor

import (
	"context"
	"fmt"
	"slices"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleQueryAssignment serves QUERY_ASSIGNMENT (400), server-side
// rebalance (Java's QueryAssignmentProcessor.queryAssignment): the queues
// of the topic the client gets, each with the topic@group's request mode.
// A broadcasting group gets every queue; a clustering group's queues are
// split among its clients by the named strategy (AVG, AVG_BY_CIRCLE), or
// for POP by allocateForPop. When Java finds no valid answer (unknown
// topic, strategy or group, no queue) it still answers SUCCESS, with no
// assignment list: the client keeps what it has.
//
// The queues are every broker's readable queues of the topic, from the
// NameServer's route (as Java's TopicRouteInfoManager, without its cache),
// or this broker's when it has no NameServer.
func (c *clientFamily) handleQueryAssignment(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	b, err := protocol.DecodeQueryAssignmentRequestBody(req.Body)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	mode := c.requestMode(b.Topic, b.ConsumerGroup)
	var body protocol.QueryAssignmentResponseBody
	if mqs, valid := c.loadBalance(&b, mode); valid {
		list := make([]protocol.MessageQueueAssignment, len(mqs))
		for i, q := range mqs {
			list[i] = protocol.MessageQueueAssignment{MessageQueue: q, Mode: mode.Mode}
		}
		body.MessageQueueAssignments = &list
	}
	return bodyResponse(&body)
}

// requestMode is the mode SET_MESSAGE_REQUEST_MODE set for topic@group,
// else the broker's default (always PULL for a retry topic).
func (c *clientFamily) requestMode(topic, group string) protocol.SetMessageRequestModeRequestBody {
	if c.modes != nil {
		if m, ok := c.modes.Get(topic, group); ok {
			return m
		}
	}
	m := protocol.SetMessageRequestModeRequestBody{Topic: topic, ConsumerGroup: group, Mode: protocol.RequestModePull}
	if !meta.IsRetryTopic(topic) && c.live().DefaultMessageRequestMode == string(protocol.RequestModePop) {
		m.Mode = protocol.RequestModePop
		m.PopShareQueueNum = int32(c.live().DefaultPopShareQueueNum)
	}
	return m
}

// loadBalance is QueryAssignmentProcessor.doLoadBalance; valid is false
// where Java returns null.
func (c *clientFamily) loadBalance(b *protocol.QueryAssignmentRequestBody, mode protocol.SetMessageRequestModeRequestBody) (mqs []protocol.MessageQueue, valid bool) {
	mqAll, found := c.subscribeQueues(b.Topic)
	if !found {
		if !meta.IsRetryTopic(b.Topic) {
			c.log.Debug("query assignment: the topic does not exist", "group", b.ConsumerGroup, "topic", b.Topic)
		}
		return nil, false
	}
	if b.MessageModel == protocol.Broadcasting || !c.live().ServerLoadBalancerEnable {
		return mqAll, true
	}
	cidAll := c.clients.ConsumerIDs(b.ConsumerGroup)
	strategy := allocateStrategies[b.StrategyName]
	// Java's strategies throw on these; the processor turns that into null.
	switch {
	case len(cidAll) == 0:
		c.log.Debug("query assignment: no consumer online", "group", b.ConsumerGroup, "topic", b.Topic)
		return nil, false
	case strategy == nil:
		c.log.Debug("query assignment: unsupported strategy", "strategy", b.StrategyName, "group", b.ConsumerGroup)
		return nil, false
	case b.ClientID == "" || len(mqAll) == 0:
		return nil, false
	}
	if mode.Mode == protocol.RequestModePop {
		return allocateForPop(strategy, b.ClientID, mqAll, cidAll, int(mode.PopShareQueueNum)), true
	}
	return strategy(b.ClientID, mqAll, cidAll), true
}

// subscribeQueues is the topic's readable queues, sorted as
// MessageQueue.compareTo (TopicRouteInfoManager.getTopicSubscribeInfo):
// from the NameServer's route of the topic (every broker's queues), or,
// without a route lookup, from this broker's topic config. found is false
// for an unknown topic or a failed lookup (Java's null).
func (c *clientFamily) subscribeQueues(topic string) (mqs []protocol.MessageQueue, found bool) {
	mqs = []protocol.MessageQueue{}
	if c.route != nil {
		route, found, err := c.route(context.Background(), topic)
		if err != nil {
			c.log.Warn("query assignment: no route", "topic", topic, "err", err)
			return nil, false
		}
		if !found {
			return nil, false
		}
		for _, qd := range route.QueueDatas {
			if meta.IsReadable(qd.Perm) {
				for q := range qd.ReadQueueNums {
					mqs = append(mqs, protocol.MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: q})
				}
			}
		}
	} else {
		tc, found := c.topics.Get(topic)
		if !found {
			return nil, false
		}
		if meta.IsReadable(tc.Perm) {
			for q := range tc.ReadQueueNums {
				mqs = append(mqs, protocol.MessageQueue{Topic: topic, BrokerName: c.cfg.BrokerName, QueueID: q})
			}
		}
	}
	slices.SortFunc(mqs, compareQueues)
	return mqs, true
}

// handleSetMessageRequestMode serves SET_MESSAGE_REQUEST_MODE (401): the
// mode is kept per topic@group in config/messageRequestMode.json.
func (c *clientFamily) handleSetMessageRequestMode(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	b, err := protocol.DecodeSetMessageRequestModeRequestBody(req.Body)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if meta.IsRetryTopic(b.Topic) {
		return remoting.NewResponse(protocol.NoPermission, "retry topic is not allowed to set mode")
	}
	if !c.topics.Contains(b.Topic) {
		return remoting.NewResponse(protocol.TopicNotExist, fmt.Sprintf("topic[%s] not exist", b.Topic))
	}
	if _, found := c.groups.FindOrCreate(b.ConsumerGroup); !found {
		return remoting.NewResponse(protocol.SubscriptionGroupNotExist, "subscription group does not exist")
	}
	if c.modes == nil {
		return remoting.NewResponse(protocol.SystemError, "this broker keeps no message request modes")
	}
	if err := c.modes.Set(b); err != nil {
		// Java logs a failed persist and answers SUCCESS; the mode would
		// then be lost at the next restart without anyone knowing.
		return remoting.NewResponse(protocol.SystemError, "message request mode set but not saved: "+err.Error())
	}
	return ok(nil)
}
