package processor

import (
	"errors"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/broker/txn"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// handleResumeCheckHalf serves RESUME_CHECK_HALF_MESSAGE (323): the half
// message the offset message id names is put back into the half queue
// with its check count reset (txn.Service.Resume). Java answers every
// failure SYSTEM_ERROR; so does rocketd, with a remark saying which
// (Java's "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed." for a
// refused put).
func (ma *messageAdmin) handleResumeCheckHalf(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if ma.txn == nil {
		return remoting.NewResponse(protocol.SystemError, "transactions are not served by this broker")
	}
	var h protocol.ResumeCheckHalfMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if strings.TrimSpace(h.MsgID) == "" {
		return remoting.NewResponse(protocol.SystemError, "msgId is required: the offset message id of the half message")
	}
	_, offset, err := message.ParseOffsetMsgID(strings.TrimSpace(h.MsgID))
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, "msgId "+h.MsgID+": "+err.Error())
	}
	raw, found := readRecord(ma.store, ma.live().MaxMessageSize, offset)
	if !found {
		return remoting.NewResponse(protocol.SystemError, "can not find message by the offset, "+strconv.FormatInt(offset, 10))
	}
	rec, _, err := message.DecodeRecord(raw, true)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, "message at offset "+strconv.FormatInt(offset, 10)+" does not decode: "+err.Error())
	}
	res, err := ma.txn.Resume(&rec)
	if errors.Is(err, txn.ErrNotHalf) {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if err != nil || res.Status != store.PutOK {
		return remoting.NewResponse(protocol.SystemError, "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed.")
	}
	return remoting.NewResponse(protocol.Success, "")
}
