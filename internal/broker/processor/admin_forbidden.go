package processor

import (
	"fmt"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleGroupForbidden serves UPDATE_AND_GET_GROUP_FORBIDDEN (353): with
// readable set, forbids (false) or allows (true) the group to pull the
// topic, kept in subscriptionGroup.json's forbiddenTable; the answer is
// the state now (GroupForbidden). A forbidden group's pulls are answered
// NO_PERMISSION (pull.go). group and topic are required (SYSTEM_ERROR
// "the custom field <group> is null", as Java's header check says).
func (g *groupAdmin) handleGroupForbidden(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "group", "topic"); resp != nil {
		return resp
	}
	var h protocol.UpdateGroupForbiddenRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if strings.TrimSpace(h.Group) == "" || strings.TrimSpace(h.Topic) == "" {
		return remoting.NewResponse(protocol.SystemError, "group and topic must not be empty")
	}
	if h.Readable.Set {
		if !g.isMaster() {
			return remoting.NewResponse(protocol.SystemError,
				"Can't modify topic or subscription group from slave broker, please execute it from master broker.")
		}
		g.log.Info("group forbidden updated", "group", h.Group, "topic", h.Topic, "readable", h.Readable.Value, "caller", conn.RemoteAddr())
		if err := g.groups.SetReadForbidden(h.Group, h.Topic, !h.Readable.Value); err != nil {
			return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("persist the forbidden table: %v", err))
		}
	}
	return bodyResponse(&protocol.GroupForbidden{Group: h.Group, Topic: h.Topic, Readable: !g.groups.ReadForbidden(h.Group, h.Topic)})
}
