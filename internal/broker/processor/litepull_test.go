package processor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

// litePullFlags are the sysFlag bits of the lite pull consumer (5.x and
// 4.9.8 DefaultLitePullConsumerImpl.pullSyncImpl): suspend, subscription,
// lite pull; never commit offset.
const litePullFlags = protocol.PullFlagSuspend | protocol.PullFlagSubscription | protocol.PullFlagLitePullMessage

func litePullHeader(group, topic string, q int32, offset int64) *protocol.PullMessageRequestHeader {
	h := pullHeader(group, topic, q, offset, "*")
	h.SysFlag, h.SuspendTimeoutMillis, h.ExpressionType = litePullFlags, 300, protocol.ExpressionTag
	return h
}

// TestLitePull: LITE_PULL_MESSAGE reads as PULL_MESSAGE does, holds a pull
// that finds nothing until its suspend timeout (Java suspends lite pulls
// too), is woken by an arrival, corrects an offset past the end to the max
// offset (5.x), and commits nothing.
func TestLitePull(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 2)
	for _, b := range []string{"m0", "m1", "m2"} {
		if r := e.send(sendHeader("T", 0, ""), b); r.Code != protocol.Success {
			t.Fatal(r.Remark)
		}
	}
	e.waitMaxOffset("T", 0, 3)

	r := e.call(protocol.LitePullMessage, protocol.Ext(litePullHeader("lg", "T", 0, 0)), nil)
	if h := pullHeaderOf(t, r); r.Code != protocol.Success || h.NextBeginOffset != 3 || h.MaxOffset != 3 {
		t.Fatalf("lite pull from 0: %d %s next %d max %d", r.Code, r.Remark, h.NextBeginOffset, h.MaxOffset)
	}
	if got := bodies(t, r.Body); strings.Join(got, ",") != "m0,m1,m2" {
		t.Fatalf("bodies %v", got)
	}

	// Caught up: held for the suspend timeout, then PULL_NOT_FOUND.
	start := time.Now()
	r = e.call(protocol.LitePullMessage, protocol.Ext(litePullHeader("lg", "T", 0, 3)), nil)
	if h := pullHeaderOf(t, r); r.Code != protocol.PullNotFound || h.NextBeginOffset != 3 {
		t.Fatalf("caught up: %d %s next %d", r.Code, r.Remark, h.NextBeginOffset)
	}
	if held := time.Since(start); held < 250*time.Millisecond {
		t.Fatalf("caught-up lite pull answered after %v, want it held ~300 ms", held)
	}

	// A held lite pull is answered by an arrival.
	h := litePullHeader("lg", "T", 0, 3)
	h.SuspendTimeoutMillis = 20000
	done := make(chan []string, 1)
	go func() {
		r := e.call(protocol.LitePullMessage, protocol.Ext(h), nil)
		if r.Code != protocol.Success {
			t.Errorf("woken lite pull: %d %s", r.Code, r.Remark)
		}
		done <- bodies(t, r.Body)
	}()
	if r := e.send(sendHeader("T", 0, ""), "m3"); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	select {
	case got := <-done:
		if strings.Join(got, ",") != "m3" {
			t.Fatalf("woken lite pull bodies %v", got)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("held lite pull not woken by the arrival")
	}

	// Past the end: moved to the max offset, not back to 0.
	r = e.call(protocol.LitePullMessage, protocol.Ext(litePullHeader("lg", "T", 0, 100)), nil)
	if h := pullHeaderOf(t, r); r.Code != protocol.PullOffsetMoved || h.NextBeginOffset != 4 {
		t.Fatalf("past the end: %d %s next %d, want PULL_OFFSET_MOVED next 4", r.Code, r.Remark, h.NextBeginOffset)
	}
	if off, ok := e.offsets.Query("lg", "T", 0); ok {
		t.Fatalf("lite pull committed offset %d", off)
	}
}

// TestLitePullDisabled: litePullMessageEnable=false refuses the code with
// NO_PERMISSION and Java's remark; PULL_MESSAGE still reads.
func TestLitePullDisabled(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.LitePullMessageEnable = false })
	e.createTopic("T", 1)
	r := e.call(protocol.LitePullMessage, protocol.Ext(litePullHeader("lg", "T", 0, 0)), nil)
	if r.Code != protocol.NoPermission || !strings.Contains(r.Remark, "for lite pull consumer is forbidden") {
		t.Fatalf("disabled lite pull: %d %q", r.Code, r.Remark)
	}
	r = e.call(protocol.PullMessage, protocol.Ext(pullHeader("lg", "T", 0, 0, "*")), nil)
	if r.Code != protocol.PullNotFound {
		t.Fatalf("pull with lite pull disabled: %d %s", r.Code, r.Remark)
	}
}

// TestLitePullBadInput: a missing or half-built header gets SYSTEM_ERROR
// naming the field (Java's checkFields), never a hang.
func TestLitePullBadInput(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	full := protocol.Ext(litePullHeader("lg", "T", 0, 0))
	for _, c := range []struct {
		name   string
		drop   string
		remark string
	}{
		{"no header", "*", "consumerGroup"},
		{"no queueId", "queueId", "queueId"},
		{"no queueOffset", "queueOffset", "queueOffset"},
		{"no maxMsgNums", "maxMsgNums", "maxMsgNums"},
		{"no sysFlag", "sysFlag", "sysFlag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ext := map[string]string{}
			if c.drop != "*" {
				for k, v := range full {
					if k != c.drop {
						ext[k] = v
					}
				}
			}
			r := e.call(protocol.LitePullMessage, ext, nil)
			if r.Code != protocol.SystemError || !strings.Contains(r.Remark, c.remark) {
				t.Fatalf("%d %q, want SYSTEM_ERROR naming %s", r.Code, r.Remark, c.remark)
			}
		})
	}
	ext := protocol.Ext(litePullHeader("lg", "T", 0, 0))
	ext["queueOffset"] = "x"
	if r := e.call(protocol.LitePullMessage, ext, nil); r.Code != protocol.SystemError {
		t.Fatalf("bad queueOffset: %d %q", r.Code, r.Remark)
	}
	ext = protocol.Ext(litePullHeader("", "T", 0, 0))
	if r := e.call(protocol.LitePullMessage, ext, nil); r.Code != protocol.SystemError || !strings.Contains(r.Remark, "consumerGroup") {
		t.Fatalf("empty consumerGroup: %d %q", r.Code, r.Remark)
	}
}
