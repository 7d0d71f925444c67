package processor

import (
	"context"
	"fmt"
	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"net/netip"
	"time"

	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// pullFamily serves PULL_MESSAGE and LITE_PULL_MESSAGE (Java's
// PullMessageProcessor), with long polling.
type pullFamily struct {
	base
	store     *store.Store
	topics    *meta.Topics
	groups    *meta.Groups
	offsets   *meta.Offsets
	clients   *client.Registry // subscriptions and message models
	holder    *longpoll.Holder // nil: no long polling
	storeHost netip.AddrPort   // BORNHOST of OFFSET_MOVED_EVENT
	stats     *stats.Stats
	static    *staticRW
	filters   *filters
}

func (pl *pullFamily) register(srv *remoting.Server, pools Families) {
	// The header is read where it arrived (DecodeFrom), without a map;
	// only a static topic's pull or a lite pull builds one (req.Ext()).
	srv.HandleLazyExt(protocol.PullMessage, pools.Pull, pl.handlePull)
	srv.HandleLazyExt(protocol.LitePullMessage, pools.Pull, pl.handleLitePull)
}

// handlePull serves PULL_MESSAGE from the network: it may commit the
// consumer offset and hold the request (long polling).
func (pl *pullFamily) handlePull(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return pl.pull(conn, req, true)
}

// pull follows PullMessageProcessor.processRequest (rocketmq-spec.md §13.1).
// allowSuspend is false when a held request is re-run: it then neither
// holds again nor commits the offset a second time.
func (pl *pullFamily) pull(conn *remoting.Conn, req *remoting.Command, allowSuspend bool) *remoting.Command {
	began := time.Now()
	var h protocol.PullMessageRequestHeader
	if err := h.DecodeFrom(req); err != nil {
		return headerError(err)
	}
	// nextBeginOffset and the other three keys are always present: the Go
	// client parses a missing nextBeginOffset as 0 and rewinds the queue
	// (go-client-wire.md §0 item 8).
	// The header is encoded into the frame when the response is sent (no
	// map): rh holds its final values by then.
	rh := &protocol.PullMessageResponseHeader{NextBeginOffset: h.QueueOffset}
	reply := func(code int32, remark string) *remoting.Command {
		resp := remoting.NewResponse(code, remark)
		resp.Header = rh
		return resp
	}
	// A static topic's logic queue and offset become the physical ones of
	// the mapping item holding the offset (staticrw.go); an item on
	// another broker is pulled there.
	lc := pl.static.mappingForReq(req, h.Topic, h.QueueID)
	var item protocol.LogicQueueMappingItem
	logicOffset := h.QueueOffset
	if lc.static() {
		var resp *remoting.Command
		if item, resp = pl.static.pullStatic(&lc, &h); resp != nil {
			if resp.ExtFields == nil {
				// A refusal keeps the four offsets (see rh above).
				resp.ExtFields = protocol.Ext(rh)
			}
			return resp
		}
	}
	if !pl.brokerReadable() {
		return reply(protocol.NoPermission, fmt.Sprintf("the broker[%s] pulling message is forbidden", pl.cfg.BrokerIP1))
	}
	gc, found := pl.groups.FindOrCreate(h.ConsumerGroup)
	if !found {
		return reply(protocol.SubscriptionGroupNotExist, fmt.Sprintf("subscription group [%s] does not exist", h.ConsumerGroup))
	}
	if !gc.ConsumeEnable {
		return reply(protocol.NoPermission, "subscription group no permission, "+h.ConsumerGroup)
	}
	tc, found := pl.topics.Get(h.Topic)
	if !found {
		return reply(protocol.TopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please!", h.Topic))
	}
	if !meta.IsReadable(tc.Perm) {
		return reply(protocol.NoPermission, fmt.Sprintf("the topic[%s] pulling message is forbidden", h.Topic))
	}
	if h.QueueID < 0 || h.QueueID >= tc.ReadQueueNums {
		return reply(protocol.SystemError, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			h.QueueID, h.Topic, tc.ReadQueueNums, consumerAddr(conn)))
	}

	var sub *protocol.SubscriptionData
	if h.SysFlag&protocol.PullFlagSubscription != 0 {
		sub = subscriptionFromExpr(h.Topic, h.Subscription, h.ExpressionType)
	} else {
		model, online := pl.clients.MessageModel(h.ConsumerGroup)
		if !online {
			return reply(protocol.SubscriptionNotExist, fmt.Sprintf("the consumer's group info not exist, group: %s", h.ConsumerGroup))
		}
		if model == protocol.Broadcasting && !gc.ConsumeBroadcastEnable {
			return reply(protocol.NoPermission, fmt.Sprintf("the consumer group[%s] can not consume by broadcast way", h.ConsumerGroup))
		}
		if pl.groups.ReadForbidden(h.ConsumerGroup, h.Topic) {
			return reply(protocol.NoPermission, fmt.Sprintf("the consumer group[%s] is forbidden for topic[%s]", h.ConsumerGroup, h.Topic))
		}
		s, ok := pl.clients.FindSubscription(h.ConsumerGroup, h.Topic)
		if !ok {
			return reply(protocol.SubscriptionNotExist, "the consumer's subscription not exist, topic: "+h.Topic)
		}
		if s.SubVersion < h.SubVersion {
			return reply(protocol.SubscriptionNotLatest, "the consumer's subscription not latest")
		}
		sub = s
	}
	filter, fcode, remark := pl.filters.pullFilter(&h, sub, h.SysFlag&protocol.PullFlagSubscription != 0)
	if fcode != protocol.Success {
		return reply(fcode, remark)
	}

	if pl.live().UseServerSideResetOffset {
		if off, reset := pl.offsets.TakeReset(h.ConsumerGroup, h.Topic, h.QueueID); reset {
			// An admin reset the queue (admin_reset.go): the consumer
			// learns its new position, as Java's OFFSET_RESET, and nothing
			// it carries is committed over it.
			rh.NextBeginOffset, rh.MinOffset, rh.MaxOffset = off, pl.store.MinOffset(h.Topic, h.QueueID), pl.store.MaxOffset(h.Topic, h.QueueID)
			return reply(protocol.PullOffsetMoved, "")
		}
	}
	res, err := pl.store.GetMessage(h.ConsumerGroup, h.Topic, h.QueueID, h.QueueOffset, int(h.MaxMsgNums), filter)
	if err != nil {
		return reply(protocol.SystemError, "store getMessage return null: "+err.Error())
	}
	rh.NextBeginOffset, rh.MinOffset, rh.MaxOffset = res.NextBeginOffset, res.MinOffset, res.MaxOffset
	if res.SuggestPullingFromSlave && pl.live().SlaveReadEnable {
		rh.SuggestWhichBrokerID = gc.WhichBrokerWhenConsumeSlowly
	} else if pl.live().SlaveReadEnable {
		rh.SuggestWhichBrokerID = gc.BrokerID
	}
	code := pullCode(res.Status, h.QueueOffset)
	if code == protocol.PullOffsetMoved && !pl.isMaster() {
		// A slave does not correct offsets (offsetCheckInSlave false,
		// spec §13.1): its queues may lag the master's, so the consumer
		// retries at the same offset instead of jumping.
		code = protocol.PullRetryImmediately
		rh.NextBeginOffset = h.QueueOffset
	}
	if lc.static() {
		code = pl.static.rewritePullResponse(&lc, item, logicOffset, rh, code)
	}
	// The records go into the response frame as the store read them
	// (slices of its read buffers, released once the frame is encoded):
	// no body buffer is allocated and filled in between. Records that lie
	// back to back in one read are one part (one iovec of the writev).
	var parts [][]byte
	if code == protocol.Success {
		parts = res.BodyRuns()
	}
	pl.countPull(h.ConsumerGroup, h.Topic, parts != nil, len(res.Messages), res.TotalSize, began)
	status := res.Status
	if parts == nil {
		res.Release()
	}
	if code == protocol.PullOffsetMoved && pl.isMaster() {
		pl.offsetMovedEvent(&h, rh.NextBeginOffset)
	}

	// Java commits after reading: a network request (not a re-run) with
	// the flag, on a master.
	if allowSuspend && h.SysFlag&protocol.PullFlagCommitOffset != 0 && pl.isMaster() {
		if !lc.static() {
			pl.offsets.Commit(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
		} else if q, off, here := pullCommitStatic(&lc, h.CommitOffset); here {
			// The commit offset is a logic one: stored as the physical
			// offset of its item when that is here (Java commits the
			// logic value against the physical queue, which only agrees
			// for a chain's first item).
			pl.offsets.Commit(h.ConsumerGroup, h.Topic, q, off)
		}
	}

	if code == protocol.PullNotFound && allowSuspend && h.SysFlag&protocol.PullFlagSuspend != 0 && pl.holder != nil && conn != nil {
		st := pl.holder.Hold(longpoll.Request{
			Topic:   h.Topic,
			QueueID: h.QueueID,
			Offset:  h.QueueOffset,
			Timeout: time.Duration(h.SuspendTimeoutMillis) * time.Millisecond,
			Match:   filter.MatchTagsCode,
			Conn:    conn,
			Wake:    func() { pl.wake(conn, req) },
		})
		if st == longpoll.Held {
			return nil
		}
	}
	resp := reply(code, status.String())
	if parts != nil {
		resp.BodyParts, resp.Release = parts, res.Release
	}
	return resp
}

// wake re-runs a held pull and writes its answer with the request's opaque.
func (pl *pullFamily) wake(conn *remoting.Conn, req *remoting.Command) {
	resp := pl.pull(conn, req, false)
	resp.Opaque, resp.SerializeType = req.Opaque, req.SerializeType
	if err := conn.WriteResponse(resp); err != nil {
		pl.log.Debug("pull: deferred response not written", "remote", conn.RemoteAddr(), "err", err)
	}
}

// pullCode maps a store status to the pull response code (spec §13.1, a
// master's mapping).
func pullCode(st store.GetStatus, offset int64) int32 {
	switch st {
	case store.Found:
		return protocol.Success
	case store.NoMatchedMessage, store.MessageWasRemoving:
		return protocol.PullRetryImmediately
	case store.NoMatchedLogicQueue, store.NoMessageInQueue:
		if offset != 0 {
			return protocol.PullOffsetMoved
		}
		return protocol.PullNotFound
	case store.OffsetFoundNull, store.OffsetOverflowOne:
		return protocol.PullNotFound
	case store.OffsetOverflowBadly, store.OffsetTooSmall:
		return protocol.PullOffsetMoved
	default:
		return protocol.SystemError
	}
}

// offsetMovedEvent stores the OffsetMovedEvent Java's master publishes when
// it corrects a consumer's offset: a JSON body in topic OFFSET_MOVED_EVENT,
// tag and key the group (monitoring tools subscribe to it).
func (pl *pullFamily) offsetMovedEvent(h *protocol.PullMessageRequestHeader, offsetNew int64) {
	if !pl.topics.Contains(meta.OffsetMovedTopic) {
		return
	}
	body := fmt.Sprintf(`{"consumerGroup":%q,"messageQueue":{"brokerName":%q,"queueId":%d,"topic":%q},"offsetNew":%d,"offsetRequest":%d}`,
		h.ConsumerGroup, pl.cfg.BrokerName, h.QueueID, h.Topic, offsetNew, h.QueueOffset)
	props := message.AppendProperty(nil, message.PropertyTags, h.ConsumerGroup)
	props = message.AppendProperty(props, message.PropertyKeys, h.ConsumerGroup)
	props = message.AppendProperty(props, message.PropertyCluster, pl.cfg.BrokerClusterName)
	rec := message.Record{
		Topic: meta.OffsetMovedTopic, Body: []byte(body), Properties: string(props),
		BornTimestamp: time.Now().UnixMilli(), BornHost: pl.storeHost,
	}
	if res := pl.store.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true}); !res.Status.Stored() {
		pl.log.Warn("pull: offset moved event not stored", "group", h.ConsumerGroup, "topic", h.Topic, "status", res.Status)
	}
}
