package processor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// movedQueue is logic queue 0 of a static topic moved from broker-b
// (physical queue 0, logic offsets 0..2, closed at 3) to broker-a
// (physical queue 0, logic offsets from 10 on), as remappingStaticTopic
// leaves it (a gap after the old item's end), seen from bname.
func movedQueue(topic, bname string) *protocol.TopicQueueMappingDetail {
	return &protocol.TopicQueueMappingDetail{Topic: topic, Scope: protocol.MetadataScopeGlobal, TotalQueues: 1, Bname: bname,
		Epoch: 2000, CurrIDMap: map[int32]int32{}, HostedQueues: map[int32][]protocol.LogicQueueMappingItem{0: {
			{Gen: 0, QueueID: 0, Bname: "broker-b", LogicOffset: 0, StartOffset: 0, EndOffset: 3, TimeOfStart: -1, TimeOfEnd: -1},
			{Gen: 1, QueueID: 0, Bname: "broker-a", LogicOffset: 10, StartOffset: 0, EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1},
		}}}
}

// staticPair is two brokers of one static topic: a leads logic queue 0,
// b holds its first item; a reaches b through a route and a remoting
// client, as a broker forwards.
func staticPair(t *testing.T, topic string) (a, b *env) {
	t.Helper()
	b = newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.BrokerName = "broker-b" })
	fwd := remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() { _ = fwd.Close() })
	route := func(_ context.Context, tp string) (protocol.TopicRouteData, bool, error) {
		return protocol.TopicRouteData{BrokerDatas: []protocol.BrokerData{
			{Cluster: "c", BrokerName: "broker-b", BrokerAddrs: map[int64]string{0: b.addr}},
		}}, tp == topic, nil
	}
	a = newEnv(t, func(c *config.BrokerConfig, d *processor.Deps) {
		c.BrokerName = "broker-a"
		d.TopicRoute, d.Forward = route, fwd.Invoke
	})
	for _, e := range []*env{a, b} {
		if r := e.createStatic(movedQueue(topic, e.cfg.BrokerName), 1, false); r.Code != protocol.Success {
			t.Fatalf("create on %s: %d %s", e.cfg.BrokerName, r.Code, r.Remark)
		}
	}
	// Three messages on b before the move (physical, lo=false: b no
	// longer leads the logic queue), two on a after it.
	for i := range 3 {
		ext := protocol.Ext(sendHeader(topic, 0, ""))
		ext["lo"] = "false"
		if r := b.call(protocol.SendMessage, ext, []byte(fmt.Sprintf("old-%d", i))); r.Code != protocol.Success {
			t.Fatalf("send to b: %d %s", r.Code, r.Remark)
		}
	}
	for i := range 2 {
		r := a.send(sendHeader(topic, 0, ""), fmt.Sprintf("new-%d", i))
		var h protocol.SendMessageResponseHeader
		must(t, h.Decode(r.ExtFields))
		if r.Code != protocol.Success || h.QueueOffset != 10+int64(i) {
			t.Fatalf("send to a: %d %s offset %d", r.Code, r.Remark, h.QueueOffset)
		}
	}
	b.waitMaxOffset(topic, 0, 3)
	a.waitMaxOffset(topic, 0, 2)
	return a, b
}

func (e *env) offsetOf(code int32, ext map[string]string) (int64, *remoting.Command) {
	e.t.Helper()
	r := e.call(code, ext, nil)
	var h protocol.OffsetResponseHeader
	if r.Code == protocol.Success {
		must(e.t, h.Decode(r.ExtFields))
	}
	return h.Offset, r
}

