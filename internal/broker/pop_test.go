package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// popTune revives every 50 ms so that invisibility tests take little time.
func popTune(bc *config.BrokerConfig) { bc.ReviveInterval = 50 * time.Millisecond }

// popMsg is a popped message with the receipt handle a Java client builds
// from the response header (MQClientAPIImpl.processPopResponse).
type popMsg struct {
	rec    message.Record
	handle string
	realT  string // the topic to ack with
}

type popAnswer struct {
	code   int32
	remark string
	h      protocol.PopMessageResponseHeader
	msgs   []popMsg
}

type popReq struct {
	group, topic        string
	queue               int32
	max                 int32
	invisible, pollTime int64
	order               bool
	exp                 string
}

// sendRaw sends bodies to topic (queue picked by the broker) with tag.
func (c *cluster) sendRaw(addr, topic, tag string, bodies ...string) {
	c.t.Helper()
	for _, b := range bodies {
		h := protocol.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: -1, BornTimestamp: time.Now().UnixMilli(),
			Properties: message.SetProperty("", message.PropertyTags, tag)}
		if r := c.invoke(addr, protocol.SendMessage, &h, []byte(b)); r.Code != protocol.Success {
			c.t.Fatalf("send %s: %d %s", b, r.Code, r.Remark)
		}
	}
}

func (c *cluster) popRaw(addr string, r popReq) popAnswer {
	c.t.Helper()
	if r.max == 0 {
		r.max = 32
	}
	h := protocol.PopMessageRequestHeader{ConsumerGroup: r.group, Topic: r.topic, QueueID: r.queue, MaxMsgNums: r.max,
		InvisibleTime: r.invisible, PollTime: r.pollTime, BornTime: time.Now().UnixMilli(), Order: r.order, Exp: r.exp, ExpType: "TAG"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.pollTime)*time.Millisecond+10*time.Second)
	defer cancel()
	resp, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(protocol.PopMessage, protocol.Ext(&h), nil))
	if err != nil {
		c.t.Fatalf("pop: %v", err)
	}
	a := popAnswer{code: resp.Code, remark: resp.Remark}
	if err := a.h.Decode(resp.Ext()); err != nil {
		c.t.Fatal(err)
	}
	if resp.Code != protocol.Success {
		return a
	}
	starts := map[string]string{}
	for _, e := range strings.Split(a.h.StartOffsetInfo, ";") {
		f := strings.Fields(e)
		starts[f[0]+" "+f[1]] = f[2]
	}
	body := resp.Body
	for len(body) > 0 {
		rec, n, err := message.DecodeRecord(body, true)
		if err != nil {
			c.t.Fatal(err)
		}
		body = body[n:]
		mark := "0"
		if strings.HasPrefix(rec.Topic, "%RETRY%") {
			mark = "1"
		}
		key := fmt.Sprintf("%s %d", mark, rec.QueueID)
		handle := fmt.Sprintf("%s %d %d %d %s %s %d %d", starts[key], a.h.PopTime, a.h.InvisibleTime, a.h.ReviveQid,
			mark, c.brokerConfig().BrokerName, rec.QueueID, rec.QueueOffset)
		a.msgs = append(a.msgs, popMsg{rec: rec, handle: handle, realT: rec.Topic})
	}
	return a
}

func (c *cluster) ackRaw(addr, group string, m popMsg) {
	c.t.Helper()
	h := protocol.AckMessageRequestHeader{ConsumerGroup: group, Topic: m.realT, QueueID: m.rec.QueueID,
		ExtraInfo: m.handle, Offset: m.rec.QueueOffset}
	if r := c.invoke(addr, protocol.AckMessage, &h, nil); r.Code != protocol.Success {
		c.t.Fatalf("ack %s: %d %s", m.rec.Body, r.Code, r.Remark)
	}
}

func popBodies(ms []popMsg) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.rec.Body))
	}
	sort.Strings(out)
	return out
}

