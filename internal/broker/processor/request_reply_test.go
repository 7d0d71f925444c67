package processor_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

const replyTopic = config.DefaultBrokerClusterName + "_REPLY_TOPIC"

// requester is a producer connection that registered clientID by
// heartbeat and answers PUSH_REPLY_MESSAGE_TO_CLIENT with code.
type requester struct {
	rc *remoting.Client

	mu     sync.Mutex
	code   int32
	pushes []*remoting.Command
}

func newRequester(t *testing.T, e *env, clientID string) *requester {
	t.Helper()
	return newRequesterTB(t, e, clientID)
}

func newRequesterTB(t testing.TB, e *env, clientID string) *requester {
	t.Helper()
	r := &requester{rc: remoting.NewClient(remoting.ClientConfig{}), code: protocol.Success}
	t.Cleanup(func() { _ = r.rc.Close() })
	r.rc.Handle(protocol.PushReplyMessageToClient, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.pushes = append(r.pushes, req)
		return remoting.NewResponse(r.code, "")
	})
	hb, err := protocol.MarshalFastJSON(&protocol.HeartbeatData{ClientID: clientID,
		ProducerDataSet: []protocol.ProducerData{{GroupName: "requester"}}})
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := r.rc.Invoke(ctx, e.addr, remoting.NewRequest(protocol.HeartBeat, nil, hb))
	must(t, err)
	if resp.Code != protocol.Success {
		t.Fatalf("heartbeat: %d %s", resp.Code, resp.Remark)
	}
	return r
}

func (r *requester) received() []*remoting.Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*remoting.Command(nil), r.pushes...)
}

// replyProps are the properties MessageUtil.createReplyMessage sets.
func replyProps(to, correlation string) string {
	b := message.AppendProperty(nil, message.PropertyMessageType, message.MessageTypeReply)
	b = message.AppendProperty(b, message.PropertyCorrelationID, correlation)
	b = message.AppendProperty(b, message.PropertyMessageReplyToClient, to)
	b = message.AppendProperty(b, message.PropertyMessageTTL, "3")
	return string(b)
}

func sendReplyV2(e *env, props, body string) *remoting.Command {
	e.t.Helper()
	h := sendHeader(replyTopic, -1, props)
	return e.call(protocol.SendReplyMessageV2, protocol.Ext(h.V2()), []byte(body))
}

// TestSendReplyPushesAndStores: the reply reaches the requester's
// connection as PUSH_REPLY_MESSAGE_TO_CLIENT with Java's header, and is
// stored in the reply topic (storeReplyMessageEnable, the default).
func TestSendReplyPushesAndStores(t *testing.T) {
	e := newEnv(t, nil)
	req := newRequester(t, e, "requester-1")

	resp := sendReplyV2(e, replyProps("requester-1", "corr-1"), "pong")
	if resp.Code != protocol.Success {
		t.Fatalf("send reply: %d %s", resp.Code, resp.Remark)
	}
	if id := resp.ExtField("msgId"); id == "" || id == "0" {
		t.Fatalf("stored reply answered msgId %q", id)
	}
	if resp.ExtField(message.PropertyMsgRegion) == "" {
		t.Fatalf("no MSG_REGION: %v", resp.Ext())
	}
	pushes := req.received()
	if len(pushes) != 1 {
		t.Fatalf("%d pushes, want 1", len(pushes))
	}
	var ph protocol.ReplyMessageRequestHeader
	must(t, ph.Decode(pushes[0].Ext()))
	if ph.Topic != replyTopic || ph.ProducerGroup != "pg" || string(pushes[0].Body) != "pong" ||
		ph.StoreHost != "127.0.0.1:10911" || !strings.HasPrefix(ph.BornHost, "127.0.0.1:") || ph.StoreTimestamp == 0 {
		t.Fatalf("push header %+v body %q", ph, pushes[0].Body)
	}
	if v, _ := message.Property(ph.Properties, message.PropertyCorrelationID); v != "corr-1" {
		t.Fatalf("CORRELATION_ID %q in %q", v, ph.Properties)
	}
	if v, _ := message.Property(ph.Properties, message.PropertyPushReplyTime); v == "" {
		t.Fatalf("no PUSH_REPLY_TIME in %q", ph.Properties)
	}
	e.waitMaxOffset(replyTopic, 0, 1)
}

