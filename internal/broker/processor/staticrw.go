package processor

import (
	"context"
	"errors"
	"fmt"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/store"
	"log/slog"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// forwardTimeout bounds one request forwarded to another broker of a
// static topic (Java's brokerConfig.forwardTimeout default, 3 s).
const forwardTimeout = 3 * time.Second

// loFalse reports whether a request says lo=false: Java's
// TopicRequestHeader.lo set (Boolean.parseBoolean: anything but "true" is
// false). A broker forwarding a static topic's request to the broker of
// an older mapping item sends it so: the queue id and offsets are
// physical, nothing is rewritten.
func loFalse(ext map[string]string) bool {
	v, ok := ext["lo"]
	return ok && !strings.EqualFold(v, "true")
}

// mappingCtx is TopicQueueMappingManager.buildTopicQueueMappingContext's
// answer for a request naming a logic queue (selectOneWhenMiss false):
// detail nil for a request that is not rewritten (a topic not static
// here, or lo=false).
type mappingCtx struct {
	detail   *protocol.TopicQueueMappingDetail
	topic    string
	globalID int32
	items    []protocol.LogicQueueMappingItem // the logic queue's chain (shared: read only)
}

// staticRW serves the requests on static topics' logic queues
// (TopicQueueMappingManager with Java's RpcClient): the mapping of a
// request, its rewrite, and forwarding to the broker that holds a mapping
// item. The pull and offset families share one.
type staticRW struct {
	log        *slog.Logger
	store      *store.Store
	offsets    *meta.Offsets
	mappings   *meta.Mappings
	route      func(ctx context.Context, topic string) (protocol.TopicRouteData, bool, error)
	forwardFn  func(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error)
	forwardLog lograte.Limiter // failed forwards: clients retry them in a loop
}

// mappingForReq is mappingFor for a request whose header may have been
// kept as received (HandleLazyExt): its map is built for a static topic's
// request only.
func (m *staticRW) mappingForReq(req *remoting.Command, topic string, queueID int32) mappingCtx {
	if m.mappings.Lookup(topic) == nil {
		return mappingCtx{}
	}
	return m.mappingFor(req.Ext(), topic, queueID)
}

// mappingFor builds the context of a request on topic's queue queueID.
// A topic without a mapping costs one lock-free lookup and no allocation.
func (m *staticRW) mappingFor(ext map[string]string, topic string, queueID int32) mappingCtx {
	d := m.mappings.Lookup(topic)
	if d == nil || loFalse(ext) {
		return mappingCtx{}
	}
	c := mappingCtx{detail: d, topic: topic, globalID: queueID}
	if queueID >= 0 {
		c.items = d.HostedQueues[queueID]
	}
	return c
}

// static reports whether the request is rewritten.
func (c *mappingCtx) static() bool { return c.detail != nil }

// leader is the chain's last item; ok is false without a chain.
func (c *mappingCtx) leader() (protocol.LogicQueueMappingItem, bool) {
	if len(c.items) == 0 {
		return protocol.LogicQueueMappingItem{}, false
	}
	return c.items[len(c.items)-1], true
}

// isLeader is TopicQueueMappingContext.isLeader: this broker holds the
// logic queue's last item.
func (c *mappingCtx) isLeader() bool {
	l, ok := c.leader()
	return ok && l.Bname == c.detail.Bname
}

// local reports whether item is on this broker.
func (c *mappingCtx) local(item protocol.LogicQueueMappingItem) bool {
	return item.Bname == c.detail.Bname
}

// notLeader is the NOT_LEADER_FOR_QUEUE answer of the offset and admin
// processors.
func (c *mappingCtx) notLeader() *remoting.Command {
	return remoting.NewResponse(protocol.NotLeaderForQueue,
		fmt.Sprintf("%s-%d does not exit in request process of current broker %s", c.topic, c.globalID, c.detail.Bname))
}

// findItem is TopicQueueMappingUtils.findLogicQueueMappingItem with
// ignoreNegative: the last item whose (decided) logic offset is at or
// below logic, else the first decided one; false when none is decided.
func findItem(items []protocol.LogicQueueMappingItem, logic int64) (protocol.LogicQueueMappingItem, bool) {
	for i := len(items) - 1; i >= 0; i-- {
		if it := items[i]; it.LogicOffset >= 0 && logic >= it.LogicOffset {
			return it, true
		}
	}
	for _, it := range items {
		if it.LogicOffset >= 0 {
			return it, true
		}
	}
	return protocol.LogicQueueMappingItem{}, false
}

// findNext is TopicQueueMappingUtils.findNext with ignoreNegative: the item
// after cur in the chain, false when cur is the last or the next one's
// logic offset is undecided.
func findNext(items []protocol.LogicQueueMappingItem, cur protocol.LogicQueueMappingItem) (protocol.LogicQueueMappingItem, bool) {
	for i, it := range items {
		if it.LogicOffset < 0 || it.Gen != cur.Gen {
			continue
		}
		if i == len(items)-1 || items[i+1].LogicOffset < 0 {
			return protocol.LogicQueueMappingItem{}, false
		}
		return items[i+1], true
	}
	return protocol.LogicQueueMappingItem{}, false
}

// staticStrictly is computeStaticQueueOffsetStrictly.
func staticStrictly(it protocol.LogicQueueMappingItem, physical int64) int64 {
	if physical < it.StartOffset {
		return it.LogicOffset
	}
	return it.LogicOffset + physical - it.StartOffset
}

// endDecided is checkIfEndOffsetDecided.
func endDecided(it protocol.LogicQueueMappingItem) bool { return it.EndOffset > it.StartOffset }

// errNoForward: the broker was built without a way to reach other brokers.
var errNoForward = errors.New("this broker cannot forward requests to other brokers")

// forward sends req to the master of broker bname, found through topic's
// route on the NameServer (Java's RpcClient resolves the broker name the
// same way), and waits up to forwardTimeout. Failures are logged
// rate-limited: clients repeat the request in a loop.
func (m *staticRW) forward(topic, bname string, req *remoting.Command) (*remoting.Command, error) {
	if m.forwardFn == nil || m.route == nil {
		return nil, errNoForward
	}
	resp, err := m.forwardOnce(topic, bname, req)
	if err != nil {
		m.forwardLog.Log(m.log, slog.LevelWarn, "processor: static topic request not forwarded", "topic", topic, "broker", bname, "err", err)
	}
	return resp, err
}

func (m *staticRW) forwardOnce(topic, bname string, req *remoting.Command) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
	defer cancel()
	route, found, err := m.route(ctx, topic)
	if err != nil {
		return nil, err
	}
	addr := ""
	if found {
		for i := range route.BrokerDatas {
			if route.BrokerDatas[i].BrokerName == bname {
				addr = route.BrokerDatas[i].MasterAddr()
			}
		}
	}
	if addr == "" {
		return nil, fmt.Errorf("cannot find addr for broker %s", bname)
	}
	resp, err := m.forwardFn(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("forward request %d to %s (%s): %w", req.Code, bname, addr, err)
	}
	return resp, nil
}

