package broker_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// sendTimer sends a timer message (TIMER_DELIVER_MS at) with UNIQ_KEY id
// to queue 0 of topic over remoting and returns the send's recall handle.
func sendTimer(t *testing.T, rc *remoting.Client, addr, topic, id string, at time.Time) string {
	t.Helper()
	props := message.SetProperty("", message.PropertyUniqClientMessageIDKeyIdx, id)
	props = message.SetProperty(props, message.PropertyTimerDeliverMS, strconv.FormatInt(at.UnixMilli(), 10))
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: props}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := rc.Invoke(ctx, addr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte(id)))
	if err != nil || resp.Code != protocol.Success {
		t.Fatalf("send %s: %v %+v", id, err, resp)
	}
	var rh protocol.SendMessageResponseHeader
	if err := rh.Decode(resp.ExtFields); err != nil {
		t.Fatal(err)
	}
	return rh.RecallHandle
}

func recallAt(t *testing.T, rc *remoting.Client, addr, topic, handle string) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := protocol.RecallMessageRequestHeader{ProducerGroup: "pg", Topic: topic, RecallHandle: handle}
	resp, err := rc.Invoke(ctx, addr, remoting.NewRequest(protocol.RecallMessage, protocol.Ext(&h), nil))
	if err != nil {
		t.Fatalf("recall: %v", err)
	}
	return resp
}

func handleOf(fields ...string) string {
	return base64.URLEncoding.EncodeToString([]byte(strings.Join(fields, " ")))
}

// TestRecallRemoting: RECALL_MESSAGE as Java 5.3's broker answers it. A
// timer message's send answers its recall handle; recalled before its
// time it is never delivered (the message due after it is); recalled
// after delivery, or with a malformed or foreign handle, the answer is
// Java's code and remark; with recallMessageEnable=false (Java's
// default) NO_PERMISSION.
func TestRecallRemoting(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.RecallMessageEnable = true })
	topic := uniq(t, "Recall")
	c.createTopic(topic, 1)
	addr := c.b.Addr()
	start := time.Now()
	at := start.Add(2 * time.Second)
	handle := sendTimer(t, c.rc, addr, topic, "RECALL-1", at)
	want := handleOf("v1", topic, c.brokerConfig().BrokerName, strconv.FormatInt(at.UnixMilli()+1, 10), "RECALL-1")
	if handle != want {
		t.Fatalf("recall handle %q, want %q", handle, want)
	}
	after := sendTimer(t, c.rc, addr, topic, "KEPT-1", at.Add(time.Millisecond))

	resp := recallAt(t, c.rc, addr, topic, handle)
	if resp.Code != protocol.Success || resp.ExtFields["msgId"] != "RECALL-1" {
		t.Fatalf("recall: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
	// Recalling twice is still a success (Java puts a second marker).
	if resp := recallAt(t, c.rc, addr, topic, handle); resp.Code != protocol.Success {
		t.Fatalf("second recall: %d %q", resp.Code, resp.Remark)
	}
	for _, tc := range []struct {
		name, topic, handle string
		code                int32
		remark              string
	}{
		{"malformed", topic, "%%%", protocol.IllegalOperation, "recall handle is invalid"},
		{"wrong version", topic, handleOf("v2", topic, "b", "1", "x"), protocol.IllegalOperation, "recall handle is invalid"},
		{"topic mismatch", topic, handleOf("v1", "Other", c.brokerConfig().BrokerName, strconv.FormatInt(at.UnixMilli(), 10), "x"),
			protocol.IllegalOperation, "recall failed, topic not match"},
		{"other broker", topic, handleOf("v1", topic, "no-such-broker", strconv.FormatInt(at.UnixMilli(), 10), "x"),
			protocol.IllegalOperation, "recall failed, broker service not available"},
		{"past timestamp", topic, handleOf("v1", topic, c.brokerConfig().BrokerName, "1000", "x"),
			protocol.IllegalOperation, "recall failed, timestamp invalid"},
		{"unparsable timestamp", topic, handleOf("v1", topic, c.brokerConfig().BrokerName, "soon", "x"),
			protocol.IllegalOperation, "recall failed, timestamp invalid"},
		{"unknown topic", "NoSuchRecallTopic", handle, protocol.TopicNotExist, "recall failed, the topic[NoSuchRecallTopic] not exist"},
	} {
		if resp := recallAt(t, c.rc, addr, tc.topic, tc.handle); resp.Code != tc.code || resp.Remark != tc.remark {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.Code, resp.Remark, tc.code, tc.remark)
		}
	}

	// The message due after the recalled one is delivered; the recalled
	// one, due first, is not (the timer delivers in time order, and the
	// queue holds only what was delivered).
	var got map[string][]int64
	wait.For(t, 15*time.Second, "KEPT-1 delivered", func() bool {
		got = pullQueue0(t, c.rc, addr, topic)
		return len(got["KEPT-1"]) > 0
	})
	if len(got) != 1 {
		t.Fatalf("delivered %v, want only KEPT-1", got)
	}
	// After delivery: Java's code for a handle whose time has passed.
	wait.For(t, 5*time.Second, "KEPT-1's time passed", func() bool { return time.Now().After(at.Add(2 * time.Millisecond)) })
	if resp := recallAt(t, c.rc, addr, topic, after); resp.Code != protocol.IllegalOperation || resp.Remark != "recall failed, timestamp invalid" {
		t.Fatalf("recall after delivery: %d %q", resp.Code, resp.Remark)
	}

	// A message due at once is not held: no handle.
	if h := sendTimer(t, c.rc, addr, topic, "NOW-1", time.Now().Add(-time.Second)); h != "" {
		t.Fatalf("a message due at once got recall handle %q", h)
	}

	// Java's default: recall refused.
	c2 := startCluster(t, nil)
	c2.createTopic(topic, 1)
	h2 := sendTimer(t, c2.rc, c2.b.Addr(), topic, "RECALL-2", time.Now().Add(time.Hour))
	if h2 == "" {
		t.Fatal("no recall handle with recallMessageEnable=false (Java answers one)")
	}
	if resp := recallAt(t, c2.rc, c2.b.Addr(), topic, h2); resp.Code != protocol.NoPermission || resp.Remark != "recall failed, operation is forbidden" {
		t.Fatalf("recall disabled: %d %q", resp.Code, resp.Remark)
	}
}

