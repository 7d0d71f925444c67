package processor_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// callVersion invokes code with a request version (MQVersion ordinal).
func (e *env) callVersion(code int32, version int32, ext map[string]string) *remoting.Command {
	e.t.Helper()
	req := remoting.NewRequest(code, ext, nil)
	req.Version = version
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := e.rc.Invoke(ctx, e.addr, req)
	if err != nil {
		e.t.Fatalf("invoke %d: %v", code, err)
	}
	return resp
}

// storeFailed stores a message that was consumed reconsumeTimes times and
// returns its CommitLog offset.
func (e *env) storeFailed(topic string, reconsumeTimes int32) int64 {
	e.t.Helper()
	h := sendHeader(topic, 0, "TAGS\x01a")
	h.ReconsumeTimes = protocol.Some(reconsumeTimes)
	r := e.send(h, "failed")
	if r.Code != protocol.Success {
		e.t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	var sh protocol.SendMessageResponseHeader
	must(e.t, sh.Decode(r.ExtFields))
	_, off, err := message.ParseOffsetMsgID(sh.MsgID)
	must(e.t, err)
	e.waitReadable(off) // a consumer sends back only what it has pulled
	return off
}

// TestSendBackRules: the CONSUMER_SEND_MSG_BACK decisions of issue 5 /
// spec §10 one by one.
func TestSendBackRules(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)

	// Max reconsume times from the header only from V3_4_9 (121) on.
	off := e.storeFailed("T", 2)
	h := &protocol.ConsumerSendMsgBackRequestHeader{Offset: off, Group: "cg", MaxReconsumeTimes: protocol.Some[int32](2)}
	if r := e.callVersion(protocol.ConsumerSendMsgBack, 120, protocol.Ext(h)); r.Code != protocol.Success {
		t.Fatalf("old client: %d %s", r.Code, r.Remark)
	}
	// Group default 16 applies: a retry with level 3 + 2 = 5 (queue 4).
	e.waitMaxOffset(message.ScheduleTopic, 4, 1)
	if e.topics.Contains(meta.DLQTopic("cg")) {
		t.Fatal("old client's max reconsume times honoured")
	}
	if r := e.callVersion(protocol.ConsumerSendMsgBack, 121, protocol.Ext(h)); r.Code != protocol.Success {
		t.Fatalf("new client: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset(meta.DLQTopic("cg"), 0, 1)
	dlq, _ := e.topics.Get(meta.DLQTopic("cg"))
	if dlq.Perm != meta.PermReadWrite || dlq.WriteQueueNums != 1 {
		t.Fatalf("DLQ topic %+v: want one read/write queue", dlq)
	}
	res, err := e.store.GetMessage("x", meta.DLQTopic("cg"), 0, 0, 1, nil)
	must(t, err)
	rec, _, err := message.DecodeRecord(res.Messages[0].Bytes, false)
	res.Release()
	must(t, err)
	if rec.ReconsumeTimes != 3 {
		t.Fatalf("dead letter reconsume times %d, want 3", rec.ReconsumeTimes)
	}
	if v, _ := message.Property(rec.Properties, message.PropertyOriginMessageID); v == "" {
		t.Fatal("dead letter without ORIGIN_MESSAGE_ID")
	}

	// An explicit level is kept.
	h = &protocol.ConsumerSendMsgBackRequestHeader{Offset: e.storeFailed("T", 0), Group: "cg", DelayLevel: 7}
	if r := e.call(protocol.ConsumerSendMsgBack, protocol.Ext(h), nil); r.Code != protocol.Success {
		t.Fatalf("level 7: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset(message.ScheduleTopic, 6, 1)
}

func TestSendBackRefusals(t *testing.T) {
	t.Run("group without retries", func(t *testing.T) {
		e := newEnv(t, nil)
		e.createTopic("T", 1)
		g := protocol.NewSubscriptionGroupConfig("noretry")
		g.RetryQueueNums = 0
		must(t, e.groups.Put(g))
		h := &protocol.ConsumerSendMsgBackRequestHeader{Offset: e.storeFailed("T", 0), Group: "noretry"}
		if r := e.call(protocol.ConsumerSendMsgBack, protocol.Ext(h), nil); r.Code != protocol.Success {
			t.Fatalf("%d %s", r.Code, r.Remark)
		}
		if e.topics.Contains(meta.RetryTopic("noretry")) || e.store.MaxOffset(message.ScheduleTopic, 2) != 0 {
			t.Fatal("message not dropped")
		}
	})
	t.Run("unknown group", func(t *testing.T) {
		e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.AutoCreateSubscriptionGroup = false })
		e.createTopic("T", 1)
		h := &protocol.ConsumerSendMsgBackRequestHeader{Offset: e.storeFailed("T", 0), Group: "nobody"}
		if r := e.call(protocol.ConsumerSendMsgBack, protocol.Ext(h), nil); r.Code != protocol.SubscriptionGroupNotExist {
			t.Fatalf("%d %s", r.Code, r.Remark)
		}
	})
	t.Run("read-only broker", func(t *testing.T) {
		e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.BrokerPermission = meta.PermRead })
		h := &protocol.ConsumerSendMsgBackRequestHeader{Offset: 0, Group: "cg"}
		if r := e.call(protocol.ConsumerSendMsgBack, protocol.Ext(h), nil); r.Code != protocol.NoPermission {
			t.Fatalf("%d %s", r.Code, r.Remark)
		}
	})
}

