package processor_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func TestSendStored(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 2)
	props := message.EncodeProperties(map[string]string{"TAGS": "a", "KEYS": "k1", "WAIT": "false", "u": "v"})
	for i := range 3 {
		r := e.send(sendHeader("T", 1, props), "body")
		if r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
		var h protocol.SendMessageResponseHeader
		must(t, h.Decode(r.ExtFields))
		if h.QueueID != 1 || h.QueueOffset != int64(i) || len(h.MsgID) != message.OffsetMsgIDLenV4 {
			t.Fatalf("send %d: header %+v", i, h)
		}
		if r.ExtFields["MSG_REGION"] != "DefaultRegion" || r.ExtFields["TRACE_ON"] != "true" {
			t.Fatalf("ext fields %v", r.ExtFields)
		}
		// The msgId points at the record.
		_, off, err := message.ParseOffsetMsgID(h.MsgID)
		must(t, err)
		e.waitReadable(off)
		rec, buf, err := e.store.LookMessageByOffset(off)
		must(t, err)
		if string(rec.Body) != "body" || rec.QueueID != 1 {
			t.Fatalf("record at msgId: %+v", rec)
		}
		// CLUSTER added, WAIT not stored, the rest kept.
		got := message.ParseProperties(rec.Properties)
		buf.Release()
		if got["CLUSTER"] != e.cfg.BrokerClusterName || got["WAIT"] != "" || got["TAGS"] != "a" || got["u"] != "v" {
			t.Fatalf("stored properties %v", got)
		}
	}
}

func TestSendRefusals(t *testing.T) {
	e := newEnv(t, func(bc *config.BrokerConfig, _ *processor.Deps) { bc.MaxMessageSize = 1024 })
	e.createTopic("T", 2)
	cases := []struct {
		name   string
		h      *protocol.SendMessageRequestHeader
		body   string
		code   int32
		remark string
	}{
		{"bad name", sendHeader("a b", 0, ""), "x", protocol.SystemError, ""},
		{"forbidden topic", sendHeader(meta.ScheduleTopic, 0, ""), "x", protocol.NoPermission, "forbidden"},
		{"queue out of range", sendHeader("T", 5, ""), "x", protocol.SystemError, "queueId[5] is illegal"},
		{"no template", func() *protocol.SendMessageRequestHeader {
			h := sendHeader("Unknown", 0, "")
			h.DefaultTopic = "NoSuchTemplate"
			return h
		}(), "x", protocol.TopicNotExist, "not exist"},
		{"transaction", sendHeader("T", 0, "TRAN_MSG\x01true\x02PGROUP\x01pg"), "x", protocol.NoPermission, "transaction"},
		{"too large", sendHeader("T", 0, ""), strings.Repeat("x", 1025), protocol.MessageIllegal, "exceeds maxMessageSize 1024"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.send(c.h, c.body)
			if r.Code != c.code || !strings.Contains(r.Remark, c.remark) {
				t.Fatalf("got %d %q, want %d containing %q", r.Code, r.Remark, c.code, c.remark)
			}
			if r.ExtFields["MSG_REGION"] == "" || r.ExtFields["TRACE_ON"] == "" {
				t.Fatalf("ext fields missing: %v", r.ExtFields)
			}
		})
	}
}

func TestSendAutoCreateAndRandomQueue(t *testing.T) {
	e := newEnv(t, nil)
	seen := map[int32]bool{}
	for range 64 {
		r := e.send(sendHeader("NewTopic", -1, ""), "x")
		if r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
		var h protocol.SendMessageResponseHeader
		must(t, h.Decode(r.ExtFields))
		seen[h.QueueID] = true
	}
	tc, ok := e.topics.Get("NewTopic")
	if !ok || tc.WriteQueueNums != 4 || tc.Perm != meta.PermReadWrite {
		t.Fatalf("auto-created topic %+v %v", tc, ok)
	}
	if len(seen) < 2 {
		t.Fatalf("negative queue id always picked the same queue: %v", seen)
	}
}

