package processor

import (
	"context"
	"net/netip"
	"time"

	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// The Local* methods serve requests made inside the process with the
// remoting handlers' code: the gRPC MessagingService (internal/grpc) calls
// them as Java's proxy in Local mode calls the broker's processors with a
// RemotingCommand. There is no connection: from is the client's address.

// LocalSend runs a SEND_MESSAGE(_V2) or SEND_BATCH_MESSAGE request, the
// send hooks included.
func (p *Processor) LocalSend(req *remoting.Command, from netip.AddrPort) *remoting.Command {
	return p.sends.sendHooked(nil, from, req, p.sends.newSendReply())
}

// LocalSendHeader is LocalSend for a request whose header the caller
// built (the gRPC endpoint): the header is used as it is, not written to
// an ext map and parsed back. code is SEND_MESSAGE or SEND_BATCH_MESSAGE,
// body the message's body or the batch's.
func (p *Processor) LocalSendHeader(code int32, h *protocol.SendMessageRequestHeader, body []byte, from netip.AddrPort) *remoting.Command {
	s := p.sends
	r := s.newSendReply()
	r.req = *h
	req := &remoting.Command{Code: code, Language: remoting.DefaultLanguage, Version: remoting.DefaultVersion, Body: body}
	for _, hook := range s.sendHooks {
		hook.BeforeSend(nil, &r.req)
	}
	resp := s.send(nil, from, req, &r.req, &r.resp)
	for _, hook := range s.sendHooks {
		hook.AfterSend(nil, &r.req, resp)
	}
	return resp
}

// SendResult is the SendMessageResponseHeader of a send's answer (from
// LocalSend or LocalSendHeader), read from the header the send processor
// filled in where it can be, else decoded from the answer's ext fields.
func SendResult(resp *remoting.Command) (protocol.SendMessageResponseHeader, error) {
	if e, ok := resp.Header.(*sendResponseExt); ok && resp.ExtFields == nil && e.stored {
		h := e.h
		h.MsgRegion, h.TraceOn = e.region, protocol.Some(e.traceOn == "true")
		return h, nil
	}
	var h protocol.SendMessageResponseHeader
	err := h.Decode(resp.Ext())
	return h, err
}

// LocalEndTransaction runs an END_TRANSACTION request.
func (p *Processor) LocalEndTransaction(req *remoting.Command) *remoting.Command {
	return p.sends.handleEndTransaction(nil, req)
}

// LocalPop runs a POP_MESSAGE request. A pop that finds nothing waits in
// the long-polling holder, as a remoting pop does, until a message may
// have arrived (then it pops again), the request's pollTime is over or
// ctx ends. The caller releases the answer's body (resp.Release).
func (p *Processor) LocalPop(ctx context.Context, h *protocol.PopMessageRequestHeader) *remoting.Command {
	if p.pops.pop == nil {
		return p.pops.popUnavailable(nil, &remoting.Command{Code: protocol.PopMessage})
	}
	req := remoting.NewRequest(protocol.PopMessage, protocol.Ext(h), nil)
	return localHeld(ctx, p.pops.holder, time.Now().Add(time.Duration(h.PollTime)*time.Millisecond), protocol.PollingTimeout,
		longpoll.Request{Topic: h.Topic, QueueID: pop.HoldQueue(h.QueueID)},
		func() *remoting.Command { return p.pops.popMessage(nil, req, false) },
		func(resp *remoting.Command) { resp.Code = protocol.PollingFull })
}

// localHeld runs attempt until it answers other than idle; an idle answer
// is held in the long-polling holder (hold names the queue) until an
// arrival wakes it, the deadline passes or ctx ends, then attempt runs
// again. A full holder answers at once, through full when it is set.
func localHeld(ctx context.Context, holder *longpoll.Holder, deadline time.Time, idle int32, hold longpoll.Request,
	attempt func() *remoting.Command, full func(*remoting.Command)) *remoting.Command {
	for {
		resp := attempt()
		left := time.Until(deadline)
		if resp.Code != idle || holder == nil || left <= 0 {
			return resp
		}
		w := &localWaiter{done: ctx.Done(), woke: make(chan struct{}, 1)}
		hold.Timeout, hold.Conn = left, w
		hold.Wake = func() { w.woke <- struct{}{} }
		switch holder.Hold(hold) {
		case longpoll.Held:
		case longpoll.QueueFull, longpoll.Full:
			if full != nil {
				full(resp)
			}
			return resp
		default: // stopped, or ctx ended
			return resp
		}
		select {
		case <-w.woke:
		case <-ctx.Done():
			holder.DropConn(w)
			return resp
		}
	}
}

// localWaiter stands for the connection of a held LocalPop: it closes
// with the caller's context.
type localWaiter struct {
	done <-chan struct{}
	woke chan struct{}
}

func (w *localWaiter) Closed() <-chan struct{} { return w.done }

// LocalAck acknowledges one popped message (ACK_MESSAGE).
func (p *Processor) LocalAck(h *protocol.AckMessageRequestHeader, from string) (code int32, remark string) {
	if p.pops.pop == nil {
		r := p.pops.popUnavailable(nil, &remoting.Command{Code: protocol.AckMessage})
		return r.Code, r.Remark
	}
	st := p.pops.pop.Ack(h, from)
	return st.Code, st.Remark
}

// LocalChangeInvisible runs CHANGE_MESSAGE_INVISIBLETIME.
func (p *Processor) LocalChangeInvisible(h *protocol.ChangeInvisibleTimeRequestHeader, from string) (protocol.ChangeInvisibleTimeResponseHeader, int32, string) {
	if p.pops.pop == nil {
		r := p.pops.popUnavailable(nil, &remoting.Command{Code: protocol.ChangeMessageInvisibleTime})
		return protocol.ChangeInvisibleTimeResponseHeader{}, r.Code, r.Remark
	}
	rh, st := p.pops.pop.ChangeInvisible(h, from)
	return rh, st.Code, st.Remark
}

// LocalSendBack runs CONSUMER_SEND_MSG_BACK (a message to its group's
// retry topic or, with a negative delay level, to its DLQ).
func (p *Processor) LocalSendBack(req *remoting.Command) *remoting.Command {
	return p.sends.handleSendBack(nil, req)
}

// LocalSubscription is one topic a gRPC consumer subscribes to.
type LocalSubscription struct {
	Topic, Expression, ExpressionType string
}

// LocalHeartbeat registers a gRPC client on ch as HEART_BEAT registers a
// remoting one (ClientActivity.heartbeat): a consumer of group (consuming
// passively, clustering, from the last offset, with subs), or a producer
// of each producer group.
func (p *Processor) LocalHeartbeat(ch client.Channel, info client.ClientInfo, group string, subs []LocalSubscription, producerGroups []string) {
	hb := protocol.HeartbeatData{ClientID: info.ClientID}
	if group != "" {
		cd := protocol.ConsumerData{
			GroupName: group, ConsumeType: protocol.ConsumePassively, MessageModel: protocol.Clustering,
			ConsumeFromWhere: protocol.ConsumeFromLastOffset,
		}
		for _, s := range subs {
			cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, *subscriptionFromExpr(s.Topic, s.Expression, s.ExpressionType))
		}
		hb.ConsumerDataSet = []protocol.ConsumerData{cd}
	}
	for _, g := range producerGroups {
		hb.ProducerDataSet = append(hb.ProducerDataSet, protocol.ProducerData{GroupName: g})
	}
	p.clients.registerClient(ch, info, &hb)
}

// LocalUnregister forgets a gRPC client's consumer group and producer
// groups on ch (UNREGISTER_CLIENT).
func (p *Processor) LocalUnregister(ch client.Channel, group string, producerGroups []string) {
	p.clients.unregister(ch, group, producerGroups)
}
