package processor

import (
	"context"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"strings"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// clientFamily serves the clients' registration and rebalance (Java's
// ClientManageProcessor, QueryAssignmentProcessor, and the consumer list
// and queue locks): HEART_BEAT, UNREGISTER_CLIENT, CHECK_CLIENT_CONFIG,
// GET_CONSUMER_LIST_BY_GROUP, LOCK/UNLOCK_BATCH_MQ, QUERY_ASSIGNMENT,
// SET_MESSAGE_REQUEST_MODE.
type clientFamily struct {
	base
	clients *client.Registry
	groups  *meta.Groups
	topics  *meta.Topics
	modes   *meta.RequestModes // nil: SET_MESSAGE_REQUEST_MODE refused
	// route looks a topic's route up on the NameServer (Deps.TopicRoute);
	// nil: this broker is the whole cluster.
	route   func(ctx context.Context, topic string) (protocol.TopicRouteData, bool, error)
	filters *filters // CHECK_CLIENT_CONFIG compiles with the pulls' cache
}

func (c *clientFamily) register(srv *remoting.Server, pools Families) {
	srv.Handle(protocol.HeartBeat, pools.Client, c.handleHeartbeat)
	srv.Handle(protocol.CheckClientConfig, pools.Client, c.handleCheckClientConfig)
	srv.Handle(protocol.UnregisterClient, pools.Client, c.handleUnregisterClient)
	srv.Handle(protocol.QueryAssignment, pools.Client, c.handleQueryAssignment)
	srv.Handle(protocol.SetMessageRequestMode, pools.Client, c.handleSetMessageRequestMode)
	srv.Handle(protocol.GetConsumerListByGroup, pools.Offset, c.handleConsumerList)
	srv.Handle(protocol.LockBatchMQ, pools.Admin, c.handleLockBatch)
	srv.Handle(protocol.UnlockBatchMQ, pools.Admin, c.handleUnlockBatch)
}

// handleHeartbeat serves HEART_BEAT: producer groups and consumer groups
// with their subscriptions join the registry (which notifies a consumer
// group whose members or topics changed), each consumer group's
// subscription group is created if allowed, and its %RETRY% topic made to
// exist: the Go client looks up its route (go-client-wire.md §0 item 12).
func (c *clientFamily) handleHeartbeat(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var hb protocol.HeartbeatData
	if err := protocol.UnmarshalFastJSON(req.Body, &hb); err != nil {
		return remoting.ErrorResponse(err)
	}
	info := client.ClientInfo{ClientID: strings.Clone(hb.ClientID), Language: req.Language, Version: req.Version}
	c.registerClient(conn, info, &hb)
	return ok(nil)
}

// registerClient registers the consumers and producers of a heartbeat
// that came on ch.
func (c *clientFamily) registerClient(ch client.Channel, info client.ClientInfo, hb *protocol.HeartbeatData) {
	for i := range hb.ConsumerDataSet {
		data := &hb.ConsumerDataSet[i]
		notify := true
		if gc, found := c.groups.FindOrCreate(data.GroupName); found {
			notify = gc.NotifyConsumerIdsChangedEnable
			if _, _, err := c.topics.EnsureRetryTopic(data.GroupName, gc.RetryQueueNums); err != nil {
				c.log.Warn("heartbeat: retry topic not created", "group", data.GroupName, "err", err)
			}
		}
		c.clients.RegisterConsumer(ch, info, data, notify)
	}
	for _, pd := range hb.ProducerDataSet {
		c.clients.RegisterProducer(pd.GroupName, ch, info)
	}
}

// handleUnregisterClient serves UNREGISTER_CLIENT (Java clients at
// shutdown; the Go client never sends it).
func (c *clientFamily) handleUnregisterClient(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.UnregisterClientRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if h.ProducerGroup != "" {
		c.clients.UnregisterProducer(h.ProducerGroup, conn)
	}
	if h.ConsumerGroup != "" {
		notify := true
		if gc, found := c.groups.Get(h.ConsumerGroup); found {
			notify = gc.NotifyConsumerIdsChangedEnable
		}
		c.clients.UnregisterConsumer(h.ConsumerGroup, conn, notify)
	}
	return ok(nil)
}

// handleConsumerList serves GET_CONSUMER_LIST_BY_GROUP.
func (c *clientFamily) handleConsumerList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ConsumerGroupRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	ids := c.clients.ConsumerIDs(h.ConsumerGroup)
	if len(ids) == 0 {
		return remoting.NewResponse(protocol.SystemError, "no consumer for this group, "+h.ConsumerGroup)
	}
	return bodyResponse(&protocol.GetConsumerListByGroupResponseBody{ConsumerIDList: ids})
}

// handleLockBatch serves LOCK_BATCH_MQ for orderly consumers: the body
// lists the queues the client holds afterwards.
func (c *clientFamily) handleLockBatch(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var b protocol.LockBatchRequestBody
	if err := protocol.UnmarshalFastJSON(req.Body, &b); err != nil {
		return remoting.ErrorResponse(err)
	}
	locked := c.clients.Locks().TryLockBatch(b.ConsumerGroup, b.ClientID, b.MQSet)
	if locked == nil {
		locked = []protocol.MessageQueue{}
	}
	return bodyResponse(&protocol.LockBatchResponseBody{LockOKMQSet: locked})
}

// handleUnlockBatch serves UNLOCK_BATCH_MQ.
func (c *clientFamily) handleUnlockBatch(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var b protocol.LockBatchRequestBody
	if err := protocol.UnmarshalFastJSON(req.Body, &b); err != nil {
		return remoting.ErrorResponse(err)
	}
	c.clients.Locks().UnlockBatch(b.ConsumerGroup, b.ClientID, b.MQSet)
	return ok(nil)
}

// unregister forgets a consumer group (if not empty) and producer groups
// on ch, as UNREGISTER_CLIENT does.
func (c *clientFamily) unregister(ch client.Channel, group string, producerGroups []string) {
	for _, g := range producerGroups {
		c.clients.UnregisterProducer(g, ch)
	}
	if group != "" {
		notify := true
		if gc, found := c.groups.Get(group); found {
			notify = gc.NotifyConsumerIdsChangedEnable
		}
		c.clients.UnregisterConsumer(group, ch, notify)
	}
}
