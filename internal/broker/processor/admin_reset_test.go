package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func resetHeader(topic, group string, timestamp int64) map[string]string {
	return protocol.Ext(&protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: timestamp, IsForce: true})
}

// TestResetOffsetServerSide: the broker records the reset; the group's
// query answers it, a stale commit is ignored, the next pull tells the
// consumer (PULL_OFFSET_MOVED to the new offset) and commits work again.
func TestResetOffsetServerSide(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("R", 1)
	for range 3 {
		if r := e.send(sendHeader("R", 0, "TAGS\x01a"), "m"); r.Code != protocol.Success {
			t.Fatal(r.Remark)
		}
	}
	e.waitMaxOffset("R", 0, 3)
	gc := protocol.NewSubscriptionGroupConfig("rg")
	b, err := protocol.MarshalFastJSON(&gc)
	must(t, err)
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, b); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	commitOffset(t, e, "rg", "R", 0, 3)

	r := e.call(protocol.InvokeBrokerToResetOffset, resetHeader("R", "rg", 0), nil)
	var body protocol.ResetOffsetBody
	must(t, protocol.UnmarshalFastJSON(r.Body, &body))
	if got := body.OffsetTable[protocol.MessageQueue{Topic: "R", BrokerName: e.cfg.BrokerName, QueueID: 0}]; r.Code != protocol.Success || got != 0 {
		t.Fatalf("reset by time 0: %d %q %s", r.Code, r.Remark, r.Body)
	}
	query := func() int64 {
		t.Helper()
		r := e.call(protocol.QueryConsumerOffset, protocol.Ext(&protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: "rg", Topic: "R", QueueID: 0}), nil)
		var h protocol.OffsetResponseHeader
		must(t, h.Decode(r.ExtFields))
		return h.Offset
	}
	if got := query(); got != 0 {
		t.Errorf("query after reset %d, want 0", got)
	}
	stale := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "rg", Topic: "R", QueueID: 0, CommitOffset: 3}
	if r := e.call(protocol.UpdateConsumerOffset, protocol.Ext(&stale), nil); r.Code != protocol.Success || r.Remark != "Offset has been previously reset" {
		t.Errorf("stale commit: %d %q", r.Code, r.Remark)
	}
	if got := query(); got != 0 {
		t.Errorf("a stale commit overwrote the reset: %d", got)
	}
	r = e.call(protocol.PullMessage, protocol.Ext(pullHeader("rg", "R", 0, 3, "*")), nil)
	if h := pullHeaderOf(t, r); r.Code != protocol.PullOffsetMoved || h.NextBeginOffset != 0 || h.MaxOffset != 3 {
		t.Fatalf("first pull after the reset: %d %+v", r.Code, h)
	}
	if r := e.call(protocol.PullMessage, protocol.Ext(pullHeader("rg", "R", 0, 0, "*")), nil); r.Code != protocol.Success {
		t.Fatalf("pull from the reset offset: %d %s", r.Code, r.Remark)
	}
	commitOffset(t, e, "rg", "R", 0, 2)
	if got := query(); got != 2 {
		t.Errorf("commit after the consumer learnt the reset: %d, want 2", got)
	}

	// A negative timestamp resets to the end; refusals as Java's.
	r = e.call(protocol.InvokeBrokerToResetOffset, resetHeader("R", "rg", -1), nil)
	body = protocol.ResetOffsetBody{}
	must(t, protocol.UnmarshalFastJSON(r.Body, &body))
	if got := body.OffsetTable[protocol.MessageQueue{Topic: "R", BrokerName: e.cfg.BrokerName, QueueID: 0}]; got != 3 {
		t.Errorf("reset to the end: %s", r.Body)
	}
	for _, c := range []struct {
		ext  map[string]string
		code int32
	}{
		{resetHeader("Nope", "rg", 0), protocol.TopicNotExist},
		{resetHeader("R", "nogroup", 0), protocol.SubscriptionGroupNotExist},
		{map[string]string{"topic": "R"}, protocol.SystemError},
	} {
		if r := e.call(protocol.InvokeBrokerToResetOffset, c.ext, nil); r.Code != c.code {
			t.Errorf("%v: %d %q, want %d", c.ext, r.Code, r.Remark, c.code)
		}
	}
	one := protocol.Ext(&protocol.ResetOffsetRequestHeader{Topic: "R", Group: "rg", IsForce: true,
		QueueID: protocol.Some[int32](0), Offset: protocol.Some[int64](9)})
	if r := e.call(protocol.InvokeBrokerToResetOffset, one, nil); r.Code != protocol.SystemError || r.Remark != "Target offset 9 not in consume queue range [0-3]" {
		t.Errorf("offset out of range: %d %q", r.Code, r.Remark)
	}
}

// TestResetOffsetInClients: with useServerSideResetOffset=false the broker
// sends RESET_CONSUMER_CLIENT_OFFSET to the group's online consumers.
func TestResetOffsetInClients(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.UseServerSideResetOffset = false })
	e.createTopic("T", 1)
	for range 2 {
		if r := e.send(sendHeader("T", 0, "TAGS\x01a"), "m"); r.Code != protocol.Success {
			t.Fatal(r.Remark)
		}
	}
	e.waitMaxOffset("T", 0, 2)
	commitOffset(t, e, "cg", "T", 0, 2)
	if r := e.call(protocol.InvokeBrokerToResetOffset, resetHeader("T", "cg", 0), nil); r.Code != protocol.ConsumerNotOnline {
		t.Fatalf("no consumer online: %d %q", r.Code, r.Remark)
	}
	told := make(chan protocol.ResetOffsetBody, 1)
	consumer := remoting.NewClient(remoting.ClientConfig{})
	defer consumer.Close()
	consumer.Handle(protocol.ResetConsumerClientOffset, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		var b protocol.ResetOffsetBody
		if err := protocol.UnmarshalFastJSON(req.Body, &b); err == nil {
			told <- b
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hb, err := consumer.Invoke(ctx, e.addr, remoting.NewRequest(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T"))); err != nil || hb.Code != protocol.Success {
		t.Fatalf("heartbeat: %v %v", err, hb)
	}
	if r := e.call(protocol.InvokeBrokerToResetOffset, resetHeader("T", "cg", 0), nil); r.Code != protocol.Success {
		t.Fatalf("reset: %d %q", r.Code, r.Remark)
	}
	select {
	case b := <-told:
		if got := b.OffsetTable[protocol.MessageQueue{Topic: "T", BrokerName: e.cfg.BrokerName, QueueID: 0}]; got != 0 {
			t.Errorf("consumer told %v", b.OffsetTable)
		}
	case <-ctx.Done():
		t.Fatal("the consumer was not told")
	}
	if off, _ := e.offsets.Query("cg", "T", 0); off != 2 {
		t.Errorf("the 4.x way leaves the broker's offset to the consumer's next commit; it is %d", off)
	}
}
