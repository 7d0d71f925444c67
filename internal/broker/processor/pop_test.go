package processor_test

import (
	"bytes"
	"context"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// newPopEnv is newEnv with a pop service: a second processor serves on a
// server of its own, which e.addr then names.
func newPopEnv(t *testing.T, tune func(*config.BrokerConfig)) *env {
	t.Helper()
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) {
		if tune != nil {
			tune(c)
		}
	})
	svc, err := pop.New(pop.Config{
		Store: e.store, Topics: e.topics, Groups: e.groups, Offsets: e.offsets, BrokerName: "b", Cluster: "c",
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), ReviveQueueNum: 2, ReviveInterval: time.Hour,
		Notify: func(topic string, q int32, tags int64) { e.holder.Notify(topic, q, 1, tags) },
	})
	must(t, err)
	e.store.AddArrivalListener(func(topic string, q int32, _, tags, _ int64) { svc.Arrived(topic, q, tags) })
	p, err := processor.New(processor.Deps{Config: &e.cfg, Store: e.store, Topics: e.topics, Groups: e.groups,
		Offsets: e.offsets, Clients: e.clients, Holder: e.holder, Pop: svc})
	must(t, err)
	srv := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})
	p.Register(srv, processor.Families{})
	must(t, srv.Start())
	e.addr = srv.Addr().String()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = svc.Close()
	})
	return e
}

func popExt(group, topic string, q int32, exp, expType string) map[string]string {
	h := protocol.PopMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, MaxMsgNums: 32,
		InvisibleTime: 60_000, Exp: exp, ExpType: expType}
	return protocol.Ext(&h)
}

// A broker without a pop service (a slave) answers the POP codes
// SERVICE_NOT_AVAILABLE.
func TestPopWithoutService(t *testing.T) {
	e := newEnv(t, nil)
	for _, code := range []int32{protocol.PopMessage, protocol.AckMessage, protocol.BatchAckMessage, protocol.ChangeMessageInvisibleTime,
		protocol.Notification, protocol.PollingInfo} {
		if r := e.call(code, popExt("g", "t", 0, "", ""), nil); r.Code != protocol.ServiceNotAvailable {
			t.Fatalf("code %d: %d %s", code, r.Code, r.Remark)
		}
	}
}

