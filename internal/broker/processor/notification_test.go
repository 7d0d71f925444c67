package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func notificationExt(group, topic string, q int32, pollMs int64) map[string]string {
	h := protocol.NotificationRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, PollTime: pollMs,
		BornTime: time.Now().UnixMilli()}
	return protocol.Ext(&h)
}

func (e *env) notification(group, topic string, q int32) protocol.NotificationResponseHeader {
	e.t.Helper()
	r := e.call(protocol.Notification, notificationExt(group, topic, q, 0), nil)
	if r.Code != protocol.Success {
		e.t.Fatalf("notification: %d %s", r.Code, r.Remark)
	}
	var h protocol.NotificationResponseHeader
	must(e.t, h.Decode(r.ExtFields))
	return h
}

func (e *env) pollingNum(group, topic string, q int32) int32 {
	e.t.Helper()
	h := protocol.PollingInfoRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q}
	r := e.call(protocol.PollingInfo, protocol.Ext(&h), nil)
	if r.Code != protocol.Success {
		e.t.Fatalf("polling info: %d %s", r.Code, r.Remark)
	}
	var rh protocol.PollingInfoResponseHeader
	must(e.t, rh.Decode(r.ExtFields))
	return rh.PollingNum
}

// peek returns how many records PEEK_MESSAGE of the group read and the
// restNum it answered.
func (e *env) peek(group, topic string, q int32) (int, int64) {
	e.t.Helper()
	h := protocol.PeekMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, MaxMsgNums: 32}
	r := e.call(protocol.PeekMessage, protocol.Ext(&h), nil)
	if r.Code != protocol.Success {
		e.t.Fatalf("peek: %d %s", r.Code, r.Remark)
	}
	var rh protocol.PopMessageResponseHeader
	must(e.t, rh.Decode(r.ExtFields))
	n := 0
	for b := r.Body; len(b) > 0; n++ {
		_, size, err := message.DecodeRecord(b, true)
		if err != nil {
			e.t.Fatal(err)
		}
		b = b[size:]
	}
	return n, rh.RestNum
}

// NOTIFICATION says whether a pop would find a message, holding the
// request until one arrives; POLLING_INFO counts the group's held
// requests on the queue; PEEK_MESSAGE reads without taking; a pop that
// takes the message makes the answer false again.
func TestNotificationAndPollingInfo(t *testing.T) {
	e := newPopEnv(t, nil)
	e.createTopic("NT", 2)
	if h := e.notification("g", "NT", -1); h.HasMsg || h.PollingFull {
		t.Fatalf("empty topic: %+v", h)
	}

	type answer struct {
		resp *remoting.Command
		err  error
	}
	held := make(chan answer, 1)
	go func() { // ends when the held request is answered (or the client times out)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := e.rc.Invoke(ctx, e.addr, remoting.NewRequest(protocol.Notification, notificationExt("g", "NT", -1, 20_000), nil))
		held <- answer{r, err}
	}()
	wait.For(t, 10*time.Second, "the notification is held", func() bool { return e.pollingNum("g", "NT", -1) == 1 })
	if n := e.pollingNum("other", "NT", -1); n != 0 {
		t.Fatalf("another group's polling num = %d", n)
	}
	if n := e.pollingNum("g", "NT", 0); n != 0 {
		t.Fatalf("queue 0's polling num = %d (the request waits on every queue)", n)
	}

	if r := e.send(sendHeader("NT", 1, ""), "m"); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	var a answer
	select {
	case a = <-held:
	case <-time.After(15 * time.Second):
		t.Fatal("the held notification was not answered after a message arrived")
	}
	if a.err != nil || a.resp.Code != protocol.Success {
		t.Fatalf("held notification: %v %+v", a.err, a.resp)
	}
	var h protocol.NotificationResponseHeader
	must(t, h.Decode(a.resp.ExtFields))
	if !h.HasMsg {
		t.Fatalf("held notification answered %+v after an arrival", h)
	}
	if n := e.pollingNum("g", "NT", -1); n != 0 {
		t.Fatalf("polling num after the answer = %d", n)
	}
	if !e.notification("g", "NT", 1).HasMsg || e.notification("g", "NT", 0).HasMsg {
		t.Fatal("per-queue answers: want queue 1 only")
	}

	e.waitMaxOffset("NT", 1, 1)
	for i := 0; i < 2; i++ { // a peek takes nothing: the second sees the same
		if n, rest := e.peek("g", "NT", -1); n != 1 || rest != 1 {
			t.Fatalf("peek %d: %d messages, restNum %d", i, n, rest)
		}
	}
	if r := e.call(protocol.PopMessage, popExt("g", "NT", 1, "", ""), nil); r.Code != protocol.Success {
		t.Fatalf("pop: %d %s", r.Code, r.Remark)
	}
	hp := protocol.PeekMessageRequestHeader{ConsumerGroup: "g", Topic: "NT", QueueID: -1, MaxMsgNums: 32}
	if r := e.call(protocol.PeekMessage, protocol.Ext(&hp), nil); r.Code != protocol.PullNotFound || r.Remark != "NO_MESSAGE_IN_QUEUE" {
		t.Fatalf("peek after the pop: %d %s", r.Code, r.Remark)
	}
	if e.notification("g", "NT", -1).HasMsg {
		t.Fatal("a message is announced after the group popped it")
	}
	if !e.notification("g2", "NT", -1).HasMsg {
		t.Fatal("another group is not told about the message")
	}
}

// NOTIFICATION, POLLING_INFO and PEEK_MESSAGE answer Java's codes to bad requests.
func TestNotificationChecks(t *testing.T) {
	e := newPopEnv(t, nil)
	e.createTopic("NC", 2)
	for _, code := range []int32{protocol.Notification, protocol.PollingInfo, protocol.PeekMessage} {
		for _, c := range []struct {
			name string
			ext  map[string]string
			want int32
		}{
			{"no topic", notificationExt("g", "nosuch", 0, 0), protocol.TopicNotExist},
			{"queue out of range", notificationExt("g", "NC", 2, 0), protocol.InvalidParameter},
			{"bad number", map[string]string{"consumerGroup": "g", "topic": "NC", "queueId": "x"}, protocol.SystemError},
		} {
			if r := e.call(code, c.ext, nil); r.Code != c.want {
				t.Errorf("code %d, %s: %d %s, want %d", code, c.name, r.Code, r.Remark, c.want)
			}
		}
	}
}
