package processor

import (
	"fmt"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"time"

	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// popTimeoutSlack is how late a POP_MESSAGE may arrive after its bornTime
// plus pollTime before it is answered POLLING_TIMEOUT at once (Java's
// isTimeoutTooMuch: the client has given up on it).
const popTimeoutSlack = 500 * time.Millisecond

// popFamily serves POP consumption (Java's PopMessageProcessor,
// AckMessageProcessor, ChangeInvisibleTimeProcessor,
// NotificationProcessor, PollingInfoProcessor, PeekMessageProcessor): the
// header checks and the pull path's filter here, the rest in package pop.
// With no pop service (a slave) its codes answer SERVICE_NOT_AVAILABLE.
type popFamily struct {
	base
	pop     *pop.Service     // nil: not served
	holder  *longpoll.Holder // nil: no long polling
	topics  *meta.Topics
	groups  *meta.Groups
	filters *filters
}

// register routes the POP codes (package pop). Without a pop service
// (a slave) they are answered SERVICE_NOT_AVAILABLE: pops and acks write
// to the store, which only the master does.
func (pf *popFamily) register(srv *remoting.Server, pools Families) {
	if pf.pop == nil {
		for _, code := range []int32{protocol.PopMessage, protocol.AckMessage, protocol.BatchAckMessage, protocol.ChangeMessageInvisibleTime,
			protocol.Notification, protocol.PollingInfo, protocol.PeekMessage} {
			srv.Handle(code, pools.Admin, pf.popUnavailable)
		}
		return
	}
	srv.Handle(protocol.PopMessage, pools.Pull, pf.handlePop)
	srv.Handle(protocol.AckMessage, pools.Offset, pf.handleAck)
	srv.Handle(protocol.BatchAckMessage, pools.Offset, pf.handleBatchAck)
	srv.Handle(protocol.ChangeMessageInvisibleTime, pools.Offset, pf.handleChangeInvisible)
	srv.Handle(protocol.Notification, pools.Pull, pf.handleNotification)
	srv.Handle(protocol.PollingInfo, pools.Pull, pf.handlePollingInfo)
	srv.Handle(protocol.PeekMessage, pools.Pull, pf.handlePeek)
}

func (pf *popFamily) popUnavailable(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return remoting.NewResponse(protocol.ServiceNotAvailable,
		fmt.Sprintf("the broker[%s] serves POP consumption on its master only (request %d)", pf.cfg.BrokerIP1, req.Code))
}

func (pf *popFamily) handlePop(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return pf.popMessage(conn, req, true)
}

// popMessage follows PopMessageProcessor.processRequest. allowSuspend is
// false when a held pop is re-run.
func (pf *popFamily) popMessage(conn *remoting.Conn, req *remoting.Command, allowSuspend bool) *remoting.Command {
	var h protocol.PopMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	var rh protocol.PopMessageResponseHeader
	reply := func(code int32, remark string) *remoting.Command {
		resp := remoting.NewResponse(code, remark)
		resp.ExtFields = protocol.Ext(&rh)
		return resp
	}
	now := time.Now()
	if allowSuspend && h.BornTime > 0 &&
		now.Sub(time.UnixMilli(h.BornTime)) > time.Duration(h.PollTime)*time.Millisecond+popTimeoutSlack {
		return reply(protocol.PollingTimeout, fmt.Sprintf("the broker[%s] pop message is timeout too much", pf.cfg.BrokerIP1))
	}
	if !pf.brokerReadable() {
		return reply(protocol.NoPermission, fmt.Sprintf("the broker[%s] pop message is forbidden", pf.cfg.BrokerIP1))
	}
	if h.MaxMsgNums > pop.MaxPopNums {
		return reply(protocol.InvalidParameter, fmt.Sprintf("the broker[%s] pop message's num is greater than %d", pf.cfg.BrokerIP1, pop.MaxPopNums))
	}
	if !pf.cfg.TimerWheelEnable {
		return reply(protocol.SystemError, fmt.Sprintf("the broker[%s] pop message is forbidden because timerWheelEnable is false", pf.cfg.BrokerIP1))
	}
	tc, code, remark := pf.popTopicChecks(conn, h.ConsumerGroup, h.Topic, h.QueueID)
	if code != protocol.Success {
		return reply(code, remark)
	}
	// The pull path's filters: the expression travels in the request.
	ph := protocol.PullMessageRequestHeader{ConsumerGroup: h.ConsumerGroup, Topic: h.Topic, Subscription: h.Exp, ExpressionType: h.ExpType}
	var sub *protocol.SubscriptionData
	if h.Exp != "" {
		sub = subscriptionFromExpr(h.Topic, h.Exp, h.ExpType)
	}
	filter, fcode, remark := pf.filters.pullFilter(&ph, sub, true)
	if fcode != protocol.Success {
		return reply(fcode, remark)
	}

	res := pf.pop.Pop(&pop.Request{
		Group: h.ConsumerGroup, Topic: h.Topic, QueueID: h.QueueID, MaxMsgNums: int(h.MaxMsgNums),
		InvisibleTime: h.InvisibleTime, InitMode: h.InitMode, Order: h.Order, AttemptID: h.AttemptID, Filter: filter,
	}, tc)
	rh = res.Header
	if len(res.Parts) > 0 {
		resp := reply(protocol.Success, "FOUND")
		resp.BodyParts, resp.Release = res.Parts, res.Release
		return resp
	}
	res.Release()
	if allowSuspend && h.PollTime > 0 && pf.holder != nil && conn != nil {
		st := pf.holder.Hold(longpoll.Request{
			Topic:   h.Topic,
			QueueID: pop.HoldQueue(h.QueueID),
			Group:   h.ConsumerGroup,
			Offset:  0, // woken by pop.Service.Arrived's notifications only
			Timeout: time.Duration(h.PollTime) * time.Millisecond,
			Match:   func(code int64) bool { return code == pop.WakeAll || filter.MatchTagsCode(code) },
			Conn:    conn,
			Wake:    func() { pf.wakePop(conn, req) },
		})
		switch st {
		case longpoll.Held:
			return nil
		case longpoll.QueueFull, longpoll.Full:
			return reply(protocol.PollingFull, "NO_MESSAGE_IN_QUEUE")
		}
	}
	return reply(protocol.PollingTimeout, "NO_MESSAGE_IN_QUEUE")
}

// wakePop re-runs a held pop and writes its answer.
func (pf *popFamily) wakePop(conn *remoting.Conn, req *remoting.Command) {
	pf.answerHeld(conn, req, "pop", pf.popMessage(conn, req, false))
}

// answerHeld writes the answer of a held request that was re-run, with
// the request's opaque.
func (pf *popFamily) answerHeld(conn *remoting.Conn, req *remoting.Command, what string, resp *remoting.Command) {
	resp.Opaque, resp.SerializeType = req.Opaque, req.SerializeType
	if err := conn.WriteResponse(resp); err != nil {
		pf.log.Debug(what+": deferred response not written", "remote", conn.RemoteAddr(), "err", err)
	}
}

func (pf *popFamily) handleAck(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.AckMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	st := pf.pop.Ack(&h, remoteOf(conn))
	return remoting.NewResponse(st.Code, st.Remark)
}

func (pf *popFamily) handleBatchAck(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var body protocol.BatchAckMessageRequestBody
	if len(req.Body) > 0 {
		if err := protocol.UnmarshalFastJSON(req.Body, &body); err != nil {
			return remoting.NewResponse(protocol.SystemError, "decode BatchAckMessageRequestBody: "+err.Error())
		}
	}
	st := pf.pop.BatchAck(&body, remoteOf(conn))
	return remoting.NewResponse(st.Code, st.Remark)
}

func (pf *popFamily) handleChangeInvisible(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ChangeInvisibleTimeRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	rh, st := pf.pop.ChangeInvisible(&h, remoteOf(conn))
	resp := remoting.NewResponse(st.Code, st.Remark)
	if st.Code == protocol.Success {
		resp.ExtFields = protocol.Ext(&rh)
	}
	return resp
}

func remoteOf(conn *remoting.Conn) string {
	if conn == nil {
		return ""
	}
	return conn.RemoteAddr()
}
