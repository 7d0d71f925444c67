package processor

import (
	"github.com/rocketd/rocketd/internal/broker/txn"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// queryMessageRequired are QueryMessageRequestHeader's @CFNotNull fields:
// Java refuses a request missing one before it reaches the processor.
var queryMessageRequired = [...]string{"topic", "key", "maxNum", "beginTimestamp", "endTimestamp"}

// messageAdmin serves the admin codes that read stored messages: by id,
// by key, and a half message's check resumed (on a master).
type messageAdmin struct {
	base
	store *store.Store
	txn   *txn.Service // nil: RESUME_CHECK_HALF_MESSAGE answers an error
}

func (ma *messageAdmin) register(srv *remoting.Server, pools Families) {
	srv.Handle(protocol.ViewMessageByID, pools.Admin, ma.handleViewMessage)
	srv.Handle(protocol.QueryMessage, pools.Admin, ma.handleQueryMessage)
	srv.Handle(protocol.ResumeCheckHalfMessage, pools.Admin, ma.masterOnly(ma.handleResumeCheckHalf))
}

// handleQueryMessage serves QUERY_MESSAGE (Java's
// QueryMessageProcessor.queryMessage): the records indexed under
// topic#key in the time range, concatenated in the body. The flag
// _UNIQUE_KEY_QUERY=true (the key is a message id) replaces maxNum with
// defaultQueryMaxNum. Hash hits whose keys differ are returned too: the
// client filters, as Java's MQAdminImpl does.
func (ma *messageAdmin) handleQueryMessage(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	for _, k := range queryMessageRequired {
		if _, ok := req.ExtFields[k]; !ok {
			return remoting.NewResponse(protocol.SystemError, "the custom field <"+k+"> is null")
		}
	}
	var h protocol.QueryMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if h.UniqueKeyQuery {
		h.MaxNum = int32(ma.live().DefaultQueryMaxNum)
	}
	r, err := ma.store.QueryMessage(h.Topic, h.Key, int(h.MaxNum), h.BeginTimestamp, h.EndTimestamp)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, "query message: "+err.Error())
	}
	rh := protocol.QueryMessageResponseHeader{
		IndexLastUpdateTimestamp: r.IndexLastUpdateTimestamp,
		IndexLastUpdatePhyoffset: r.IndexLastUpdatePhyOffset,
	}
	if r.Count == 0 {
		resp := remoting.NewResponse(protocol.QueryNotFound, "can not find message, maybe time range not correct")
		resp.ExtFields = protocol.Ext(&rh)
		return resp
	}
	resp := ok(&rh)
	resp.Body = r.Records
	return resp
}
