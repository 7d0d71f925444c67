package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// queryNotFoundRemark is Java's remark for an unknown consumer offset.
const queryNotFoundRemark = "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"

// handleQueryConsumerOffset serves QUERY_CONSUMER_OFFSET (rocketmq-spec.md
// §13.3). A group without a stored offset gets 0 when the queue still starts
// at offset 0 and that message is in memory (or the queue is empty), as Java
// answers; otherwise QUERY_NOT_FOUND (22), which the Go client needs in order
// to fall back to its consume-from-where (go-client-wire.md §6.5).
func (p *Processor) handleQueryConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueryConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	lc := p.static.mappingFor(req.ExtFields, h.Topic, h.QueueID)
	if !lc.static() {
		return p.queryConsumerOffset(&h)
	}
	item, resp := p.static.queryOffsetStatic(&lc, &h)
	if resp != nil {
		return resp
	}
	// A chain of one item from logic offset 0, read as a physical queue:
	// a found offset is given in the item's logic terms.
	resp = p.queryConsumerOffset(&h)
	if resp.Code == protocol.Success {
		var rh protocol.OffsetResponseHeader
		if err := rh.Decode(resp.Ext()); err == nil {
			resp = ok(&protocol.OffsetResponseHeader{Offset: staticStrictly(item, rh.Offset)})
		}
	}
	return resp
}

// queryConsumerOffset answers QUERY_CONSUMER_OFFSET for a physical queue.
func (p *Processor) queryConsumerOffset(h *protocol.QueryConsumerOffsetRequestHeader) *remoting.Command {
	if p.live().UseServerSideResetOffset {
		if off, reset := p.offsets.PendingReset(h.ConsumerGroup, h.Topic, h.QueueID); reset {
			return ok(&protocol.OffsetResponseHeader{Offset: off})
		}
	}
	if off, found := p.offsets.Query(h.ConsumerGroup, h.Topic, h.QueueID); found && off >= 0 {
		return ok(&protocol.OffsetResponseHeader{Offset: off})
	}
	if h.SetZeroIfNotFound.Set && !h.SetZeroIfNotFound.Value {
		return remoting.NewResponse(protocol.QueryNotFound, queryNotFoundRemark)
	}
	if p.store.MinOffset(h.Topic, h.QueueID) <= 0 && !p.firstMessageOnDisk(h.Topic, h.QueueID) {
		return ok(&protocol.OffsetResponseHeader{Offset: 0})
	}
	return remoting.NewResponse(protocol.QueryNotFound, queryNotFoundRemark)
}

// firstMessageOnDisk is Java's checkInDiskByConsumeOffset(topic, queueId, 0):
// true only when the queue's first message exists and lies further behind
// the CommitLog end than the in-memory window.
func (p *Processor) firstMessageOnDisk(topic string, queueID int32) bool {
	if p.inMemory <= 0 {
		return false
	}
	res, err := p.store.GetMessage("", topic, queueID, 0, 1, nil)
	if err != nil {
		return false
	}
	defer res.Release()
	if len(res.Messages) == 0 {
		return false
	}
	return p.store.CommitLogMaxOffset()-res.Messages[0].PhysicalOffset > p.inMemory
}

// handleUpdateConsumerOffset serves UPDATE_CONSUMER_OFFSET: any value is
// stored (a lower one is a reset); persisted by the broker every 5 s.
func (p *Processor) handleUpdateConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.UpdateConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := p.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		if resp := p.static.updateOffsetStatic(&lc, &h); resp != nil {
			return resp
		}
	}
	if p.live().UseServerSideResetOffset {
		if _, reset := p.offsets.PendingReset(h.ConsumerGroup, h.Topic, h.QueueID); reset {
			// The consumer has not pulled since an admin reset the queue:
			// its commit is of the old position (Java ignores it too).
			resp := ok(nil)
			resp.Remark = "Offset has been previously reset"
			return resp
		}
	}
	p.offsets.Commit(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	return ok(nil)
}

// handleGetMaxOffset serves GET_MAX_OFFSET.
func (p *Processor) handleGetMaxOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueueRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := p.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		return p.static.maxOffsetStatic(&lc, &h)
	}
	return ok(&protocol.OffsetResponseHeader{Offset: p.store.MaxOffset(h.Topic, h.QueueID)})
}

// handleGetMinOffset serves GET_MIN_OFFSET.
func (p *Processor) handleGetMinOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueueRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := p.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		return p.static.minOffsetStatic(&lc, &h)
	}
	return ok(&protocol.OffsetResponseHeader{Offset: p.store.MinOffset(h.Topic, h.QueueID)})
}

// handleSearchOffset serves SEARCH_OFFSET_BY_TIMESTAMP.
func (p *Processor) handleSearchOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.SearchOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := p.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		boundary := store.ParseBoundary(h.BoundaryType)
		return p.static.searchOffsetStatic(&lc, &h, func(queueID int32) int64 {
			return p.store.OffsetByTimestamp(h.Topic, queueID, h.Timestamp, boundary)
		})
	}
	return ok(&protocol.OffsetResponseHeader{Offset: p.store.OffsetByTimestamp(h.Topic, h.QueueID, h.Timestamp, store.ParseBoundary(h.BoundaryType))})
}

// handleEarliestStoreTime serves GET_EARLIEST_MSG_STORETIME.
func (p *Processor) handleEarliestStoreTime(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueueRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := p.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		return p.static.earliestTimeStatic(&lc, &h)
	}
	return ok(&protocol.GetEarliestMsgStoretimeResponseHeader{Timestamp: p.store.EarliestMessageTime(h.Topic, h.QueueID)})
}
