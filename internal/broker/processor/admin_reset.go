package processor

import (
	"fmt"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// Offset reset by an admin (mqadmin resetOffsetByTime, the dashboard's
// reset): INVOKE_BROKER_TO_RESET_OFFSET (222). With useServerSideResetOffset
// (Java 5.x's default) the broker records the new offsets and each consumer
// learns its queue's from its next pull; otherwise it tells the online
// consumers with RESET_CONSUMER_CLIENT_OFFSET (220), as 4.x brokers do.

// handleResetOffset serves INVOKE_BROKER_TO_RESET_OFFSET.
func (ca *consumerAdmin) handleResetOffset(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "topic", "group", "timestamp", "isForce"); resp != nil {
		return resp
	}
	var h protocol.ResetOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	ca.log.Info("reset offset", "topic", h.Topic, "group", h.Group, "timestamp", h.Timestamp, "force", h.IsForce, "remote", conn.RemoteAddr())
	if ca.live().UseServerSideResetOffset {
		queueID := int32(-1)
		if h.QueueID.Set {
			queueID = h.QueueID.Value
		}
		return ca.resetOffsetOnBroker(h.Topic, h.Group, queueID, h.Timestamp, h.Offset)
	}
	return ca.resetOffsetInClients(h.Topic, h.Group, h.Timestamp, h.IsForce)
}

// offsetAtTime is Java's searchOffsetByTimestamp: the queue's max offset
// for a negative timestamp, else the first message stored at or after it.
func (ca *consumerAdmin) offsetAtTime(topic string, queueID int32, timestamp int64) int64 {
	if timestamp < 0 {
		return ca.store.MaxOffset(topic, queueID)
	}
	return ca.store.OffsetByTimestamp(topic, queueID, timestamp, store.BoundaryLower)
}

// resetOffsetOnBroker is Java's resetOffsetInner: one queue (to an offset,
// or by time) or every readable queue by time.
func (ca *consumerAdmin) resetOffsetOnBroker(topic, group string, queueID int32, timestamp int64, offset protocol.Optional[int64]) *remoting.Command {
	if !ca.isMaster() {
		return remoting.NewResponse(protocol.SystemError, "Can not reset offset in slave broker")
	}
	tc, found := ca.topics.Get(topic)
	if !found {
		return remoting.NewResponse(protocol.TopicNotExist, "Topic "+topic+" does not exist")
	}
	if _, found := ca.groups.Get(group); !found {
		return remoting.NewResponse(protocol.SubscriptionGroupNotExist, "Group "+group+" does not exist")
	}
	offsets := map[int32]int64{}
	switch {
	case queueID >= 0 && offset.Set && offset.Value != -1:
		lo, hi := ca.store.MinOffset(topic, queueID), ca.store.MaxOffset(topic, queueID)
		if offset.Value < lo || offset.Value > hi+1 {
			return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("Target offset %d not in consume queue range [%d-%d]", offset.Value, lo, hi))
		}
		offsets[queueID] = offset.Value
	case queueID >= 0:
		offsets[queueID] = ca.offsetAtTime(topic, queueID, timestamp)
	default:
		for q := int32(0); q < tc.ReadQueueNums; q++ {
			offsets[q] = ca.offsetAtTime(topic, q, timestamp)
		}
	}
	if len(offsets) == 0 {
		return remoting.NewResponse(protocol.SystemError, "No queues to reset.")
	}
	body := protocol.ResetOffsetBody{OffsetTable: make(map[protocol.MessageQueue]int64, len(offsets))}
	for q, off := range offsets {
		ca.offsets.AssignReset(group, topic, q, off)
		body.OffsetTable[protocol.MessageQueue{Topic: topic, BrokerName: ca.cfg.BrokerName, QueueID: q}] = off
	}
	return bodyResponse(&body)
}

// resetOffsetInClients is Java's Broker2Client.resetOffset: the offsets of
// every write queue at the timestamp (the max offset for -1), kept where
// the group is already further back unless force, sent to each online
// consumer of the group (oneway); CONSUMER_NOT_ONLINE when there is none.
func (ca *consumerAdmin) resetOffsetInClients(topic, group string, timestamp int64, force bool) *remoting.Command {
	tc, found := ca.topics.Get(topic)
	if !found {
		return remoting.NewResponse(protocol.SystemError, "[reset-offset] reset offset failed, no topic in this broker. topic="+topic)
	}
	body := protocol.ResetOffsetBody{OffsetTable: make(map[protocol.MessageQueue]int64, tc.WriteQueueNums)}
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		consumed, ok := ca.offsets.Query(group, topic, q)
		if !ok || consumed < 0 {
			return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("THe consumer group <%s> not exist", group))
		}
		at := ca.store.MaxOffset(topic, q)
		if timestamp != -1 {
			at = ca.store.OffsetByTimestamp(topic, q, timestamp, store.BoundaryLower)
		}
		at = max(at, 0)
		if !force && at >= consumed {
			at = consumed
		}
		body.OffsetTable[protocol.MessageQueue{Topic: topic, BrokerName: ca.cfg.BrokerName, QueueID: q}] = at
	}
	g, online := ca.clients.ConsumerGroup(group)
	if !online || len(g.Channels) == 0 {
		return remoting.NewResponse(protocol.ConsumerNotOnline, fmt.Sprintf(
			"Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: %d", group, topic, timestamp))
	}
	payload, err := protocol.MarshalFastJSON(&body)
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	ext := protocol.Ext(&protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: timestamp})
	for _, ci := range g.Channels {
		if ci.Version < versionV3_0_7Snapshot {
			return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("the client does not support this feature. version=%d", ci.Version))
		}
		if err := ci.Channel.InvokeOneway(remoting.NewRequest(protocol.ResetConsumerClientOffset, ext, payload)); err != nil {
			ca.log.Warn("reset offset: telling a consumer failed", "group", group, "client", ci.ClientID, "err", err)
		}
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = payload
	return resp
}
