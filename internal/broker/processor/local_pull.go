package processor

import (
	"context"
	"time"

	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// LocalPull runs a PULL_MESSAGE request with the pull handler's code (the
// gRPC PullMessage). It never commits an offset (the gRPC client commits
// with UpdateOffset). A pull that finds nothing waits in the long-polling
// holder, as a remoting pull with the suspend flag does, until a message
// arrives beyond the offset (then it pulls again), SuspendTimeoutMillis is
// over or ctx ends. The caller releases the answer's body (resp.Release).
func (p *Processor) LocalPull(ctx context.Context, h *protocol.PullMessageRequestHeader) *remoting.Command {
	req := remoting.NewRequest(protocol.PullMessage, protocol.Ext(h), nil)
	return localHeld(ctx, p.pulls.holder, time.Now().Add(time.Duration(h.SuspendTimeoutMillis)*time.Millisecond), protocol.PullNotFound,
		longpoll.Request{Topic: h.Topic, QueueID: h.QueueID, Offset: h.QueueOffset},
		func() *remoting.Command { return p.pulls.pull(nil, req, false) }, nil)
}

// LocalUpdateOffset runs UPDATE_CONSUMER_OFFSET.
func (p *Processor) LocalUpdateOffset(h *protocol.UpdateConsumerOffsetRequestHeader) (code int32, remark string) {
	r := p.offsets.handleUpdateConsumerOffset(nil, remoting.NewRequest(protocol.UpdateConsumerOffset, protocol.Ext(h), nil))
	return r.Code, r.Remark
}

// LocalQueryOffset runs QUERY_CONSUMER_OFFSET: the group's committed
// offset, or QUERY_NOT_FOUND.
func (p *Processor) LocalQueryOffset(h *protocol.QueryConsumerOffsetRequestHeader) (offset int64, code int32, remark string) {
	return offsetAnswer(p.offsets.handleQueryConsumerOffset(nil, remoting.NewRequest(protocol.QueryConsumerOffset, protocol.Ext(h), nil)))
}

// LocalMinOffset runs GET_MIN_OFFSET.
func (p *Processor) LocalMinOffset(h *protocol.QueueRequestHeader) (offset int64, code int32, remark string) {
	return offsetAnswer(p.offsets.handleGetMinOffset(nil, remoting.NewRequest(protocol.GetMinOffset, protocol.Ext(h), nil)))
}

// LocalMaxOffset runs GET_MAX_OFFSET.
func (p *Processor) LocalMaxOffset(h *protocol.QueueRequestHeader) (offset int64, code int32, remark string) {
	return offsetAnswer(p.offsets.handleGetMaxOffset(nil, remoting.NewRequest(protocol.GetMaxOffset, protocol.Ext(h), nil)))
}

// LocalSearchOffset runs SEARCH_OFFSET_BY_TIMESTAMP.
func (p *Processor) LocalSearchOffset(h *protocol.SearchOffsetRequestHeader) (offset int64, code int32, remark string) {
	return offsetAnswer(p.offsets.handleSearchOffset(nil, remoting.NewRequest(protocol.SearchOffsetByTimestamp, protocol.Ext(h), nil)))
}

func offsetAnswer(r *remoting.Command) (int64, int32, string) {
	if r.Code != protocol.Success {
		return 0, r.Code, r.Remark
	}
	var rh protocol.OffsetResponseHeader
	if err := rh.Decode(r.Ext()); err != nil {
		return 0, protocol.SystemError, "decode offset answer: " + err.Error()
	}
	return rh.Offset, r.Code, r.Remark
}

// consumerAddr names a pull's consumer in remarks: a LocalPull has no
// connection.
func consumerAddr(conn *remoting.Conn) string {
	if conn == nil {
		return "local"
	}
	return conn.RemoteAddr()
}