// Pop, ack, batch ack and change-invisible over remoting; the one
// message left unacked comes back through the pop retry topic with its
// reconsume count raised, and nothing else does.
func TestPopAckRevive(t *testing.T) {
	c := startCluster(t, popTune)
	addr := c.b.Addr()
	topic, group := uniq(t, "PopT"), uniq(t, "PopG")
	c.createTopic(topic, 2)
	c.sendRaw(addr, topic, "TagA", "m0", "m1", "m2", "m3")

	var got []popMsg
	wait.For(t, 10*time.Second, "4 messages popped", func() bool {
		a := c.popRaw(addr, popReq{group: group, topic: topic, queue: -1, invisible: 2000})
		got = append(got, a.msgs...)
		return len(got) >= 4
	})
	if fmt.Sprint(popBodies(got)) != "[m0 m1 m2 m3]" {
		t.Fatalf("popped %v", popBodies(got))
	}
	byBody := map[string]popMsg{}
	for _, m := range got {
		byBody[string(m.rec.Body)] = m
	}
	c.ackRaw(addr, group, byBody["m0"])

	// BATCH_ACK_MESSAGE for m1: its bit relative to the pop's start offset.
	m1 := byBody["m1"]
	var ck, popTime, inv, rq int64
	fmt.Sscanf(m1.handle, "%d %d %d %d", &ck, &popTime, &inv, &rq)
	bit := m1.rec.QueueOffset - ck
	bits := make([]byte, bit/8+1)
	bits[bit/8] |= 1 << (bit % 8)
	body, _ := json.Marshal(protocol.BatchAckMessageRequestBody{BrokerName: c.brokerConfig().BrokerName, Acks: []protocol.BatchAck{{
		ConsumerGroup: group, Topic: topic, Retry: "0", StartOffset: ck, QueueID: m1.rec.QueueID,
		ReviveQueueID: int32(rq), PopTime: popTime, InvisibleTime: inv, BitSet: bits}}})
	if r := c.invoke(addr, protocol.BatchAckMessage, nil, body); r.Code != protocol.Success {
		t.Fatalf("batch ack: %d %s", r.Code, r.Remark)
	}

	// m2 stays invisible for a minute.
	m2 := byBody["m2"]
	ch := protocol.ChangeInvisibleTimeRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: m2.rec.QueueID,
		ExtraInfo: m2.handle, Offset: m2.rec.QueueOffset, InvisibleTime: 60_000}
	r := c.invoke(addr, protocol.ChangeMessageInvisibleTime, &ch, nil)
	var crh protocol.ChangeInvisibleTimeResponseHeader
	if err := crh.Decode(r.ExtFields); r.Code != protocol.Success || err != nil || crh.InvisibleTime != 60_000 {
		t.Fatalf("change invisible: %d %s %+v %v", r.Code, r.Remark, crh, err)
	}

	// m3 comes back after its 2 s, from the pop retry topic.
	var back []popMsg
	wait.For(t, 15*time.Second, "m3 redelivered", func() bool {
		a := c.popRaw(addr, popReq{group: group, topic: topic, queue: -1, invisible: 60_000, pollTime: 1000})
		back = append(back, a.msgs...)
		return len(back) > 0
	})
	if fmt.Sprint(popBodies(back)) != "[m3]" || back[0].rec.ReconsumeTimes != 1 ||
		back[0].rec.Topic != pop.RetryTopic(topic, group, false) {
		t.Fatalf("redelivered %v reconsume %d topic %s", popBodies(back), back[0].rec.ReconsumeTimes, back[0].rec.Topic)
	}
	// Everything of the first pop is resolved by now (m3's check point
	// was revived whole): only m3 went to the retry topic.
	if n := c.b.Store().MaxOffset(pop.RetryTopic(topic, group, false), 0); n != 1 {
		t.Fatalf("retry topic holds %d messages, want 1", n)
	}
	c.ackRaw(addr, group, back[0])

	// Errors come with Java's codes.
	bad := protocol.AckMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 7, ExtraInfo: m1.handle, Offset: 0}
	if r := c.invoke(addr, protocol.AckMessage, &bad, nil); r.Code != protocol.MessageIllegal {
		t.Fatalf("ack of queue 7: %d %s", r.Code, r.Remark)
	}
	bad.QueueID, bad.Offset = m1.rec.QueueID, 1000
	if r := c.invoke(addr, protocol.AckMessage, &bad, nil); r.Code != protocol.NoMessage {
		t.Fatalf("ack past the queue: %d %s", r.Code, r.Remark)
	}
	bad.Offset, bad.ExtraInfo = 0, "garbage"
	if r := c.invoke(addr, protocol.AckMessage, &bad, nil); r.Code != protocol.SystemError {
		t.Fatalf("ack with a bad handle: %d %s", r.Code, r.Remark)
	}
	if a := c.popRaw(addr, popReq{group: group, topic: topic, queue: -1, max: 33, invisible: 1000}); a.code != protocol.InvalidParameter {
		t.Fatalf("pop of 33: %d %s", a.code, a.remark)
	}
	if a := c.popRaw(addr, popReq{group: group, topic: "nope" + topic, queue: -1, invisible: 1000}); a.code != protocol.TopicNotExist {
		t.Fatalf("pop of a missing topic: %d %s", a.code, a.remark)
	}
}

