package processor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// bodies decodes the records of a pull body.
func bodies(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	var sc message.Scanner
	sc.Reset(body)
	for sc.Next() {
		out = append(out, string(sc.Record().Body))
	}
	if sc.Err() != nil {
		t.Fatalf("pull body: %v", sc.Err())
	}
	return out
}

func TestPullStatuses(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 2)
	for i, tag := range []string{"a", "b", "a"} {
		if r := e.send(sendHeader("T", 0, "TAGS\x01"+tag), "m"+string(rune('0'+i))); r.Code != protocol.Success {
			t.Fatal(r.Remark)
		}
	}
	e.waitMaxOffset("T", 0, 3)
	cases := []struct {
		name            string
		h               *protocol.PullMessageRequestHeader
		code            int32
		next            int64
		bodies          []string
		remarkSubstring string
	}{
		{"found", pullHeader("g", "T", 0, 0, "*"), protocol.Success, 3, []string{"m0", "m1", "m2"}, "FOUND"},
		{"tag filter", pullHeader("g", "T", 0, 0, "b"), protocol.Success, 3, []string{"m1"}, "FOUND"},
		{"tag or", pullHeader("g", "T", 0, 0, "a || b"), protocol.Success, 3, []string{"m0", "m1", "m2"}, "FOUND"},
		{"nothing matches", pullHeader("g", "T", 0, 0, "zzz"), protocol.PullRetryImmediately, 3, nil, "NO_MATCHED_MESSAGE"},
		{"caught up", pullHeader("g", "T", 0, 3, "*"), protocol.PullNotFound, 3, nil, "OFFSET_OVERFLOW_ONE"},
		// 5.x corrects to the max offset, also when the min offset is 0.
		{"past the end", pullHeader("g", "T", 0, 10, "*"), protocol.PullOffsetMoved, 3, nil, "OFFSET_OVERFLOW_BADLY"},
		{"empty queue at 0", pullHeader("g", "T", 1, 0, "*"), protocol.PullNotFound, 0, nil, "NO_MATCHED_LOGIC_QUEUE"},
		{"empty queue at 5", pullHeader("g", "T", 1, 5, "*"), protocol.PullOffsetMoved, 0, nil, "NO_MATCHED_LOGIC_QUEUE"},
		{"unknown topic", pullHeader("g", "Nope", 0, 0, "*"), protocol.TopicNotExist, 0, nil, "not exist"},
		{"queue out of range", pullHeader("g", "T", 7, 0, "*"), protocol.SystemError, 0, nil, "illegal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(protocol.PullMessage, protocol.Ext(c.h), nil)
			h := pullHeaderOf(t, r)
			if r.Code != c.code {
				t.Fatalf("code %d (%s), want %d", r.Code, r.Remark, c.code)
			}
			if c.code != protocol.TopicNotExist && c.code != protocol.SystemError && h.NextBeginOffset != c.next {
				t.Fatalf("nextBeginOffset %d, want %d", h.NextBeginOffset, c.next)
			}
			if got := bodies(t, r.Body); len(got) != len(c.bodies) || (len(got) > 0 && got[0] != c.bodies[0]) {
				t.Fatalf("bodies %v, want %v", got, c.bodies)
			}
			if c.remarkSubstring != "" && !strings.Contains(r.Remark, c.remarkSubstring) {
				t.Fatalf("remark %q lacks %q", r.Remark, c.remarkSubstring)
			}
		})
	}
	// Each PULL_OFFSET_MOVED above published an OffsetMovedEvent.
	e.waitMaxOffset("OFFSET_MOVED_EVENT", 0, 2)

	// A pull with the commit flag stores the group's offset.
	h := pullHeader("g2", "T", 0, 0, "*")
	h.SysFlag |= protocol.PullFlagCommitOffset
	h.CommitOffset = 2
	e.call(protocol.PullMessage, protocol.Ext(h), nil)
	if off, ok := e.offsets.Query("g2", "T", 0); !ok || off != 2 {
		t.Fatalf("committed offset %d %v", off, ok)
	}
}

