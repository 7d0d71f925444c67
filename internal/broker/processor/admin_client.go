package processor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Admin requests the broker answers by asking online consumers (Java's
// Broker2Client): GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY
// are forwarded to one client, INVOKE_BROKER_TO_GET_CONSUMER_STATUS asks
// every client of the group with GET_CONSUMER_STATUS_FROM_CLIENT.

const (
	// callClientTimeout bounds a forwarded call (Java's callClient).
	callClientTimeout = 10 * time.Second
	// consumerStatusTimeout bounds each GET_CONSUMER_STATUS_FROM_CLIENT.
	consumerStatusTimeout = 5 * time.Second
	// Client versions (MQVersion ordinals) below which Java refuses.
	versionV3_0_7Snapshot int32 = 28
	versionV3_1_8Snapshot int32 = 62
)

// callConsumer forwards req (its ext fields and body) as code to the
// consumer clientID of group and returns the client's answer.
func (ca *consumerAdmin) callConsumer(code int32, req *remoting.Command, group, clientID string) *remoting.Command {
	ci, found := ca.clients.FindConsumerChannel(group, clientID)
	if !found {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("The Consumer <%s> <%s> not online", group, clientID))
	}
	if ci.Version < versionV3_1_8Snapshot {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf(
			"The Consumer <%s> Version <%d> too low to finish, please upgrade it to V3_1_8_SNAPSHOT", clientID, ci.Version))
	}
	fwd := remoting.NewRequest(code, req.Ext(), req.Body)
	ctx, cancel := context.WithTimeout(context.Background(), callClientTimeout)
	defer cancel()
	resp, err := ci.Channel.Invoke(ctx, fwd)
	switch {
	case err == nil:
		return resp
	case errors.Is(err, context.DeadlineExceeded):
		return remoting.NewResponse(protocol.ConsumeMsgTimeout, fmt.Sprintf("consumer <%s> <%s> Timeout: %v", group, clientID, err))
	default:
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("invoke consumer <%s> <%s> Exception: %v", group, clientID, err))
	}
}

// handleConsumerRunningInfo serves GET_CONSUMER_RUNNING_INFO (307): the
// client's own report (subscriptions, queues, thread stacks), forwarded.
func (ca *consumerAdmin) handleConsumerRunningInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "consumerGroup", "clientId"); resp != nil {
		return resp
	}
	var h protocol.GetConsumerRunningInfoRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	return ca.callConsumer(protocol.GetConsumerRunningInfo, req, h.ConsumerGroup, h.ClientID)
}

// handleConsumeMessageDirectly serves CONSUME_MESSAGE_DIRECTLY (309): the
// message named by its offset msgId is handed to one consumer, which
// consumes it and reports the result. As Java, the broker adds its name and
// the topic's and group's system flags to the header.
func (ca *consumerAdmin) handleConsumeMessageDirectly(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "consumerGroup"); resp != nil {
		return resp
	}
	var h protocol.ConsumeMessageDirectlyResultRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	ext := req.Ext()
	ext["brokerName"] = ca.cfg.BrokerName
	if topic := ext["topic"]; topic != "" {
		if tc, ok := ca.topics.Get(topic); ok {
			ext["topicSysFlag"] = strconv.Itoa(int(tc.TopicSysFlag))
		}
	}
	if gc, ok := ca.groups.Get(h.ConsumerGroup); ok {
		ext["groupSysFlag"] = strconv.Itoa(int(gc.GroupSysFlag))
	}
	if _, offset, err := message.ParseOffsetMsgID(h.MsgID); err == nil {
		if rec, ok := readRecord(ca.store, ca.live().MaxMessageSize, offset); ok {
			req.Body = rec
		}
	}
	return ca.callConsumer(protocol.ConsumeMessageDirectly, req, h.ConsumerGroup, h.ClientID)
}

// handleConsumerStatus serves INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223):
// each online consumer of the group (or the one whose client id is
// clientAddr) reports the offsets it holds for the topic's queues.
// Clients that fail to answer are left out, as in Java.
func (ca *consumerAdmin) handleConsumerStatus(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "topic", "group"); resp != nil {
		return resp
	}
	var h protocol.GetConsumerStatusRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	g, found := ca.clients.ConsumerGroup(h.Group)
	if !found || len(g.Channels) == 0 {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("No Any Consumer online in the consumer group: [%s]", h.Group))
	}
	ask := protocol.Ext(&protocol.GetConsumerStatusRequestHeader{Topic: h.Topic, Group: h.Group})
	body := protocol.GetConsumerStatusBody{ConsumerTable: map[string]map[protocol.MessageQueue]int64{}}
	for _, ci := range g.Channels {
		if ci.Version < versionV3_0_7Snapshot {
			return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("the client does not support this feature. version=%d", ci.Version))
		}
		if h.ClientAddr != "" && h.ClientAddr != ci.ClientID {
			continue
		}
		if table, ok := ca.askConsumerStatus(ci, ask); ok {
			body.ConsumerTable[ci.ClientID] = table
		}
		if h.ClientAddr != "" {
			break
		}
	}
	return bodyResponse(&body)
}

// askConsumerStatus sends GET_CONSUMER_STATUS_FROM_CLIENT to one client.
func (ca *consumerAdmin) askConsumerStatus(ci client.ChannelInfo, ext map[string]string) (map[protocol.MessageQueue]int64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), consumerStatusTimeout)
	defer cancel()
	resp, err := ci.Channel.Invoke(ctx, remoting.NewRequest(protocol.GetConsumerStatusFromClient, ext, nil))
	if err != nil {
		ca.log.Warn("get consumer status: client did not answer", "client", ci.ClientID, "err", err)
		return nil, false
	}
	if resp.Code != protocol.Success || len(resp.Body) == 0 {
		return nil, false
	}
	var st protocol.GetConsumerStatusBody
	if err := protocol.UnmarshalFastJSON(resp.Body, &st); err != nil {
		ca.log.Warn("get consumer status: bad body", "client", ci.ClientID, "err", err)
		return nil, false
	}
	return st.MessageQueueTable, true
}