// A pop on an empty queue is held for its pollTime and answered
// POLLING_TIMEOUT; a message sent meanwhile answers it at once; the tag
// filter applies.
func TestPopLongPolling(t *testing.T) {
	c := startCluster(t, popTune)
	addr := c.b.Addr()
	topic, group := uniq(t, "PopLP"), uniq(t, "PopG")
	c.createTopic(topic, 1)
	start := time.Now()
	a := c.popRaw(addr, popReq{group: group, topic: topic, queue: -1, invisible: 5000, pollTime: 300})
	if a.code != protocol.PollingTimeout || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("empty pop: %d %s after %v", a.code, a.remark, time.Since(start))
	}
	done := make(chan popAnswer, 1)
	go func() {
		done <- c.popRaw(addr, popReq{group: group, topic: topic, queue: 0, invisible: 5000, pollTime: 8000, exp: "TagB"})
	}()
	c.sendRaw(addr, topic, "TagA", "skipped")
	c.sendRaw(addr, topic, "TagB", "wanted")
	select {
	case a := <-done:
		if a.code != protocol.Success || fmt.Sprint(popBodies(a.msgs)) != "[wanted]" {
			t.Fatalf("held pop: %d %s %v", a.code, a.remark, popBodies(a.msgs))
		}
	case <-time.After(7 * time.Second):
		t.Fatal("the held pop was not woken by the arrival")
	}
}

// Orderly pops over remoting: the queue's next messages wait for the
// batch's acks; an unacked batch comes back in order with its count.
func TestPopOrderly(t *testing.T) {
	c := startCluster(t, popTune)
	addr := c.b.Addr()
	topic, group := uniq(t, "PopO"), uniq(t, "PopG")
	c.createTopic(topic, 1)
	c.sendRaw(addr, topic, "TagA", "o0", "o1", "o2", "o3")
	req := popReq{group: group, topic: topic, queue: 0, max: 2, invisible: 1000, order: true}
	var seen []string
	var b1 popAnswer
	wait.For(t, 5*time.Second, "first batch", func() bool {
		b1 = c.popRaw(addr, req)
		return len(b1.msgs) > 0
	})
	if b1.h.ReviveQid != pop.OrderReviveQueue || len(b1.msgs) != 2 {
		t.Fatalf("first batch %v reviveQid %d", popBodies(b1.msgs), b1.h.ReviveQid)
	}
	if a := c.popRaw(addr, req); a.code != protocol.PollingTimeout {
		t.Fatalf("pop while the batch is unacked: %d %v", a.code, popBodies(a.msgs))
	}
	// Not acked: after 1 s the same batch comes back, counted.
	var again popAnswer
	wait.For(t, 10*time.Second, "the batch again", func() bool {
		again = c.popRaw(addr, req)
		return len(again.msgs) > 0
	})
	if fmt.Sprint(popBodies(again.msgs)) != fmt.Sprint(popBodies(b1.msgs)) || !strings.Contains(again.h.OrderCountInfo, " 1") {
		t.Fatalf("again %v (first %v), orderCountInfo %q", popBodies(again.msgs), popBodies(b1.msgs), again.h.OrderCountInfo)
	}
	for _, m := range again.msgs {
		seen = append(seen, string(m.rec.Body))
		c.ackRaw(addr, group, m)
	}
	var b2 popAnswer
	wait.For(t, 5*time.Second, "second batch", func() bool {
		b2 = c.popRaw(addr, req)
		return len(b2.msgs) > 0
	})
	for _, m := range b2.msgs {
		seen = append(seen, string(m.rec.Body))
		c.ackRaw(addr, group, m)
	}
	if fmt.Sprint(seen) != "[o0 o1 o2 o3]" {
		t.Fatalf("orderly pops saw %v", seen)
	}
}

// After the group's retryMaxTimes deliveries an unacked message goes to
// %DLQ%group.
func TestPopDLQ(t *testing.T) {
	c := startCluster(t, popTune)
	addr := c.b.Addr()
	topic, group := uniq(t, "PopD"), uniq(t, "PopG")
	c.createTopic(topic, 1)
	gc := protocol.NewSubscriptionGroupConfig(group)
	gc.RetryMaxTimes = 2
	body, err := protocol.MarshalFastJSON(&gc)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.invoke(addr, protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
		t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
	c.sendRaw(addr, topic, "TagA", "dead")
	var deliveries []int32
	wait.For(t, 20*time.Second, "message in the DLQ", func() bool {
		a := c.popRaw(addr, popReq{group: group, topic: topic, queue: -1, invisible: 300, pollTime: 300})
		for _, m := range a.msgs {
			deliveries = append(deliveries, m.rec.ReconsumeTimes)
		}
		return c.b.Store().MaxOffset(meta.DLQTopic(group), 0) == 1
	})
	if fmt.Sprint(deliveries) != "[0 1 2]" {
		t.Fatalf("deliveries with reconsume times %v, want [0 1 2]", deliveries)
	}
	g, err := c.b.Store().GetMessage("", meta.DLQTopic(group), 0, 0, 1, nil)
	if err != nil || len(g.Messages) != 1 {
		t.Fatalf("DLQ read: %v", err)
	}
	defer g.Release()
	rec, _, err := message.DecodeRecord(g.Messages[0].Bytes, false)
	if err != nil || !bytes.Equal(rec.Body, []byte("dead")) || rec.ReconsumeTimes != 3 {
		t.Fatalf("DLQ message %q reconsume %d: %v", rec.Body, rec.ReconsumeTimes, err)
	}
}
