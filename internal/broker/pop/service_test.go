package pop

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

const (
	testTopic  = "T"
	testGroup  = "G"
	testBroker = "broker-a"
)

// fixture is a store, the metadata and a Service on a fake clock.
type fixture struct {
	t       testing.TB
	dir     string
	st      *store.Store
	topics  *meta.Topics
	groups  *meta.Groups
	offsets *meta.Offsets
	svc     *Service
	now     time.Time
	obs     ReviveObserver // set before newService
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), now: time.UnixMilli(1_800_000_000_000)}
	st, err := store.Open(store.Config{
		Dir: f.dir, FS: vfs.Default, SegmentSize: 1 << 20, CQUnitsPerFile: 1000, MaxMessageSize: 64 << 10,
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), FlushInterval: 20 * time.Millisecond,
		CQFlushInterval: 20 * time.Millisecond, CleanInterval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	bc := config.NewBrokerConfig()
	bc.EnsureDefaults()
	mopts := meta.Options{Dir: filepath.Join(f.dir, "config"), FS: vfs.Default}
	if f.topics, err = meta.OpenTopics(mopts, &bc); err != nil {
		t.Fatal(err)
	}
	if f.groups, err = meta.OpenGroups(mopts, &bc); err != nil {
		t.Fatal(err)
	}
	if f.offsets, err = meta.OpenOffsets(mopts); err != nil {
		t.Fatal(err)
	}
	if err := f.topics.Put(protocol.TopicConfig{TopicName: testTopic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: meta.PermReadWrite}); err != nil {
		t.Fatal(err)
	}
	f.svc = f.newService()
	t.Cleanup(func() {
		_ = f.svc.Close()
		_ = f.offsets.Close()
		_ = st.Close()
	})
	return f
}

func (f *fixture) newService() *Service {
	f.t.Helper()
	svc, err := New(Config{
		Store: f.st, Topics: f.topics, Groups: f.groups, Offsets: f.offsets, BrokerName: testBroker, Cluster: "C",
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), ReviveQueueNum: 2, ReviveInterval: time.Hour,
		OrderInfoPath: filepath.Join(f.dir, "config", OrderInfoFile), Now: func() time.Time { return f.now },
		ReviveLog: f.obs,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return svc
}

func (f *fixture) put(topic string, bodies ...string) {
	f.t.Helper()
	before := f.st.MaxOffset(topic, 0)
	for _, b := range bodies {
		rec := message.Record{Topic: topic, Body: []byte(b), BornTimestamp: f.now.UnixMilli(),
			BornHost: netip.MustParseAddrPort("10.0.0.1:5000"), Properties: message.SetProperty("", message.PropertyTags, "TagA")}
		if res := f.st.PutMessage(context.Background(), &rec, store.PutOptions{}); res.Status != store.PutOK {
			f.t.Fatalf("put: %v", res.Status)
		}
	}
	f.waitQueue(topic, 0, before+int64(len(bodies)))
}

// waitQueue waits until the store dispatched a queue up to max.
func (f *fixture) waitQueue(topic string, qid int32, max int64) {
	f.t.Helper()
	wait.For(f.t, 5*time.Second, fmt.Sprintf("%s@%d dispatched to %d", topic, qid, max), func() bool {
		return f.st.MaxOffset(topic, qid) >= max
	})
}

// waitRevive waits until every revive log record written is dispatched.
func (f *fixture) waitRevive() {
	f.t.Helper()
	wait.For(f.t, 5*time.Second, "revive log dispatched", func() bool {
		return f.st.DispatchedOffset() >= f.st.CommitLogMaxOffset()
	})
}

type popped struct {
	rec    message.Record
	handle ExtraInfo
}

// pop pops and decodes the answer, building each message's receipt handle
// as the Java client does.
func (f *fixture) pop(r Request) ([]popped, protocol.PopMessageResponseHeader) {
	f.t.Helper()
	if r.MaxMsgNums == 0 {
		r.MaxMsgNums = 32
	}
	if r.InvisibleTime == 0 {
		r.InvisibleTime = 10_000
	}
	if r.Group == "" {
		r.Group, r.Topic = testGroup, testTopic
	}
	tc, _ := f.topics.Get(r.Topic)
	res := f.svc.Pop(&r, tc)
	defer res.Release()
	var out []popped
	starts := parseInfo(f.t, res.Header.StartOffsetInfo)
	for _, part := range res.Parts {
		rec, _, err := message.DecodeRecord(bytes.Clone(part), true)
		if err != nil {
			f.t.Fatal(err)
		}
		mark := topicMark(rec.Topic)
		out = append(out, popped{rec: rec, handle: ExtraInfo{
			CkQueueOffset: starts[fmt.Sprintf("%s %d", mark, rec.QueueID)], PopTime: res.Header.PopTime,
			InvisibleTime: res.Header.InvisibleTime, ReviveQid: res.Header.ReviveQid, Mark: mark,
			BrokerName: testBroker, QueueID: rec.QueueID, QueueOffset: rec.QueueOffset,
		}})
	}
	return out, res.Header
}

// parseInfo reads startOffsetInfo: "mark queueId" -> start offset.
func parseInfo(t testing.TB, s string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	if s == "" {
		return m
	}
	for _, e := range bytes.Split([]byte(s), []byte(";")) {
		var mark string
		var q int32
		var off int64
		if _, err := fmt.Sscanf(string(e), "%s %d %d", &mark, &q, &off); err != nil {
			t.Fatalf("startOffsetInfo %q: %v", s, err)
		}
		m[fmt.Sprintf("%s %d", mark, q)] = off
	}
	return m
}

func (f *fixture) ack(p popped) {
	f.t.Helper()
	topic, _ := RealTopic(testTopic, testGroup, p.handle.Mark)
	h := protocol.AckMessageRequestHeader{ConsumerGroup: testGroup, Topic: topic, QueueID: p.rec.QueueID,
		ExtraInfo: p.handle.String(), Offset: p.rec.QueueOffset}
	if st := f.svc.Ack(&h, "test"); st.Code != protocol.Success {
		f.t.Fatalf("ack %d: %d %s", p.rec.QueueOffset, st.Code, st.Remark)
	}
}

func bodies(ps []popped) []string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p.rec.Body))
	}
	return out
}