// TestSendToRetryTopicPastMax: a plain send to %RETRY%group whose
// reconsume times reached the max goes to the DLQ (handleRetryAndDLQ).
func TestSendToRetryTopicPastMax(t *testing.T) {
	e := newEnv(t, nil)
	h := sendHeader(meta.RetryTopic("cg"), 0, "TAGS\x01a\x02DELAY\x013")
	h.ReconsumeTimes = protocol.Some[int32](16)
	if r := e.send(h, "x"); r.Code != protocol.Success {
		t.Fatalf("%d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset(meta.DLQTopic("cg"), 0, 1)
	h.ReconsumeTimes = protocol.Some[int32](3)
	if r := e.send(h, "y"); r.Code != protocol.Success {
		t.Fatalf("%d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset(message.ScheduleTopic, 2, 1) // below the max: a delayed retry
}

// TestSendHoldsTimerMessages: the send path parks timer messages in
// rmq_sys_wheel_timer queue 0 and answers with the queue asked for;
// timerWheelEnable=false and delays beyond timerMaxDelaySec are refused.
func TestSendHoldsTimerMessages(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.TimerMaxDelaySec = 3600 })
	e.createTopic("T", 4)
	deliver := time.Now().Add(time.Minute).UnixMilli()
	r := e.send(sendHeader("T", 3, "TAGS\x01a\x02TIMER_DELIVER_MS\x01"+strconv.FormatInt(deliver, 10)), "later")
	if r.Code != protocol.Success || r.ExtFields["queueId"] != "3" {
		t.Fatalf("%d %s %v", r.Code, r.Remark, r.ExtFields)
	}
	e.waitMaxOffset(timer.Topic, 0, 1)
	if e.store.MaxOffset("T", 3) != 0 {
		t.Fatal("timer message stored in its topic at once")
	}
	if r := e.send(sendHeader("T", 3, "TIMER_DELAY_SEC\x017200"), "too far"); r.Code != protocol.MessageIllegal {
		t.Fatalf("beyond timerMaxDelaySec: %d %s", r.Code, r.Remark)
	}

	off := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.TimerWheelEnable = false })
	if r := off.send(sendHeader("T", 0, "TIMER_DELAY_SEC\x0110"), "x"); r.Code != protocol.MessageIllegal {
		t.Fatalf("timer disabled: %d %s", r.Code, r.Remark)
	}
}