// TestRecallSurvivesKill: a message recalled, then rocketd killed with
// SIGKILL before the message's time and started again on the same data:
// the recalled message never reappears; the one due after it is
// delivered. Run twice: killed at once after the recall (the marker only
// in the timer queue) and after a timer checkpoint (the recall in the
// timer's recalls file).
func TestRecallSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rocketd")
	}
	for _, checkpointed := range []bool{false, true} {
		t.Run("checkpointed="+strconv.FormatBool(checkpointed), func(t *testing.T) {
			sp := newServeProc(t, "recallMessageEnable=true\n")
			rc := remoting.NewClient(remoting.ClientConfig{})
			defer rc.Close()
			c := &cluster{t: t, dir: sp.dir, nsAddr: sp.nsAddr, rc: rc}
			rd := startRocketd(t, sp.bin, sp.args...)
			topic := uniq(t, "RecallKill")
			th := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
				Perm: 6, TopicFilterType: protocol.SingleTag}
			if r := c.invoke(sp.addr, protocol.UpdateAndCreateTopic, &th, nil); r.Code != protocol.Success {
				t.Fatalf("create topic: %d %s", r.Code, r.Remark)
			}
			at := time.Now().Add(6 * time.Second)
			handle := sendTimer(t, rc, sp.addr, topic, "GONE", at)
			sendTimer(t, rc, sp.addr, topic, "KEPT", at.Add(time.Millisecond))
			if resp := recallAt(t, rc, sp.addr, topic, handle); resp.Code != protocol.Success {
				t.Fatalf("recall: %d %q", resp.Code, resp.Remark)
			}
			if checkpointed {
				// The timer saves its progress every second once it
				// read the marker: wait for a save after the recall.
				wait.For(t, 10*time.Second, "a timer checkpoint past the marker", func() bool {
					r := c.invoke(sp.addr, protocol.GetTimerCheckPoint, nil, nil)
					cp, err := protocol.DecodeTimerCheckpoint(r.Body)
					return r.Code == protocol.Success && err == nil && cp.LastTimerQueueOffset >= 3
				})
			}
			stopRocketd(t, rd, syscall.SIGKILL)
			rc.CloseConn(sp.addr)
			rc.CloseConn(sp.nsAddr)
			if time.Now().After(at) {
				t.Fatal("the message's time passed before the kill: the test proves nothing")
			}
			rd = startRocketd(t, sp.bin, sp.args...)
			defer stopRocketd(t, rd, syscall.SIGTERM)
			var got map[string][]int64
			wait.For(t, 30*time.Second, "KEPT delivered after the restart", func() bool {
				got = pullQueue0(t, rc, sp.addr, topic)
				return len(got["KEPT"]) > 0
			})
			if len(got) != 1 {
				t.Fatalf("delivered %v after the restart, want only KEPT\n%s", got, rd.Log())
			}
		})
	}
}
