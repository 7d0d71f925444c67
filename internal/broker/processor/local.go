package processor

import (
	"net/netip"

	"github.com/rocketd/rocketd/internal/remoting"
)

// The Local* methods serve requests made inside the process with the
// remoting handlers' code: the gRPC MessagingService (internal/grpc) calls
// them as Java's proxy in Local mode calls the broker's processors with a
// RemotingCommand. There is no connection: from is the client's address.

// LocalSend runs a SEND_MESSAGE(_V2) or SEND_BATCH_MESSAGE request, the
// send hooks included.
func (p *Processor) LocalSend(req *remoting.Command, from netip.AddrPort) *remoting.Command {
	r := p.newSendReply()
	h := &r.req
	if err := h.DecodeFrom(req.Code, req); err != nil {
		return headerError(err)
	}
	for _, hook := range p.sendHooks {
		hook.BeforeSend(nil, h)
	}
	resp := p.send(nil, from, req, h, &r.resp)
	for _, hook := range p.sendHooks {
		hook.AfterSend(nil, h, resp)
	}
	return resp
}

// LocalEndTransaction runs an END_TRANSACTION request.
func (p *Processor) LocalEndTransaction(req *remoting.Command) *remoting.Command {
	return p.handleEndTransaction(nil, req)
}
