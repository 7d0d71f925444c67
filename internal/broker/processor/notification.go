package processor

import (
	"fmt"
	"time"

	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// NOTIFICATION, POLLING_INFO and PEEK_MESSAGE (NotificationProcessor,
// PollingInfoProcessor, PeekMessageProcessor): a POP consumer may ask
// whether a pop would find a message, waiting up to its pollTime for one;
// how many pops and notifications of a group wait on a queue; and read
// what a pop would read, all without taking anything. Notifications are
// held on the pops' long-polling keys (pop.HoldQueue), so the same
// arrivals wake them and POLLING_INFO counts both. No official client
// sends these today (the proxy's MQClientAPIExt.notification has no
// caller); Java's broker serves them, and so does rocketd.

func (pf *popFamily) handleNotification(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return pf.notification(conn, req, true)
}

// popQueueChecks are the checks of NOTIFICATION, POLLING_INFO and
// PEEK_MESSAGE, with Java's codes and remarks.
func (pf *popFamily) popQueueChecks(conn *remoting.Conn, group, topic string, queueID int32) (protocol.TopicConfig, int32, string) {
	if !pf.brokerReadable() {
		return protocol.TopicConfig{}, protocol.NoPermission, fmt.Sprintf("the broker[%s] peeking message is forbidden", pf.cfg.BrokerIP1)
	}
	return pf.popTopicChecks(conn, group, topic, queueID)
}

// popTopicChecks are the topic, queue and group checks every POP code
// makes (POP_MESSAGE makes its own before them).
func (pf *popFamily) popTopicChecks(conn *remoting.Conn, group, topic string, queueID int32) (protocol.TopicConfig, int32, string) {
	tc, found := pf.topics.Get(topic)
	if !found {
		return tc, protocol.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", topic)
	}
	if !meta.IsReadable(tc.Perm) {
		return tc, protocol.NoPermission, "the topic[" + topic + "] peeking message is forbidden"
	}
	if queueID >= tc.ReadQueueNums {
		return tc, protocol.InvalidParameter, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			queueID, topic, tc.ReadQueueNums, remoteOf(conn))
	}
	gc, found := pf.groups.FindOrCreate(group)
	if !found {
		return tc, protocol.SubscriptionGroupNotExist, fmt.Sprintf("subscription group [%s] does not exist", group)
	}
	if !gc.ConsumeEnable {
		return tc, protocol.NoPermission, "subscription group no permission, " + group
	}
	return tc, protocol.Success, ""
}

// notification follows NotificationProcessor.processRequest. allowSuspend
// is false when a held request is re-run: it then answers what it finds.
func (pf *popFamily) notification(conn *remoting.Conn, req *remoting.Command, allowSuspend bool) *remoting.Command {
	var h protocol.NotificationRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	var rh protocol.NotificationResponseHeader
	reply := func(code int32, remark string) *remoting.Command {
		resp := remoting.NewResponse(code, remark)
		if code == protocol.Success {
			resp.ExtFields = protocol.Ext(&rh)
		}
		return resp
	}
	tc, code, remark := pf.popQueueChecks(conn, h.ConsumerGroup, h.Topic, h.QueueID)
	if code != protocol.Success {
		return reply(code, remark)
	}
	rh.HasMsg = pf.pop.HasMessage(h.ConsumerGroup, h.Topic, h.QueueID, tc.ReadQueueNums, h.Order, h.AttemptID)
	if !rh.HasMsg && allowSuspend && h.PollTime > 0 && pf.holder != nil && conn != nil {
		st := pf.holder.Hold(longpoll.Request{
			Topic:   h.Topic,
			QueueID: pop.HoldQueue(h.QueueID),
			Group:   h.ConsumerGroup,
			Timeout: time.Duration(h.PollTime) * time.Millisecond,
			Conn:    conn,
			Wake:    func() { pf.wakeNotification(conn, req) },
		})
		switch st {
		case longpoll.Held:
			return nil
		case longpoll.QueueFull, longpoll.Full:
			rh.PollingFull = true
		}
	}
	return reply(protocol.Success, "")
}

// wakeNotification re-runs a held notification and writes its answer.
func (pf *popFamily) wakeNotification(conn *remoting.Conn, req *remoting.Command) {
	pf.answerHeld(conn, req, "notification", pf.notification(conn, req, false))
}

// handlePollingInfo follows PollingInfoProcessor: the number of the
// group's pops and notifications held on the queue (-1: those asking for
// any queue of the topic).
func (pf *popFamily) handlePollingInfo(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.PollingInfoRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if _, code, remark := pf.popQueueChecks(conn, h.ConsumerGroup, h.Topic, h.QueueID); code != protocol.Success {
		return remoting.NewResponse(code, remark)
	}
	var rh protocol.PollingInfoResponseHeader
	if pf.holder != nil {
		rh.PollingNum = int32(pf.holder.Waiting(h.Topic, pop.HoldQueue(h.QueueID), h.ConsumerGroup))
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = protocol.Ext(&rh)
	return resp
}

// handlePeek follows PeekMessageProcessor: SUCCESS "FOUND" with the
// records, else PULL_NOT_FOUND "NO_MESSAGE_IN_QUEUE"; restNum either way.
func (pf *popFamily) handlePeek(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.PeekMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	tc, code, remark := pf.popQueueChecks(conn, h.ConsumerGroup, h.Topic, h.QueueID)
	if code != protocol.Success {
		return remoting.NewResponse(code, remark)
	}
	res := pf.pop.Peek(h.ConsumerGroup, h.Topic, h.QueueID, tc.ReadQueueNums, int(h.MaxMsgNums))
	rh := protocol.PopMessageResponseHeader{RestNum: res.Header.RestNum}
	if len(res.Parts) == 0 {
		res.Release()
		resp := remoting.NewResponse(protocol.PullNotFound, "NO_MESSAGE_IN_QUEUE")
		resp.ExtFields = protocol.Ext(&rh)
		return resp
	}
	resp := remoting.NewResponse(protocol.Success, "FOUND")
	resp.ExtFields = protocol.Ext(&rh)
	resp.BodyParts, resp.Release = res.Parts, res.Release
	return resp
}
