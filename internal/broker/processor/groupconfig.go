package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleGetGroupConfig serves GET_SUBSCRIPTIONGROUP_CONFIG (352, 5.x): one
// group's whole config (the 5.x proxy reads consumeMessageOrderly and the
// retry policy with it). Like Java it does not create the group: an
// unknown one is SYSTEM_ERROR "No group in this broker".
func (p *Processor) handleGetGroupConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetSubscriptionGroupConfigRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if h.Group == "" { // @CFNotNull: Java's header decoding refuses it
		return remoting.NewResponse(protocol.SystemError, "the custom field <group> is null")
	}
	gc, found := p.groups.Get(h.Group)
	if !found {
		return remoting.NewResponse(protocol.SystemError, "No group in this broker")
	}
	return bodyResponse(&gc)
}