// TestPullSubscriptionFromHeartbeat: a push consumer's pull carries no
// subscription; the heartbeat's is used, and without one the answer is
// SUBSCRIPTION_NOT_EXIST.
func TestPullSubscriptionFromHeartbeat(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	e.send(sendHeader("T", 0, "TAGS\x01x"), "x")
	e.send(sendHeader("T", 0, "TAGS\x01y"), "y")
	e.waitMaxOffset("T", 0, 2)
	h := &protocol.PullMessageRequestHeader{ConsumerGroup: "cg", Topic: "T", MaxMsgNums: 32, ExpressionType: "TAG"}
	if r := e.call(protocol.PullMessage, protocol.Ext(h), nil); r.Code != protocol.SubscriptionNotExist {
		t.Fatalf("pull before heartbeat: %d %s", r.Code, r.Remark)
	}
	// The Go client sends codeSet as strings, hashed over UTF-8.
	hb := `{"clientID":"1.2.3.4@1","producerDataSet":[],"consumerDataSet":[{"groupName":"cg",` +
		`"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET",` +
		`"subscriptionDataSet":[{"classFilterMode":false,"topic":"T","subString":"y","tagsSet":["y"],"codeSet":["121"],` +
		`"subVersion":1,"expressionType":"TAG"}],"unitMode":false}]}`
	if r := e.call(protocol.HeartBeat, nil, []byte(hb)); r.Code != protocol.Success {
		t.Fatalf("heartbeat: %d %s", r.Code, r.Remark)
	}
	r := e.call(protocol.PullMessage, protocol.Ext(h), nil)
	if r.Code != protocol.Success {
		t.Fatalf("pull: %d %s", r.Code, r.Remark)
	}
	if got := bodies(t, r.Body); len(got) != 1 || got[0] != "y" {
		t.Fatalf("filtered by the heartbeat's subscription: %v", got)
	}
	h.SubVersion = 2 // newer than the heartbeat's
	if r := e.call(protocol.PullMessage, protocol.Ext(h), nil); r.Code != protocol.SubscriptionNotLatest {
		t.Fatalf("newer subVersion: %d %s", r.Code, r.Remark)
	}
}

func TestLongPollWokenByArrival(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	h := pullHeader("g", "T", 0, 0, "*")
	h.SysFlag |= protocol.PullFlagSuspend
	h.SuspendTimeoutMillis = 15000
	done := make(chan *remoting.Command, 1)
	start := time.Now()
	err := e.rc.InvokeAsync(e.addr, remoting.NewRequest(protocol.PullMessage, protocol.Ext(h), nil), 30*time.Second,
		func(r *remoting.Command, err error) {
			if err != nil {
				t.Error(err)
			}
			done <- r
		})
	must(t, err)
	// Wait until the pull is held, then send.
	wait.For(t, 5*time.Second, "the pull to be held", func() bool { return e.holder.Len() > 0 })
	e.send(sendHeader("T", 0, ""), "wake")
	select {
	case r := <-done:
		if r.Code != protocol.Success || len(bodies(t, r.Body)) != 1 {
			t.Fatalf("woken pull: %d %s", r.Code, r.Remark)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("woken after %v", el)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("held pull not woken by the arrival")
	}
}

func TestLongPollTimeout(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	e.send(sendHeader("T", 0, ""), "one")
	e.waitMaxOffset("T", 0, 1)
	h := pullHeader("g", "T", 0, 1, "*")
	h.SysFlag |= protocol.PullFlagSuspend
	h.SuspendTimeoutMillis = 300
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := e.rc.Invoke(ctx, e.addr, remoting.NewRequest(protocol.PullMessage, protocol.Ext(h), nil))
	must(t, err)
	el := time.Since(start)
	if r.Code != protocol.PullNotFound || pullHeaderOf(t, r).NextBeginOffset != 1 {
		t.Fatalf("timed-out pull: %d %s %v", r.Code, r.Remark, r.ExtFields)
	}
	if el < 250*time.Millisecond {
		t.Fatalf("answered after %v: not held", el)
	}
	// Without the suspend flag: at once, whatever suspendTimeoutMillis
	// says (a held one would take the whole 8 s).
	h.SysFlag &^= protocol.PullFlagSuspend
	h.SuspendTimeoutMillis = 8000
	start = time.Now()
	if r := e.call(protocol.PullMessage, protocol.Ext(h), nil); r.Code != protocol.PullNotFound || time.Since(start) > 4*time.Second {
		t.Fatalf("unsuspended pull: %d after %v", r.Code, time.Since(start))
	}
}