// forwardExt is a request's ext fields as a forwarded request carries them:
// lo=false, bname the target broker.
func forwardExt(h protocol.ExtHeader, bname string) map[string]string {
	ext := protocol.Ext(h)
	ext["lo"] = "false"
	ext["bname"] = bname
	return ext
}

// pullStatic is PullMessageProcessor.rewriteRequestForStaticTopic: h names
// a logic queue and offset; they become the physical queue and offset of
// the item holding the offset. A local item gives nil and the pull goes on
// (with cur set for rewritePullResponse); another broker's is pulled there
// with lo=false (no suspend, no commit) and its answer rewritten.
func (m *staticRW) pullStatic(c *mappingCtx, h *protocol.PullMessageRequestHeader) (cur protocol.LogicQueueMappingItem, resp *remoting.Command) {
	if !c.isLeader() {
		return cur, remoting.NewResponse(protocol.NotLeaderForQueue,
			fmt.Sprintf("%s-%d cannot find mapping item in request process of current broker %s", c.topic, c.globalID, c.detail.Bname))
	}
	logic := h.QueueOffset
	cur, found := findItem(c.items, logic)
	if !found {
		return cur, remoting.NewResponse(protocol.SystemError, fmt.Sprintf("%s-%d has no mapping item with a decided logic offset", c.topic, c.globalID))
	}
	h.QueueID = cur.QueueID
	h.QueueOffset = cur.PhysicalOffset(logic)
	if endDecided(cur) {
		h.MaxMsgNums = int32(min(cur.EndOffset-cur.StartOffset, int64(h.MaxMsgNums)))
	}
	if c.local(cur) {
		return cur, nil
	}
	fh := *h
	fh.BrokerName = cur.Bname
	fh.SysFlag &^= protocol.PullFlagSuspend | protocol.PullFlagCommitOffset
	fresp, err := m.forward(c.topic, cur.Bname, remoting.NewRequest(protocol.PullMessage, forwardExt(&fh, cur.Bname), nil))
	if err != nil {
		return cur, remoting.NewResponse(protocol.SystemError, err.Error())
	}
	switch fresp.Code {
	case protocol.Success, protocol.PullNotFound, protocol.PullRetryImmediately, protocol.PullOffsetMoved:
	default:
		// Any other answer (SYSTEM_BUSY of a loaded broker, a refused
		// subscription) carries no offsets: read as a pull status it
		// would look like the end of the item and move the consumer past
		// its messages. Java's RpcClient makes it an exception, answered
		// SYSTEM_ERROR; the client pulls the same offset again.
		return cur, remoting.NewResponse(protocol.SystemError,
			fmt.Sprintf("forwarded pull to %s: unexpected remote response code %d: %s", cur.Bname, fresp.Code, fresp.Remark))
	}
	var rh protocol.PullMessageResponseHeader
	if err := rh.Decode(fresp.Ext()); err != nil {
		return cur, remoting.NewResponse(protocol.SystemError, "forwarded pull: "+err.Error())
	}
	code := m.rewritePullResponse(c, cur, logic, &rh, fresp.Code)
	out := remoting.NewResponse(code, fresp.Remark)
	out.ExtFields = protocol.Ext(&rh)
	if code == protocol.Success {
		out.Body = fresp.Body
	} else if code != fresp.Code {
		out.Remark = ""
	}
	return cur, out
}