// TestStaticTopicPull: a pull names the logic queue and a logic offset
// (PullMessageProcessor.rewriteRequestForStaticTopic): an offset of the
// item on broker-b is pulled there (lo=false, capped at the item's end)
// and answered in logic offsets; an offset of the leader's item is read
// here with offsetDelta; the end of the old item on b moves on to the
// next one; a broker that does not lead the logic queue refuses.
func TestStaticTopicPull(t *testing.T) {
	a, b := staticPair(t, "SP")

	pull := func(e *env, offset int64) (*remoting.Command, protocol.PullMessageResponseHeader) {
		t.Helper()
		r := e.call(protocol.PullMessage, protocol.Ext(pullHeader("g", "SP", 0, offset, "*")), nil)
		return r, pullHeaderOf(t, r)
	}
	r, h := pull(a, 0)
	if got := bodies(t, r.Body); r.Code != protocol.Success || strings.Join(got, ",") != "old-0,old-1,old-2" {
		t.Fatalf("pull logic 0 (forwarded to b): %d %s %v", r.Code, r.Remark, got)
	}
	if h.NextBeginOffset != 3 || h.MinOffset != 0 || h.MaxOffset != 10 || !h.OffsetDelta.Set || h.OffsetDelta.Value != 0 {
		t.Fatalf("pull logic 0: %+v", h)
	}
	r, h = pull(a, 1)
	if got := bodies(t, r.Body); r.Code != protocol.Success || strings.Join(got, ",") != "old-1,old-2" || h.NextBeginOffset != 3 {
		t.Fatalf("pull logic 1: %d %v %+v", r.Code, got, h)
	}
	// The end of b's item: on to a's, at logic 10.
	if r, h = pull(a, 3); r.Code != protocol.PullRetryImmediately || h.NextBeginOffset != 10 || h.MinOffset != 10 {
		t.Fatalf("pull logic 3 (end of b's item): %d %s %+v", r.Code, r.Remark, h)
	}
	r, h = pull(a, 10)
	if got := bodies(t, r.Body); r.Code != protocol.Success || strings.Join(got, ",") != "new-0,new-1" {
		t.Fatalf("pull logic 10 (local): %d %s %v", r.Code, r.Remark, got)
	}
	if h.NextBeginOffset != 12 || h.MinOffset != 10 || h.MaxOffset != 12 || h.OffsetDelta.Value != 10 {
		t.Fatalf("pull logic 10: %+v", h)
	}
	if r, h = pull(a, 12); r.Code != protocol.PullNotFound || h.NextBeginOffset != 12 || h.MaxOffset != 12 {
		t.Fatalf("pull logic 12 (caught up): %d %s %+v", r.Code, r.Remark, h)
	}
	// b does not lead logic queue 0.
	if r, _ := pull(b, 0); r.Code != protocol.NotLeaderForQueue || r.Remark != "SP-0 cannot find mapping item in request process of current broker broker-b" {
		t.Fatalf("pull from b: %d %q", r.Code, r.Remark)
	}
	// lo=false on b: its physical queue, unrewritten.
	ext := protocol.Ext(pullHeader("g", "SP", 0, 1, "*"))
	ext["lo"] = "false"
	r = b.call(protocol.PullMessage, ext, nil)
	if h := pullHeaderOf(t, r); r.Code != protocol.Success || len(bodies(t, r.Body)) != 2 || h.OffsetDelta.Set || h.NextBeginOffset != 3 {
		t.Fatalf("physical pull on b: %d %s %+v", r.Code, r.Remark, h)
	}
}