// POP_MESSAGE's checks answer Java's codes, and its SQL92 expression
// filters through the pull path's filter.
func TestPopChecksAndSQLFilter(t *testing.T) {
	e := newPopEnv(t, func(c *config.BrokerConfig) { c.EnablePropertyFilter = true })
	e.createTopic("PT", 1)
	for _, a := range []string{"1", "2", "1", "2"} {
		props := message.SetProperty(message.SetProperty("", message.PropertyTags, "T"), "a", a)
		if r := e.send(sendHeader("PT", 0, props), "a="+a); r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	e.waitMaxOffset("PT", 0, 4)

	r := e.call(protocol.PopMessage, popExt("g", "PT", 0, "a = 2", "SQL92"), nil)
	if r.Code != protocol.Success {
		t.Fatalf("pop: %d %s", r.Code, r.Remark)
	}
	var n int
	for b := r.Body; len(b) > 0; n++ {
		rec, size, err := message.DecodeRecord(b, true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec.Body, []byte("a=2")) {
			t.Fatalf("popped %q through a = 2", rec.Body)
		}
		b = b[size:]
	}
	var h protocol.PopMessageResponseHeader
	must(t, h.Decode(r.ExtFields))
	if n != 2 || h.MsgOffsetInfo != "0 0 1,3" || h.StartOffsetInfo != "0 0 0" {
		t.Fatalf("popped %d, header %+v", n, h)
	}

	bad := []struct {
		name string
		ext  map[string]string
		code int32
	}{
		{"33 messages", func() map[string]string { m := popExt("g", "PT", 0, "", ""); m["maxMsgNums"] = "33"; return m }(), protocol.InvalidParameter},
		{"queue 5", popExt("g", "PT", 5, "", ""), protocol.InvalidParameter},
		{"no topic", popExt("g", "nope", 0, "", ""), protocol.TopicNotExist},
		{"bad SQL", popExt("g", "PT", 0, "a ===", "SQL92"), protocol.SubscriptionParseFailed},
		{"late", func() map[string]string { m := popExt("g", "PT", 0, "", ""); m["bornTime"] = "1000"; return m }(), protocol.PollingTimeout},
		{"bad header", map[string]string{"queueId": "x"}, protocol.SystemError},
	}
	for _, c := range bad {
		if r := e.call(protocol.PopMessage, c.ext, nil); r.Code != c.code {
			t.Errorf("%s: %d %s, want %d", c.name, r.Code, r.Remark, c.code)
		}
	}
	if r := e.call(protocol.BatchAckMessage, nil, []byte("{")); r.Code != protocol.SystemError {
		t.Fatalf("bad batch ack body: %d %s", r.Code, r.Remark)
	}
	if r := e.call(protocol.BatchAckMessage, nil, nil); r.Code != protocol.NoMessage {
		t.Fatalf("empty batch ack: %d %s", r.Code, r.Remark)
	}
}

// Java's pop needs the timer wheel (timerWheelEnable): without it POP is
// refused SYSTEM_ERROR.
func TestPopNeedsTimerWheel(t *testing.T) {
	e := newPopEnv(t, func(c *config.BrokerConfig) { c.TimerWheelEnable = false })
	e.createTopic("PT", 1)
	if r := e.call(protocol.PopMessage, popExt("g", "PT", 0, "", ""), nil); r.Code != protocol.SystemError {
		t.Fatalf("timerWheelEnable=false: %d %s", r.Code, r.Remark)
	}
}

// A held pop is woken by an arrival its tag filter may match, not by
// another: a pop of TagB stays held through a TagA arrival (a pop of "*"
// on the same queue, woken by the same notification, is the barrier)
// and answers the TagB message that follows.
func TestPopHeldWakesOnMatchingTag(t *testing.T) {
	e := newPopEnv(t, nil)
	e.createTopic("PW", 1)
	hold := func(group, exp string) <-chan *remoting.Command {
		ext := popExt(group, "PW", 0, exp, "TAG")
		ext["pollTime"] = "20000"
		ext["bornTime"] = strconv.FormatInt(time.Now().UnixMilli(), 10)
		ch := make(chan *remoting.Command, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := e.rc.Invoke(ctx, e.addr, remoting.NewRequest(protocol.PopMessage, ext, nil))
			if err != nil {
				resp = remoting.NewResponse(-1, err.Error())
			}
			ch <- resp
		}()
		return ch
	}
	tagB := hold("gB", "TagB")
	wait.For(t, 5*time.Second, "the TagB pop held", func() bool { return e.holder.Len() == 1 })
	barrier := hold("gAll", "*")
	wait.For(t, 5*time.Second, "both pops held", func() bool { return e.holder.Len() == 2 })

	props := message.SetProperty("", message.PropertyTags, "TagA")
	if r := e.send(sendHeader("PW", 0, props), "a"); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	if r := <-barrier; r.Code != protocol.Success {
		t.Fatalf("barrier pop: %d %s", r.Code, r.Remark)
	}
	if n := e.holder.Len(); n != 1 {
		t.Fatalf("%d pops held after the TagA arrival, want the TagB one", n)
	}
	props = message.SetProperty("", message.PropertyTags, "TagB")
	if r := e.send(sendHeader("PW", 0, props), "b"); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	r := <-tagB
	rec, _, err := message.DecodeRecord(r.Body, false)
	if r.Code != protocol.Success || err != nil || string(rec.Body) != "b" {
		t.Fatalf("TagB pop: %d %s %q %v", r.Code, r.Remark, rec.Body, err)
	}
}