// TestSendReplyWithoutStore: storeReplyMessageEnable=false pushes only;
// the answer carries Java's placeholder msgId "0".
func TestSendReplyWithoutStore(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.StoreReplyMessageEnable = false })
	req := newRequester(t, e, "requester-1")
	h := sendHeader(replyTopic, 0, replyProps("requester-1", "corr-2"))
	resp := e.call(protocol.SendReplyMessage, protocol.Ext(h), []byte("pong"))
	if resp.Code != protocol.Success || resp.ExtField("msgId") != "0" || resp.ExtField("queueOffset") != "0" {
		t.Fatalf("send reply: %d %s %v", resp.Code, resp.Remark, resp.Ext())
	}
	if n := len(req.received()); n != 1 {
		t.Fatalf("%d pushes", n)
	}
	if m := e.store.MaxOffset(replyTopic, 0); m != 0 {
		t.Fatalf("reply stored (max offset %d) with storeReplyMessageEnable=false", m)
	}
}

// TestSendReplyFailures: each way a reply cannot be delivered, or a
// request is half built, gets SYSTEM_ERROR with Java's remark at once.
func TestSendReplyFailures(t *testing.T) {
	e := newEnv(t, nil)
	refusing := newRequester(t, e, "refusing")
	refusing.mu.Lock()
	refusing.code = protocol.SystemError
	refusing.mu.Unlock()

	full := sendHeader(replyTopic, 0, replyProps("x", "c"))
	withoutGroup := protocol.Ext(full)
	delete(withoutGroup, "producerGroup")
	v2WithoutTopic := protocol.Ext(full.V2())
	delete(v2WithoutTopic, "b")
	v2BadQueue := protocol.Ext(full.V2())
	v2BadQueue["e"] = "first"

	for _, tc := range []struct {
		name   string
		code   int32
		ext    map[string]string
		remark string
	}{
		{"unknown requester", protocol.SendReplyMessageV2, protocol.Ext(sendHeader(replyTopic, 0, replyProps("nobody", "c")).V2()),
			"push reply message fail, channel of <nobody> not found."},
		{"no REPLY_TO_CLIENT", protocol.SendReplyMessageV2, protocol.Ext(sendHeader(replyTopic, 0, "").V2()),
			"reply message properties[REPLY_TO_CLIENT] is null"},
		{"requester refuses", protocol.SendReplyMessage, protocol.Ext(sendHeader(replyTopic, 0, replyProps("refusing", "c"))),
			"push reply message to refusingfail."},
		{"V1 without producerGroup", protocol.SendReplyMessage, withoutGroup, "the custom field <producerGroup> is null"},
		{"V2 without topic", protocol.SendReplyMessageV2, v2WithoutTopic, "the custom field <b> is null"},
		{"V2 bad queue id", protocol.SendReplyMessageV2, v2BadQueue, "SendMessageRequestHeaderV2"},
		{"no header", protocol.SendReplyMessageV2, nil, "the custom field <a> is null"},
		{"bad topic", protocol.SendReplyMessage, protocol.Ext(sendHeader("bad topic!", 0, replyProps("x", "c"))), "topic"},
	} {
		resp := e.call(tc.code, tc.ext, []byte("pong"))
		if resp.Code != protocol.SystemError || !strings.Contains(resp.Remark, tc.remark) {
			t.Errorf("%s: %d %q, want SYSTEM_ERROR %q", tc.name, resp.Code, resp.Remark, tc.remark)
		}
	}
	if n := len(refusing.received()); n != 1 {
		t.Fatalf("refusing requester got %d pushes", n)
	}
	// The broker does not serve the client-side code.
	if resp := e.call(protocol.PushReplyMessageToClient, nil, nil); resp.Code != protocol.RequestCodeNotSupported {
		t.Fatalf("PUSH_REPLY_MESSAGE_TO_CLIENT to the broker: %d %s", resp.Code, resp.Remark)
	}
}