// rewritePullResponse is PullMessageProcessor.rewriteResponseForStaticTopic:
// the answer of a pull of item cur at logic offset reqOffset (physical
// figures in rh) gets logic next-begin, min and max offsets and the
// offset delta; a miss at an item's edge moves on to the next item
// (PULL_RETRY_IMMEDIATELY) or back to the earliest's start
// (PULL_OFFSET_MOVED). It returns the answer's code.
func (m *staticRW) rewritePullResponse(c *mappingCtx, cur protocol.LogicQueueMappingItem, reqLogic int64, rh *protocol.PullMessageResponseHeader, code int32) int32 {
	leader, _ := c.leader()
	earliest, _ := findItem(c.items, 0)
	// Java compares the request's (rewritten, physical) offset with the
	// physical figures.
	req := cur.PhysicalOffset(reqLogic)
	next, minOff, maxOff := rh.NextBeginOffset, rh.MinOffset, rh.MaxOffset
	out := code
	if code != protocol.Success {
		revised := false
		if leader.Gen == cur.Gen {
			switch {
			case req > maxOff:
				if code == protocol.PullOffsetMoved {
					next = maxOff
				}
			case req < minOff:
				next, out = minOff, protocol.PullRetryImmediately
			}
		}
		if earliest.Gen == cur.Gen {
			switch {
			case req < minOff:
				next, out = minOff, protocol.PullOffsetMoved
			case req >= maxOff:
				if n, ok := findNext(c.items, cur); ok {
					revised, cur = true, n
					next, minOff, maxOff = n.StartOffset, n.StartOffset, n.StartOffset
					out = protocol.PullRetryImmediately
				} else {
					out = protocol.PullNotFound
				}
			default:
				out = code
			}
		}
		if !revised && leader.Gen != cur.Gen && earliest.Gen != cur.Gen {
			switch {
			case req < minOff:
				next, out = minOff, protocol.PullRetryImmediately
			case req >= maxOff:
				if n, ok := findNext(c.items, cur); ok {
					cur = n
					next, minOff, maxOff = n.StartOffset, n.StartOffset, n.StartOffset
					out = protocol.PullRetryImmediately
				} else {
					out = protocol.PullNotFound
				}
			default:
				out = code
			}
		}
	}
	if endDecided(cur) && next >= cur.EndOffset {
		next = cur.EndOffset
	}
	rh.NextBeginOffset = staticStrictly(cur, next)
	rh.MinOffset = staticStrictly(cur, max(cur.StartOffset, minOff))
	rh.MaxOffset = max(staticStrictly(cur, maxOff), leader.MaxStaticOffset())
	rh.OffsetDelta = protocol.Some(cur.LogicOffset - cur.StartOffset)
	return out
}

// pullCommitStatic turns a pull's commit offset (logic) into the physical
// queue and offset of the item holding it; ok is false when that item is
// on another broker (the commit is left to UPDATE_CONSUMER_OFFSET, which
// forwards).
func pullCommitStatic(c *mappingCtx, logic int64) (queueID int32, physical int64, ok bool) {
	it, found := findItem(c.items, logic)
	if !found || !c.local(it) {
		return 0, 0, false
	}
	return it.QueueID, it.PhysicalOffset(logic), true
}