func (f *fixture) retryRecords() []message.Record {
	f.t.Helper()
	topic := RetryTopic(testTopic, testGroup, false)
	g, err := f.st.GetMessage("", topic, 0, 0, 32, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	defer g.Release()
	var out []message.Record
	for _, m := range g.Messages {
		r, _, err := message.DecodeRecord(bytes.Clone(m.Bytes), true)
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// An unacked message is revived into the pop retry topic once its
// invisibility is over, not before, with its reconsume count raised; an
// acked one never is; the pop retry topic is then popped.
func TestReviveAfterInvisibility(t *testing.T) {
	f := newFixture(t)
	f.put(testTopic, "m0", "m1", "m2")
	got, h := f.pop(Request{InvisibleTime: 10_000})
	if fmt.Sprint(bodies(got)) != "[m0 m1 m2]" {
		t.Fatalf("popped %v", bodies(got))
	}
	if h.StartOffsetInfo != "0 0 0" || h.MsgOffsetInfo != "0 0 0,1,2" || h.InvisibleTime != 10_000 || h.PopTime != f.now.UnixMilli() {
		t.Fatalf("header %+v", h)
	}
	if again, _ := f.pop(Request{}); len(again) != 0 {
		t.Fatalf("popped again while invisible: %v", bodies(again))
	}
	f.ack(got[1])
	f.waitRevive()

	f.svc.Revive(f.now.Add(9 * time.Second))
	f.waitRevive() // anything revived is dispatched by now
	if n := len(f.retryRecords()); n != 0 {
		t.Fatalf("%d messages revived before the invisible time", n)
	}
	f.svc.Revive(f.now.Add(10 * time.Second))
	f.waitQueue(RetryTopic(testTopic, testGroup, false), 0, 2)
	revived := f.retryRecords()
	if len(revived) != 2 || string(revived[0].Body) != "m0" || string(revived[1].Body) != "m2" {
		t.Fatalf("revived %d: %v", len(revived), revived)
	}
	for _, r := range revived {
		if r.ReconsumeTimes != 1 {
			t.Fatalf("reconsume times %d, want 1", r.ReconsumeTimes)
		}
		if v, _ := message.Property(r.Properties, message.PropertyFirstPopTime); v != fmt.Sprint(f.now.UnixMilli()) {
			t.Fatalf("1ST_POP_TIME %q", v)
		}
	}
	// Resolved: a later round and a new service (a restart) revive
	// nothing more.
	f.svc.Revive(f.now.Add(time.Hour))
	_ = f.svc.Close()
	f.svc = f.newService()
	f.svc.Revive(f.now.Add(2 * time.Hour))
	f.waitRevive()
	if n := len(f.retryRecords()); n != 2 {
		t.Fatalf("%d revived after the restart, want 2", n)
	}

	f.now = f.now.Add(11 * time.Second)
	retried, h := f.pop(Request{})
	if fmt.Sprint(bodies(retried)) != "[m0 m2]" || h.StartOffsetInfo != "1 0 0" {
		t.Fatalf("popped %v, header %+v", bodies(retried), h)
	}
	if retried[0].rec.Topic != RetryTopic(testTopic, testGroup, false) || retried[0].rec.ReconsumeTimes != 1 {
		t.Fatalf("retried record %s reconsume %d", retried[0].rec.Topic, retried[0].rec.ReconsumeTimes)
	}
}

// A check point still open at a restart is read again from the revive
// log: its unacked message is revived by the new service, its acked one
// not.
func TestReviveAcrossRestart(t *testing.T) {
	f := newFixture(t)
	f.put(testTopic, "a", "b")
	got, _ := f.pop(Request{InvisibleTime: 5_000})
	f.ack(got[0])
	f.waitRevive()
	f.svc.Revive(f.now.Add(time.Second)) // reads ck and ack, nothing due
	_ = f.svc.Close()
	f.svc = f.newService()
	f.svc.Revive(f.now.Add(6 * time.Second))
	f.waitQueue(RetryTopic(testTopic, testGroup, false), 0, 1)
	if r := f.retryRecords(); len(r) != 1 || string(r[0].Body) != "b" {
		t.Fatalf("revived %v", r)
	}
}

// CHANGE_MESSAGE_INVISIBLETIME moves one message's revive time: it comes
// back at the new time, not at the old one.
func TestChangeInvisible(t *testing.T) {
	f := newFixture(t)
	f.put(testTopic, "x")
	got, _ := f.pop(Request{InvisibleTime: 5_000})
	// A check point is known by its pop time (Java's key): the change
	// comes a moment after the pop.
	popAt := f.now
	f.now = f.now.Add(time.Second)
	h := protocol.ChangeInvisibleTimeRequestHeader{ConsumerGroup: testGroup, Topic: testTopic, QueueID: 0,
		ExtraInfo: got[0].handle.String(), Offset: 0, InvisibleTime: 20_000}
	rh, st := f.svc.ChangeInvisible(&h, "test")
	if st.Code != protocol.Success || rh.PopTime != f.now.UnixMilli() || rh.InvisibleTime != 20_000 || rh.ReviveQid != got[0].handle.ReviveQid {
		t.Fatalf("change invisible: %+v %+v", st, rh)
	}
	f.waitRevive()
	f.svc.Revive(popAt.Add(10 * time.Second))
	f.waitRevive() // anything revived is dispatched by now
	if n := len(f.retryRecords()); n != 0 {
		t.Fatalf("revived at the old time: %d", n)
	}
	f.svc.Revive(f.now.Add(20 * time.Second))
	f.waitQueue(RetryTopic(testTopic, testGroup, false), 0, 1)
	if r := f.retryRecords(); len(r) != 1 || string(r[0].Body) != "x" {
		t.Fatalf("revived %v", r)
	}
}

// After retryMaxTimes deliveries a message goes to the group's DLQ.
func TestReviveToDLQ(t *testing.T) {
	f := newFixture(t)
	gc, _ := f.groups.FindOrCreate(testGroup)
	gc.RetryMaxTimes = 1
	if err := f.groups.Put(gc); err != nil {
		t.Fatal(err)
	}
	f.put(testTopic, "d")
	f.pop(Request{InvisibleTime: 1_000})
	f.waitRevive()
	f.svc.Revive(f.now.Add(time.Second))
	f.waitQueue(RetryTopic(testTopic, testGroup, false), 0, 1)
	f.now = f.now.Add(2 * time.Second)
	retried, _ := f.pop(Request{InvisibleTime: 1_000})
	if len(retried) != 1 || retried[0].rec.ReconsumeTimes != 1 {
		t.Fatalf("retried %v", retried)
	}
	f.waitRevive()
	f.svc.Revive(f.now.Add(time.Second))
	dlq := meta.DLQTopic(testGroup)
	f.waitQueue(dlq, 0, 1)
	f.waitRevive()
	if n := f.st.MaxOffset(RetryTopic(testTopic, testGroup, false), 0); n != 1 {
		t.Fatalf("retry topic has %d messages, want 1", n)
	}
}

// Orderly pops: a queue's next messages are not handed out while the
// batch has an unacked, invisible message; an expired batch comes back
// with its count; acks move the offset.
func TestOrderlyPop(t *testing.T) {
	f := newFixture(t)
	f.put(testTopic, "o0", "o1", "o2", "o3", "o4")
	r := Request{Order: true, MaxMsgNums: 2, InvisibleTime: 5_000, QueueID: 0}
	b1, h := f.pop(r)
	if fmt.Sprint(bodies(b1)) != "[o0 o1]" || h.ReviveQid != OrderReviveQueue {
		t.Fatalf("first batch %v %+v", bodies(b1), h)
	}
	if b, _ := f.pop(r); len(b) != 0 {
		t.Fatalf("handed out %v while blocked", bodies(b))
	}
	f.ack(b1[0])
	if b, _ := f.pop(r); len(b) != 0 {
		t.Fatalf("handed out %v with o1 unacked", bodies(b))
	}
	f.ack(b1[1])
	b2, _ := f.pop(r)
	if fmt.Sprint(bodies(b2)) != "[o2 o3]" {
		t.Fatalf("second batch %v", bodies(b2))
	}
	f.now = f.now.Add(5 * time.Second) // invisibility over, nothing acked
	b3, h := f.pop(r)
	if fmt.Sprint(bodies(b3)) != "[o2 o3]" || h.OrderCountInfo != "0 qo0%2 1;0 qo0%3 1" {
		t.Fatalf("redelivered %v %+v", bodies(b3), h)
	}
	for _, p := range b3 {
		f.ack(p)
	}
	// The state survives a restart (consumerOrderInfo.json).
	_ = f.svc.Close()
	f.svc = f.newService()
	b4, _ := f.pop(r)
	if fmt.Sprint(bodies(b4)) != "[o4]" {
		t.Fatalf("last batch %v", bodies(b4))
	}
	if b, _ := f.pop(r); len(b) != 0 {
		t.Fatalf("handed out %v after a restart while blocked", bodies(b))
	}
}

func TestExtraInfoRoundTrip(t *testing.T) {
	e := ExtraInfo{CkQueueOffset: 5, PopTime: 1700, InvisibleTime: 60000, ReviveQid: 3, Mark: "1", BrokerName: "b", QueueID: 2, QueueOffset: 7}
	if e.String() != "5 1700 60000 3 1 b 2 7" {
		t.Fatalf("String %q", e.String())
	}
	got, err := ParseExtraInfo(e.String())
	if err != nil || got != e {
		t.Fatalf("parse: %+v %v", got, err)
	}
	seven, err := ParseExtraInfo("5 1700 60000 3 0 b 2")
	if err != nil || seven.QueueOffset != -1 {
		t.Fatalf("seven fields: %+v %v", seven, err)
	}
	for _, bad := range []string{"", "1 2 3", "x 1 2 3 0 b 2 7"} {
		if _, err := ParseExtraInfo(bad); err == nil {
			t.Fatalf("ParseExtraInfo(%q) accepted", bad)
		}
	}
}

// CHANGE_MESSAGE_INVISIBLETIME of an orderly message moves that message's
// next visible time: the queue stays blocked past the batch's own time.
func TestOrderlyChangeInvisible(t *testing.T) {
	f := newFixture(t)
	f.put(testTopic, "o0", "o1")
	r := Request{Order: true, MaxMsgNums: 1, InvisibleTime: 5_000, QueueID: 0}
	b1, _ := f.pop(r)
	if len(b1) != 1 {
		t.Fatalf("popped %v", bodies(b1))
	}
	h := protocol.ChangeInvisibleTimeRequestHeader{ConsumerGroup: testGroup, Topic: testTopic, QueueID: 0,
		ExtraInfo: b1[0].handle.String(), Offset: 0, InvisibleTime: 20_000}
	rh, st := f.svc.ChangeInvisible(&h, "test")
	if st.Code != protocol.Success || rh.PopTime != b1[0].handle.PopTime || rh.InvisibleTime != 20_000 || rh.ReviveQid != OrderReviveQueue {
		t.Fatalf("change invisible: %+v %+v", st, rh)
	}
	f.now = f.now.Add(6 * time.Second)
	if b, _ := f.pop(r); len(b) != 0 {
		t.Fatalf("handed out %v before the new visible time", bodies(b))
	}
	f.now = f.now.Add(15 * time.Second)
	if b, _ := f.pop(r); fmt.Sprint(bodies(b)) != "[o0]" {
		t.Fatalf("after the new visible time: %v", bodies(b))
	}
}

// A change of invisible time in the millisecond of the pop (a push
// consumer failing a message at once) must not lose the message: the new
// one-message check point and the old one would have the same key (same
// start offset, same pop time), and the ack of the old one would resolve
// both.
func TestChangeInvisibleInPopMillisecond(t *testing.T) {
	f := newFixture(t)
	f.put(testTopic, "x")
	got, _ := f.pop(Request{InvisibleTime: 60_000})
	h := protocol.ChangeInvisibleTimeRequestHeader{ConsumerGroup: testGroup, Topic: testTopic, QueueID: 0,
		ExtraInfo: got[0].handle.String(), Offset: 0, InvisibleTime: 1_000}
	rh, st := f.svc.ChangeInvisible(&h, "test")
	if st.Code != protocol.Success {
		t.Fatalf("change invisible: %+v", st)
	}
	if rh.PopTime == got[0].handle.PopTime {
		t.Fatalf("new handle keeps the pop time %d of the old one", rh.PopTime)
	}
	f.waitRevive()
	f.svc.Revive(f.now.Add(2 * time.Second))
	f.waitQueue(RetryTopic(testTopic, testGroup, false), 0, 1)
	if r := f.retryRecords(); len(r) != 1 || string(r[0].Body) != "x" {
		t.Fatalf("revived %v", r)
	}
}
