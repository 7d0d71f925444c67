package processor

import (
	"strings"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleHeartbeat serves HEART_BEAT: producer groups and consumer groups
// with their subscriptions join the registry (which notifies a consumer
// group whose members or topics changed), each consumer group's
// subscription group is created if allowed, and its %RETRY% topic made to
// exist: the Go client looks up its route (go-client-wire.md §0 item 12).
func (p *Processor) handleHeartbeat(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var hb protocol.HeartbeatData
	if err := protocol.UnmarshalFastJSON(req.Body, &hb); err != nil {
		return remoting.ErrorResponse(err)
	}
	info := client.ClientInfo{ClientID: strings.Clone(hb.ClientID), Language: req.Language, Version: req.Version}
	p.registerClient(conn, info, &hb)
	return ok(nil)
}

// registerClient registers the consumers and producers of a heartbeat
// that came on ch.
func (p *Processor) registerClient(ch client.Channel, info client.ClientInfo, hb *protocol.HeartbeatData) {
	for i := range hb.ConsumerDataSet {
		data := &hb.ConsumerDataSet[i]
		notify := true
		if gc, found := p.groups.FindOrCreate(data.GroupName); found {
			notify = gc.NotifyConsumerIdsChangedEnable
			if _, _, err := p.topics.EnsureRetryTopic(data.GroupName, gc.RetryQueueNums); err != nil {
				p.log.Warn("heartbeat: retry topic not created", "group", data.GroupName, "err", err)
			}
		}
		p.clients.RegisterConsumer(ch, info, data, notify)
	}
	for _, pd := range hb.ProducerDataSet {
		p.clients.RegisterProducer(pd.GroupName, ch, info)
	}
}

// handleUnregisterClient serves UNREGISTER_CLIENT (Java clients at
// shutdown; the Go client never sends it).
func (p *Processor) handleUnregisterClient(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.UnregisterClientRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if h.ProducerGroup != "" {
		p.clients.UnregisterProducer(h.ProducerGroup, conn)
	}
	if h.ConsumerGroup != "" {
		notify := true
		if gc, found := p.groups.Get(h.ConsumerGroup); found {
			notify = gc.NotifyConsumerIdsChangedEnable
		}
		p.clients.UnregisterConsumer(h.ConsumerGroup, conn, notify)
	}
	return ok(nil)
}

// handleConsumerList serves GET_CONSUMER_LIST_BY_GROUP.
func (p *Processor) handleConsumerList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ConsumerGroupRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	ids := p.clients.ConsumerIDs(h.ConsumerGroup)
	if len(ids) == 0 {
		return remoting.NewResponse(protocol.SystemError, "no consumer for this group, "+h.ConsumerGroup)
	}
	return bodyResponse(&protocol.GetConsumerListByGroupResponseBody{ConsumerIDList: ids})
}

// handleLockBatch serves LOCK_BATCH_MQ for orderly consumers: the body
// lists the queues the client holds afterwards.
func (p *Processor) handleLockBatch(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var b protocol.LockBatchRequestBody
	if err := protocol.UnmarshalFastJSON(req.Body, &b); err != nil {
		return remoting.ErrorResponse(err)
	}
	locked := p.clients.Locks().TryLockBatch(b.ConsumerGroup, b.ClientID, b.MQSet)
	if locked == nil {
		locked = []protocol.MessageQueue{}
	}
	return bodyResponse(&protocol.LockBatchResponseBody{LockOKMQSet: locked})
}

// handleUnlockBatch serves UNLOCK_BATCH_MQ.
func (p *Processor) handleUnlockBatch(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var b protocol.LockBatchRequestBody
	if err := protocol.UnmarshalFastJSON(req.Body, &b); err != nil {
		return remoting.ErrorResponse(err)
	}
	p.clients.Locks().UnlockBatch(b.ConsumerGroup, b.ClientID, b.MQSet)
	return ok(nil)
}
