package processor

import (
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// queryNotFoundRemark is Java's remark for an unknown consumer offset.
const queryNotFoundRemark = "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"

// offsetFamily serves the consumer offsets (Java's
// ConsumerManageProcessor: QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET)
// and the queues' bounds (GET_MAX_OFFSET, GET_MIN_OFFSET,
// SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME, which Java's
// AdminBrokerProcessor answers: they run on the admin pool).
type offsetFamily struct {
	base
	store    *store.Store
	offsets  *meta.Offsets
	inMemory int64 // store.Config.InMemoryBytes: a new group's first offset
	static   *staticRW
}

func (o *offsetFamily) register(srv *remoting.Server, pools Families) {
	srv.Handle(protocol.QueryConsumerOffset, pools.Offset, o.handleQueryConsumerOffset)
	srv.Handle(protocol.UpdateConsumerOffset, pools.Offset, o.handleUpdateConsumerOffset)
	srv.Handle(protocol.GetMaxOffset, pools.Admin, o.handleGetMaxOffset)
	srv.Handle(protocol.GetMinOffset, pools.Admin, o.handleGetMinOffset)
	srv.Handle(protocol.SearchOffsetByTimestamp, pools.Admin, o.handleSearchOffset)
	srv.Handle(protocol.GetEarliestMsgStoretime, pools.Admin, o.handleEarliestStoreTime)
}

// handleQueryConsumerOffset serves QUERY_CONSUMER_OFFSET (rocketmq-spec.md
// §13.3). A group without a stored offset gets 0 when the queue still starts
// at offset 0 and that message is in memory (or the queue is empty), as Java
// answers; otherwise QUERY_NOT_FOUND (22), which the Go client needs in order
// to fall back to its consume-from-where (go-client-wire.md §6.5).
func (o *offsetFamily) handleQueryConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueryConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	lc := o.static.mappingFor(req.ExtFields, h.Topic, h.QueueID)
	if !lc.static() {
		return o.queryConsumerOffset(&h)
	}
	item, resp := o.static.queryOffsetStatic(&lc, &h)
	if resp != nil {
		return resp
	}
	// A chain of one item from logic offset 0, read as a physical queue:
	// a found offset is given in the item's logic terms.
	resp = o.queryConsumerOffset(&h)
	if resp.Code == protocol.Success {
		var rh protocol.OffsetResponseHeader
		if err := rh.Decode(resp.Ext()); err == nil {
			resp = ok(&protocol.OffsetResponseHeader{Offset: staticStrictly(item, rh.Offset)})
		}
	}
	return resp
}

// queryConsumerOffset answers QUERY_CONSUMER_OFFSET for a physical queue.
func (o *offsetFamily) queryConsumerOffset(h *protocol.QueryConsumerOffsetRequestHeader) *remoting.Command {
	if o.live().UseServerSideResetOffset {
		if off, reset := o.offsets.PendingReset(h.ConsumerGroup, h.Topic, h.QueueID); reset {
			return ok(&protocol.OffsetResponseHeader{Offset: off})
		}
	}
	if off, found := o.offsets.Query(h.ConsumerGroup, h.Topic, h.QueueID); found && off >= 0 {
		return ok(&protocol.OffsetResponseHeader{Offset: off})
	}
	if h.SetZeroIfNotFound.Set && !h.SetZeroIfNotFound.Value {
		return remoting.NewResponse(protocol.QueryNotFound, queryNotFoundRemark)
	}
	if o.store.MinOffset(h.Topic, h.QueueID) <= 0 && !o.firstMessageOnDisk(h.Topic, h.QueueID) {
		return ok(&protocol.OffsetResponseHeader{Offset: 0})
	}
	return remoting.NewResponse(protocol.QueryNotFound, queryNotFoundRemark)
}

// firstMessageOnDisk is Java's checkInDiskByConsumeOffset(topic, queueId, 0):
// true only when the queue's first message exists and lies further behind
// the CommitLog end than the in-memory window.
func (o *offsetFamily) firstMessageOnDisk(topic string, queueID int32) bool {
	if o.inMemory <= 0 {
		return false
	}
	res, err := o.store.GetMessage("", topic, queueID, 0, 1, nil)
	if err != nil {
		return false
	}
	defer res.Release()
	if len(res.Messages) == 0 {
		return false
	}
	return o.store.CommitLogMaxOffset()-res.Messages[0].PhysicalOffset > o.inMemory
}

// handleUpdateConsumerOffset serves UPDATE_CONSUMER_OFFSET: any value is
// stored (a lower one is a reset); persisted by the broker every 5 s.
func (o *offsetFamily) handleUpdateConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.UpdateConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := o.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		if resp := o.static.updateOffsetStatic(&lc, &h); resp != nil {
			return resp
		}
	}
	if o.live().UseServerSideResetOffset {
		if _, reset := o.offsets.PendingReset(h.ConsumerGroup, h.Topic, h.QueueID); reset {
			// The consumer has not pulled since an admin reset the queue:
			// its commit is of the old position (Java ignores it too).
			resp := ok(nil)
			resp.Remark = "Offset has been previously reset"
			return resp
		}
	}
	o.offsets.Commit(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	return ok(nil)
}

// handleGetMaxOffset serves GET_MAX_OFFSET.
func (o *offsetFamily) handleGetMaxOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueueRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := o.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		return o.static.maxOffsetStatic(&lc, &h)
	}
	return ok(&protocol.OffsetResponseHeader{Offset: o.store.MaxOffset(h.Topic, h.QueueID)})
}

// handleGetMinOffset serves GET_MIN_OFFSET.
func (o *offsetFamily) handleGetMinOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueueRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := o.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		return o.static.minOffsetStatic(&lc, &h)
	}
	return ok(&protocol.OffsetResponseHeader{Offset: o.store.MinOffset(h.Topic, h.QueueID)})
}

// handleSearchOffset serves SEARCH_OFFSET_BY_TIMESTAMP.
func (o *offsetFamily) handleSearchOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.SearchOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := o.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		boundary := store.ParseBoundary(h.BoundaryType)
		return o.static.searchOffsetStatic(&lc, &h, func(queueID int32) int64 {
			return o.store.OffsetByTimestamp(h.Topic, queueID, h.Timestamp, boundary)
		})
	}
	return ok(&protocol.OffsetResponseHeader{Offset: o.store.OffsetByTimestamp(h.Topic, h.QueueID, h.Timestamp, store.ParseBoundary(h.BoundaryType))})
}

// handleEarliestStoreTime serves GET_EARLIEST_MSG_STORETIME.
func (o *offsetFamily) handleEarliestStoreTime(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueueRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if lc := o.static.mappingFor(req.ExtFields, h.Topic, h.QueueID); lc.static() {
		return o.static.earliestTimeStatic(&lc, &h)
	}
	return ok(&protocol.GetEarliestMsgStoretimeResponseHeader{Timestamp: o.store.EarliestMessageTime(h.Topic, h.QueueID)})
}