// TestStaticTopicPullItemEdge: rewriteResponseForStaticTopic's item
// moves: a pull at the end of a closed earlier item here answers
// PULL_RETRY_IMMEDIATELY with the next item's logic start.
func TestStaticTopicPullItemEdge(t *testing.T) {
	e := newEnv(t, nil)
	d := staticDetail("SE", 1, 1000)
	d.HostedQueues[0] = []protocol.LogicQueueMappingItem{
		{Gen: 0, QueueID: 0, Bname: "broker-a", LogicOffset: 0, StartOffset: 0, EndOffset: 5, TimeOfStart: -1, TimeOfEnd: -1},
		{Gen: 1, QueueID: 1, Bname: "broker-a", LogicOffset: 6, StartOffset: 0, EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1},
	}
	if r := e.createStatic(d, 2, false); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	// Physical queue 0 holds 2 messages only (the item says 5).
	for i := range 2 {
		ext := protocol.Ext(sendHeader("SE", 0, ""))
		ext["lo"] = "false"
		if r := e.call(protocol.SendMessage, ext, []byte(fmt.Sprint(i))); r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	e.waitMaxOffset("SE", 0, 2)
	r := e.call(protocol.PullMessage, protocol.Ext(pullHeader("g", "SE", 0, 2, "*")), nil)
	h := pullHeaderOf(t, r)
	if r.Code != protocol.PullRetryImmediately || h.NextBeginOffset != 6 || h.MinOffset != 6 || h.MaxOffset != 6 {
		t.Fatalf("pull at the end of the first item: %d %s %+v", r.Code, r.Remark, h)
	}
}

// TestStaticTopicOffsets: the offset requests on a logic queue
// (ConsumerManageProcessor, AdminBrokerProcessor): a commit is stored as
// the physical offset of the item holding it, on that item's broker; a
// query reads the items from the leader back; max, min, earliest store
// time and search by time read the right item in logic terms; a broker
// that does not lead the logic queue refuses with NOT_LEADER_FOR_QUEUE.
func TestStaticTopicOffsets(t *testing.T) {
	a, b := staticPair(t, "SO")
	q := &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "SO", QueueID: 0}
	if _, r := a.offsetOf(protocol.QueryConsumerOffset, protocol.Ext(q)); r.Code != protocol.QueryNotFound {
		t.Fatalf("query before any commit: %d %s", r.Code, r.Remark)
	}
	commit := func(off int64) {
		t.Helper()
		u := &protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "SO", QueueID: 0, CommitOffset: off}
		if r := a.call(protocol.UpdateConsumerOffset, protocol.Ext(u), nil); r.Code != protocol.Success {
			t.Fatalf("commit %d: %d %s", off, r.Code, r.Remark)
		}
	}
	// Logic 2 is in b's item: stored on b, physical queue 0 offset 2.
	commit(2)
	physical := func(e *env) (int64, int32) {
		ext := protocol.Ext(q)
		ext["lo"] = "false"
		off, r := e.offsetOf(protocol.QueryConsumerOffset, ext)
		return off, r.Code
	}
	if off, code := physical(b); code != protocol.Success || off != 2 {
		t.Fatalf("b's physical offset after commit(2): %d (code %d)", off, code)
	}
	if off, r := a.offsetOf(protocol.QueryConsumerOffset, protocol.Ext(q)); r.Code != protocol.Success || off != 2 {
		t.Fatalf("query after commit(2): %d %d %s", off, r.Code, r.Remark)
	}
	// Logic 11 is a's physical 1; the query finds the leader's first.
	commit(11)
	if off, code := physical(a); code != protocol.Success || off != 1 {
		t.Fatalf("a's physical offset after commit(11): %d (code %d)", off, code)
	}
	if off, r := a.offsetOf(protocol.QueryConsumerOffset, protocol.Ext(q)); r.Code != protocol.Success || off != 11 {
		t.Fatalf("query after commit(11): %d %d %s", off, r.Code, r.Remark)
	}

	qh := &protocol.QueueRequestHeader{Topic: "SO", QueueID: 0}
	if off, r := a.offsetOf(protocol.GetMaxOffset, protocol.Ext(qh)); r.Code != protocol.Success || off != 12 {
		t.Fatalf("max offset: %d %d %s", off, r.Code, r.Remark)
	}
	if off, r := a.offsetOf(protocol.GetMinOffset, protocol.Ext(qh)); r.Code != protocol.Success || off != 0 {
		t.Fatalf("min offset: %d %d %s", off, r.Code, r.Remark)
	}
	r := a.call(protocol.GetEarliestMsgStoretime, protocol.Ext(qh), nil)
	var eh protocol.GetEarliestMsgStoretimeResponseHeader
	must(t, eh.Decode(r.ExtFields))
	if want := b.store.EarliestMessageTime("SO", 0); r.Code != protocol.Success || eh.Timestamp != want || want <= 0 {
		t.Fatalf("earliest store time: %d %s %d, b's queue says %d", r.Code, r.Remark, eh.Timestamp, want)
	}
	search := func(ts int64) int64 {
		t.Helper()
		off, r := a.offsetOf(protocol.SearchOffsetByTimestamp, protocol.Ext(&protocol.SearchOffsetRequestHeader{Topic: "SO", QueueID: 0, Timestamp: ts}))
		if r.Code != protocol.Success {
			t.Fatalf("search %d: %d %s", ts, r.Code, r.Remark)
		}
		return off
	}
	if off := search(0); off != 0 {
		t.Fatalf("search from the epoch: %d, want 0", off)
	}
	if off := search(time.Now().Add(time.Hour).UnixMilli()); off < 10 {
		t.Fatalf("search an hour ahead: %d, want an offset of a's item (>= 10)", off)
	}

	// b leads nothing.
	for _, c := range []struct {
		code int32
		ext  map[string]string
	}{
		{protocol.QueryConsumerOffset, protocol.Ext(q)},
		{protocol.UpdateConsumerOffset, protocol.Ext(&protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "SO", QueueID: 0, CommitOffset: 1})},
		{protocol.GetMaxOffset, protocol.Ext(qh)},
		{protocol.GetEarliestMsgStoretime, protocol.Ext(qh)},
		{protocol.SearchOffsetByTimestamp, protocol.Ext(&protocol.SearchOffsetRequestHeader{Topic: "SO", QueueID: 0})},
	} {
		if r := b.call(c.code, c.ext, nil); r.Code != protocol.NotLeaderForQueue || r.Remark != "SO-0 does not exit in request process of current broker broker-b" {
			t.Errorf("request %d on b: %d %q", c.code, r.Code, r.Remark)
		}
	}
	if r := b.call(protocol.GetMinOffset, protocol.Ext(qh), nil); r.Code != protocol.NotLeaderForQueue ||
		r.Remark != "SO-0 is not leader in broker broker-b, request code 31" {
		t.Errorf("min offset on b: %d %q", r.Code, r.Remark)
	}
	// lo=false: b's physical queue as it is.
	ext := protocol.Ext(qh)
	ext["lo"] = "false"
	if off, r := b.offsetOf(protocol.GetMaxOffset, ext); r.Code != protocol.Success || off != 3 {
		t.Fatalf("physical max offset on b: %d %d %s", off, r.Code, r.Remark)
	}
}

