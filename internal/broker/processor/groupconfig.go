package processor

import (
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// groupAdmin serves the subscription group admin codes: create (one or a
// list), delete, read one or all, the forbidden bits and the request
// modes. Changes are refused on a slave.
type groupAdmin struct {
	base
	groups  *meta.Groups
	offsets *meta.Offsets      // a deleted group's offsets go too
	modes   *meta.RequestModes // nil: no modes to list
}

func (g *groupAdmin) register(srv *remoting.Server, pools Families) {
	srv.Handle(protocol.UpdateAndCreateSubscriptionGroup, pools.Admin, g.masterOnly(g.handleCreateGroup))
	srv.Handle(protocol.UpdateAndCreateSubscriptionGroupList, pools.Admin, g.masterOnly(g.handleCreateGroupList))
	srv.Handle(protocol.DeleteSubscriptionGroup, pools.Admin, g.masterOnly(g.handleDeleteGroup))
	srv.Handle(protocol.GetSubscriptionGroupConfig, pools.Admin, g.handleGetGroupConfig)
	srv.Handle(protocol.GetAllSubscriptionGroupConfig, pools.Admin, g.handleAllGroups)
	srv.Handle(protocol.UpdateAndGetGroupForbidden, pools.Admin, g.handleGroupForbidden)
	srv.Handle(protocol.GetAllMessageRequestMode, pools.Admin, g.handleAllMessageRequestModes)
}

// handleGetGroupConfig serves GET_SUBSCRIPTIONGROUP_CONFIG (352, 5.x): one
// group's whole config (the 5.x proxy reads consumeMessageOrderly and the
// retry policy with it). Like Java it does not create the group: an
// unknown one is SYSTEM_ERROR "No group in this broker".
func (g *groupAdmin) handleGetGroupConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetSubscriptionGroupConfigRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if h.Group == "" { // @CFNotNull: Java's header decoding refuses it
		return remoting.NewResponse(protocol.SystemError, "the custom field <group> is null")
	}
	gc, found := g.groups.Get(h.Group)
	if !found {
		return remoting.NewResponse(protocol.SystemError, "No group in this broker")
	}
	return bodyResponse(&gc)
}