// updateOffsetStatic is ConsumerManageProcessor.rewriteRequestForStaticTopic
// of UPDATE_CONSUMER_OFFSET: the logic commit offset is stored as the
// physical offset of the item holding it, here (h rewritten, nil
// returned) or on that item's broker (its answer returned).
func (m *staticRW) updateOffsetStatic(c *mappingCtx, h *protocol.UpdateConsumerOffsetRequestHeader) *remoting.Command {
	if !c.isLeader() {
		return c.notLeader()
	}
	it, found := findItem(c.items, h.CommitOffset)
	if !found {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("%s-%d has no mapping item with a decided logic offset", c.topic, c.globalID))
	}
	h.QueueID, h.BrokerName, h.CommitOffset = it.QueueID, it.Bname, it.PhysicalOffset(h.CommitOffset)
	if c.local(it) {
		return nil
	}
	fh := *h // a copy: h stays on the caller's stack
	resp, err := m.forward(c.topic, it.Bname, remoting.NewRequest(protocol.UpdateConsumerOffset, forwardExt(&fh, it.Bname), nil))
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	return resp
}

// queryOffsetStatic is ConsumerManageProcessor's rewrite of
// QUERY_CONSUMER_OFFSET: a chain of one item from logic offset 0 is read
// as a physical queue (h rewritten, nil returned, the answer then
// rewritten by staticStrictly of that item); otherwise the items are read
// from the leader back, here or on their brokers (setZeroIfNotFound
// false), and the first offset found is answered in logic terms, or
// QUERY_NOT_FOUND.
func (m *staticRW) queryOffsetStatic(c *mappingCtx, h *protocol.QueryConsumerOffsetRequestHeader) (cur protocol.LogicQueueMappingItem, resp *remoting.Command) {
	if !c.isLeader() {
		return cur, c.notLeader()
	}
	if len(c.items) == 1 && c.items[0].LogicOffset == 0 {
		cur = c.items[0]
		h.QueueID = cur.QueueID
		return cur, nil
	}
	offset := int64(-1)
	for i := len(c.items) - 1; i >= 0; i-- {
		cur = c.items[i]
		if c.local(cur) {
			if off, found := m.offsets.Query(h.ConsumerGroup, h.Topic, cur.QueueID); found && off >= 0 {
				offset = off
				break
			}
			continue
		}
		fh := *h
		fh.BrokerName, fh.QueueID, fh.SetZeroIfNotFound = cur.Bname, cur.QueueID, protocol.Some(false)
		fresp, err := m.forward(c.topic, cur.Bname, remoting.NewRequest(protocol.QueryConsumerOffset, forwardExt(&fh, cur.Bname), nil))
		if err != nil {
			return cur, remoting.NewResponse(protocol.SystemError, err.Error())
		}
		if fresp.Code == protocol.QueryNotFound {
			continue
		}
		if fresp.Code != protocol.Success {
			return cur, remoting.NewResponse(protocol.SystemError, fmt.Sprintf("Unknown response code %d", fresp.Code))
		}
		var rh protocol.OffsetResponseHeader
		if err := rh.Decode(fresp.Ext()); err != nil {
			return cur, remoting.NewResponse(protocol.SystemError, "forwarded offset query: "+err.Error())
		}
		offset = rh.Offset
		break
	}
	if offset < 0 {
		return cur, remoting.NewResponse(protocol.QueryNotFound, "Not found, maybe this group consumer boot first")
	}
	return cur, ok(&protocol.OffsetResponseHeader{Offset: staticStrictly(cur, offset)})
}

// maxOffsetStatic is AdminBrokerProcessor's rewrite of GET_MAX_OFFSET: the
// leader queue's max offset on the broker of the last decided item, in
// that item's logic terms.
func (m *staticRW) maxOffsetStatic(c *mappingCtx, h *protocol.QueueRequestHeader) *remoting.Command {
	if !c.isLeader() {
		return c.notLeader()
	}
	leader, _ := c.leader()
	maxItem, found := findItem(c.items, 1<<63-1)
	if !found {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("%s-%d has no mapping item with a decided logic offset", c.topic, c.globalID))
	}
	physical, resp := m.itemOffset(c, maxItem, leader.QueueID, h, protocol.GetMaxOffset, m.store.MaxOffset)
	if resp != nil {
		return resp
	}
	return ok(&protocol.OffsetResponseHeader{Offset: staticStrictly(maxItem, physical)})
}