// TestStaticTopicForwardUnreachable: an item on a broker the route does
// not name answers SYSTEM_ERROR saying so (Java's RpcClient exception).
func TestStaticTopicForwardUnreachable(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, d *processor.Deps) {
		d.TopicRoute = func(context.Context, string) (protocol.TopicRouteData, bool, error) {
			return protocol.TopicRouteData{}, true, nil
		}
		d.Forward = func(context.Context, string, *remoting.Command) (*remoting.Command, error) {
			t.Error("forwarded without an address")
			return nil, nil
		}
	})
	if r := e.createStatic(movedQueue("SU", "broker-a"), 1, false); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	r := e.call(protocol.PullMessage, protocol.Ext(pullHeader("g", "SU", 0, 0, "*")), nil)
	if r.Code != protocol.SystemError || !strings.Contains(r.Remark, "cannot find addr for broker broker-b") {
		t.Fatalf("pull of an unreachable item: %d %q", r.Code, r.Remark)
	}
}

// TestStaticTopicForwardedPullRefused: a forwarded pull the other broker
// answers with a code that is no pull status (SYSTEM_BUSY of a loaded
// broker: no offsets in its header) is SYSTEM_ERROR, as Java's RpcClient
// makes it, never the end of the item: read as one, it moved a consumer
// past the item's messages.
func TestStaticTopicForwardedPullRefused(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, d *processor.Deps) {
		d.TopicRoute = func(context.Context, string) (protocol.TopicRouteData, bool, error) {
			return protocol.TopicRouteData{BrokerDatas: []protocol.BrokerData{
				{Cluster: "c", BrokerName: "broker-b", BrokerAddrs: map[int64]string{0: "127.0.0.1:1"}},
			}}, true, nil
		}
		d.Forward = func(context.Context, string, *remoting.Command) (*remoting.Command, error) {
			return remoting.NewResponse(protocol.SystemBusy, "[TIMEOUT_CLEAN_QUEUE]broker busy"), nil
		}
	})
	if r := e.createStatic(movedQueue("SB", "broker-a"), 1, false); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	r := e.call(protocol.PullMessage, protocol.Ext(pullHeader("g", "SB", 0, 0, "*")), nil)
	if r.Code != protocol.SystemError || !strings.Contains(r.Remark, "unexpected remote response code 2") {
		t.Fatalf("pull of an item whose broker is busy: %d %q", r.Code, r.Remark)
	}
}