func TestSendRetryTopicToDLQ(t *testing.T) {
	e := newEnv(t, nil)
	h := sendHeader("%RETRY%g1", 0, "")
	h.ReconsumeTimes = protocol.Some[int32](1)
	h.MaxReconsumeTimes = protocol.Some[int32](3)
	if r := e.send(h, "retry"); r.Code != protocol.Success {
		t.Fatalf("retry send: %d %s", r.Code, r.Remark)
	}
	if !e.topics.Contains("%RETRY%g1") {
		t.Fatal("retry topic not created")
	}
	h.ReconsumeTimes = protocol.Some[int32](3)
	h.Properties = "DELAY\x013"
	r := e.send(h, "dead")
	if r.Code != protocol.Success {
		t.Fatalf("dlq send: %d %s", r.Code, r.Remark)
	}
	var rh protocol.SendMessageResponseHeader
	must(t, rh.Decode(r.ExtFields))
	_, off, err := message.ParseOffsetMsgID(rh.MsgID)
	must(t, err)
	e.waitReadable(off)
	rec, buf, err := e.store.LookMessageByOffset(off)
	must(t, err)
	defer buf.Release()
	if rec.Topic != "%DLQ%g1" || string(rec.Body) != "dead" {
		t.Fatalf("dead letter stored in %q: %q", rec.Topic, rec.Body)
	}
	if _, delayed := message.Property(rec.Properties, "DELAY"); delayed {
		t.Fatal("dead letter kept its delay level")
	}
}

func TestSendBatch(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	var body []byte
	for i := range 3 {
		body = message.AppendBatchItem(body, int32(i), []byte{'m', byte('0' + i)}, "TAGS\x01b")
	}
	h := sendHeader("T", 0, "")
	h.Batch = protocol.Some(true)
	ext := map[string]string{}
	h.AppendExtV2(ext)
	r := e.call(protocol.SendBatchMessage, ext, body)
	if r.Code != protocol.Success {
		t.Fatalf("batch: %d %s", r.Code, r.Remark)
	}
	var rh protocol.SendMessageResponseHeader
	must(t, rh.Decode(r.ExtFields))
	if ids := strings.Split(rh.MsgID, ","); len(ids) != 3 || rh.QueueOffset != 0 {
		t.Fatalf("batch header %+v", rh)
	}
	e.waitMaxOffset("T", 0, 3)
	// A malformed batch body is MESSAGE_ILLEGAL, not a crash.
	r = e.call(protocol.SendBatchMessage, ext, []byte{0, 0, 0, 9, 1})
	if r.Code != protocol.MessageIllegal {
		t.Fatalf("bad batch: %d %s", r.Code, r.Remark)
	}
}

// TestBadHeaders: undecodable headers and bodies get SYSTEM_ERROR and the
// server stays up.
func TestBadHeaders(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		code int32
		ext  map[string]string
		body []byte
	}{
		{protocol.SendMessage, map[string]string{"topic": "T", "queueId": "x"}, []byte("b")},
		{protocol.SendMessageV2, map[string]string{"b": "T", "g": "not-a-time"}, []byte("b")},
		{protocol.PullMessage, map[string]string{"topic": "T", "queueOffset": "1.5"}, nil},
		{protocol.QueryConsumerOffset, map[string]string{"queueId": "zz"}, nil},
		{protocol.UpdateConsumerOffset, map[string]string{"commitOffset": "--"}, nil},
		{protocol.GetMaxOffset, map[string]string{"queueId": "99999999999"}, nil},
		{protocol.HeartBeat, nil, []byte("{not json")},
		{protocol.LockBatchMQ, nil, []byte("[1,2")},
		{protocol.UpdateAndCreateTopic, map[string]string{"readQueueNums": "many"}, nil},
	}
	for _, c := range cases {
		r := e.call(c.code, c.ext, c.body)
		if r.Code != protocol.SystemError || r.Remark == "" {
			t.Errorf("code %d with %v: got %d %q, want SYSTEM_ERROR with a remark", c.code, c.ext, r.Code, r.Remark)
		}
	}
	if r := e.call(9999, nil, nil); r.Code != protocol.RequestCodeNotSupported || r.Remark != " request type 9999 not supported" {
		t.Fatalf("unknown code: %d %q", r.Code, r.Remark)
	}
	// Still serving.
	e.createTopic("T", 1)
	if r := e.send(sendHeader("T", 0, ""), "x"); r.Code != protocol.Success {
		t.Fatalf("send after bad requests: %d %s", r.Code, r.Remark)
	}
}