// TestSendReplyAfterRequesterLeft: a requester whose connection closed is
// gone from the index at once.
func TestSendReplyAfterRequesterLeft(t *testing.T) {
	e := newEnv(t, nil)
	req := newRequester(t, e, "leaving")
	_ = req.rc.Close()
	wait.For(t, 5*time.Second, "the closed requester to be unregistered", func() bool {
		_, ok := e.clients.FindProducerChannel("leaving")
		return !ok
	})
	resp := sendReplyV2(e, replyProps("leaving", "c"), "late")
	if resp.Code != protocol.SystemError || !strings.Contains(resp.Remark, "channel of <leaving> not found") {
		t.Fatalf("reply to a gone requester: %d %s", resp.Code, resp.Remark)
	}
}

// FuzzSendReplyRequest: whatever header and body a SEND_REPLY_MESSAGE(_V2)
// carries, the broker answers at once with a protocol code (never a
// handler panic, never a hang), and SUCCESS only for a reply it pushed.
func FuzzSendReplyRequest(f *testing.F) {
	e := newEnv(f, nil)
	newRequesterTB(f, e, "fuzz-requester") // registered for the whole run
	f.Add(true, "pg", replyTopic, "0", "0", replyProps("fuzz-requester", "c"), []byte("b"))
	f.Add(false, "", "", "x", "-9", "\x01\x02", []byte{})
	f.Add(true, "pg", "%RETRY%g", "99", "1", replyProps("nobody", "c"), []byte("b"))
	f.Fuzz(func(t *testing.T, v2 bool, group, topic, queue, sysFlag, props string, body []byte) {
		h := sendHeader(topic, 0, props)
		h.ProducerGroup = group
		ext := protocol.Ext(h)
		ext["queueId"], ext["sysFlag"] = queue, sysFlag
		code := protocol.SendReplyMessage
		if v2 {
			code = protocol.SendReplyMessageV2
			m := map[string]string{}
			for k, v := range ext {
				if i := indexOf(k); i >= 0 {
					m[string(rune('a'+i))] = v
				}
			}
			ext = m
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := e.rc.Invoke(ctx, e.addr, remoting.NewRequest(code, ext, body))
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if strings.Contains(resp.Remark, "runtime error") || strings.Contains(resp.Remark, "panic") {
			t.Fatalf("handler panicked: %s", resp.Remark)
		}
		if resp.Code == protocol.Success {
			to, _ := message.Property(props, message.PropertyMessageReplyToClient)
			if to != "fuzz-requester" {
				t.Fatalf("SUCCESS for a reply to %q", to)
			}
		}
	})
}

// indexOf is the position of a long send-header key (V2 letter a+i).
func indexOf(k string) int {
	for i, name := range []string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId",
		"sysFlag", "bornTimestamp", "flag", "properties"} {
		if k == name {
			return i
		}
	}
	return -1
}

// TestSendReplyStoredSysFlag: the push carries the reply's sysFlag as
// sent; the stored record keeps only its compression bits (a transaction
// bit would hide it from the consume queue).
func TestSendReplyStoredSysFlag(t *testing.T) {
	e := newEnv(t, nil)
	req := newRequester(t, e, "requester-1")
	h := sendHeader(replyTopic, 0, replyProps("requester-1", "corr-3"))
	h.SysFlag = message.SysFlagCompressed | message.CompressionZSTD | message.TransactionPreparedType
	resp := e.call(protocol.SendReplyMessage, protocol.Ext(h), []byte("zstd bytes"))
	if resp.Code != protocol.Success {
		t.Fatalf("send reply: %d %s", resp.Code, resp.Remark)
	}
	var ph protocol.ReplyMessageRequestHeader
	must(t, ph.Decode(req.received()[0].Ext()))
	if ph.SysFlag != h.SysFlag {
		t.Fatalf("pushed sysFlag %#x, want %#x", ph.SysFlag, h.SysFlag)
	}
	e.waitMaxOffset(replyTopic, 0, 1) // dispatched: no transaction bit stored
}