// minOffsetStatic is AdminBrokerProcessor.handleGetMinOffsetForStaticTopic:
// the earliest item's min offset, in its logic terms (loosely).
func (m *staticRW) minOffsetStatic(c *mappingCtx, h *protocol.QueueRequestHeader) *remoting.Command {
	if !c.isLeader() {
		return remoting.NewResponse(protocol.NotLeaderForQueue,
			fmt.Sprintf("%s-%d is not leader in broker %s, request code %d", c.topic, c.globalID, c.detail.Bname, protocol.GetMinOffset))
	}
	it, _ := findItem(c.items, 0)
	physical, resp := m.itemOffset(c, it, it.QueueID, h, protocol.GetMinOffset, m.store.MinOffset)
	if resp != nil {
		return resp
	}
	return ok(&protocol.OffsetResponseHeader{Offset: it.StaticOffsetLoosely(physical)})
}

// itemOffset is the physical offset of queueID that local reads when item
// is on this broker, else what item's broker answers to code for it.
func (m *staticRW) itemOffset(c *mappingCtx, item protocol.LogicQueueMappingItem, queueID int32, h *protocol.QueueRequestHeader,
	code protocol.RequestCode, local func(topic string, queueID int32) int64) (int64, *remoting.Command) {
	if c.local(item) {
		return local(c.topic, queueID), nil
	}
	fh := *h
	fh.QueueID = queueID
	return m.forwardOffset(c.topic, item.Bname, code, &fh)
}

// earliestTimeStatic is AdminBrokerProcessor's rewrite of
// GET_EARLIEST_MSG_STORETIME: the earliest item's first store time. Java
// forwards with the logic queue id left in place (a bug: it reads the
// physical queue of that number); rocketd reads the item's queue.
func (m *staticRW) earliestTimeStatic(c *mappingCtx, h *protocol.QueueRequestHeader) *remoting.Command {
	if !c.isLeader() {
		return c.notLeader()
	}
	it, _ := findItem(c.items, 0)
	if c.local(it) {
		return ok(&protocol.GetEarliestMsgStoretimeResponseHeader{Timestamp: m.store.EarliestMessageTime(c.topic, it.QueueID)})
	}
	fh := *h
	fh.QueueID = it.QueueID
	resp, err := m.forward(c.topic, it.Bname, remoting.NewRequest(protocol.GetEarliestMsgStoretime, forwardExt(&fh, it.Bname), nil))
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if resp.Code != protocol.Success {
		return resp
	}
	var rh protocol.GetEarliestMsgStoretimeResponseHeader
	if err := rh.Decode(resp.Ext()); err != nil {
		return remoting.NewResponse(protocol.SystemError, "forwarded store time: "+err.Error())
	}
	return ok(&rh)
}

// searchOffsetStatic is AdminBrokerProcessor's rewrite of
// SEARCH_OFFSET_BY_TIMESTAMP: the items with a decided logic offset are
// searched from the earliest on; a local hit above 0 ends the search, a
// remote one within its item is kept while later items are searched.
// Answers -1 when nothing matched.
func (m *staticRW) searchOffsetStatic(c *mappingCtx, h *protocol.SearchOffsetRequestHeader, search func(queueID int32) int64) *remoting.Command {
	if !c.isLeader() {
		return c.notLeader()
	}
	offset := int64(-1)
	for _, it := range c.items {
		if it.LogicOffset < 0 {
			continue
		}
		if c.local(it) {
			if off := search(it.QueueID); off > 0 {
				offset = staticStrictly(it, off)
				break
			}
			continue
		}
		fh := *h
		fh.QueueID = it.QueueID
		off, resp := m.forwardOffset(c.topic, it.Bname, protocol.SearchOffsetByTimestamp, &fh)
		if resp != nil {
			return resp
		}
		if off < 0 || endDecided(it) && off >= it.EndOffset {
			continue
		}
		offset = staticStrictly(it, off)
	}
	return ok(&protocol.OffsetResponseHeader{Offset: offset})
}

// forwardOffset forwards a request answered by an OffsetResponseHeader and
// returns the offset, or the answer to give when it failed.
func (m *staticRW) forwardOffset(topic, bname string, code protocol.RequestCode, h protocol.ExtHeader) (int64, *remoting.Command) {
	resp, err := m.forward(topic, bname, remoting.NewRequest(code, forwardExt(h, bname), nil))
	if err != nil {
		return 0, remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if resp.Code != protocol.Success {
		return 0, resp
	}
	var rh protocol.OffsetResponseHeader
	if err := rh.Decode(resp.Ext()); err != nil {
		return 0, remoting.NewResponse(protocol.SystemError, fmt.Sprintf("forwarded request %d: %v", code, err))
	}
	return rh.Offset, nil
}