// countingHook records what the send hooks saw.
type countingHook struct {
	before, after []string
	codes         []int32
}

func (c *countingHook) BeforeSend(_ *remoting.Conn, h *protocol.SendMessageRequestHeader) {
	c.before = append(c.before, h.Topic)
}

func (c *countingHook) AfterSend(_ *remoting.Conn, h *protocol.SendMessageRequestHeader, resp *remoting.Command) {
	c.after = append(c.after, h.Topic)
	c.codes = append(c.codes, resp.Code)
}

func TestSendHooks(t *testing.T) {
	hook := &countingHook{}
	e := newEnv(t, func(_ *config.BrokerConfig, d *processor.Deps) { d.SendHooks = []processor.SendHook{hook} })
	e.createTopic("T", 1)
	e.send(sendHeader("T", 0, ""), "ok")
	e.send(sendHeader("bad name", 0, ""), "refused")
	// The send family has two workers but one connection's requests are
	// answered before the next is sent: no race on the hook's slices.
	if strings.Join(hook.before, ",") != "T,bad name" || strings.Join(hook.after, ",") != "T,bad name" {
		t.Fatalf("hooks saw %v / %v", hook.before, hook.after)
	}
	if hook.codes[0] != protocol.Success || hook.codes[1] != protocol.SystemError {
		t.Fatalf("after-hook codes %v", hook.codes)
	}
}

// TestSendRefusedBeforeStartAcceptTime: startAcceptSendRequestTimeStamp
// (Java's preSend check) refuses sends until that time.
func TestSendRefusedBeforeStartAcceptTime(t *testing.T) {
	until := time.Now().Add(time.Hour).UnixMilli()
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.StartAcceptSendRequestTimeStamp = until })
	e.createTopic("SA", 1)
	r := e.send(sendHeader("SA", 0, "TAGS\x01a"), "m")
	if want := "broker unable to service, until " + time.UnixMilli(until).Format("2006-01-02 15:04:05,000"); r.Code != protocol.SystemError || r.Remark != want {
		t.Fatalf("send before the start time: %d %q, want %q", r.Code, r.Remark, want)
	}
	if e.store.MaxOffset("SA", 0) != 0 {
		t.Fatal("a refused send was stored")
	}
}

// TestSendRepliesReusedOverTheWire: refused and stored sends alternate on
// one connection, whose replies come from the pool: each answer carries
// only its own code, remark and header.
func TestSendRepliesReusedOverTheWire(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("TR", 2)
	for i := range 40 {
		if i%2 == 0 {
			r := e.send(sendHeader("TR", 9, ""), "m") // queue 9 of 2: refused
			if r.Code != protocol.SystemError || r.Remark == "" || r.ExtField("msgId") != "" || r.ExtField("queueOffset") != "" {
				t.Fatalf("round %d: refused send answered %d %q %v", i, r.Code, r.Remark, r.ExtFields)
			}
			continue
		}
		r := e.send(sendHeader("TR", 1, ""), "m")
		if r.Code != protocol.Success || r.Remark != "" || r.ExtField("msgId") == "" ||
			r.ExtField("queueOffset") != strconv.Itoa(i/2) || r.ExtField("queueId") != "1" {
			t.Fatalf("round %d: stored send answered %d %q %v", i, r.Code, r.Remark, r.ExtFields)
		}
	}
}
