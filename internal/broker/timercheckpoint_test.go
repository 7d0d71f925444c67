package broker_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// GET_TIMER_CHECK_POINT reports the master's timer progress: after a
// timer message is delivered, the queue offset is past it and the read
// time past its delivery time.
func TestTimerCheckPointAfterDelivery(t *testing.T) {
	c := startCluster(t, nil)
	const topic = "TimerCheckPointTopic"
	c.createTopic(topic, 1)
	due := time.Now().Add(300 * time.Millisecond).UnixMilli()
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli(),
		Properties: message.SetProperty("", message.PropertyTimerDeliverMS, strconv.FormatInt(due, 10))}
	if r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte("timed")); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	wait.For(t, 15*time.Second, "the checkpoint past the delivered message", func() bool {
		r := c.invoke(c.b.Addr(), protocol.GetTimerCheckPoint, nil, nil)
		if r.Code != protocol.Success {
			t.Fatalf("GET_TIMER_CHECK_POINT: %d %s", r.Code, r.Remark)
		}
		cp, err := protocol.DecodeTimerCheckpoint(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		return cp.LastTimerQueueOffset == 1 && cp.MasterTimerQueueOffset == 1 && cp.LastReadTimeMs > due && cp.Counter > 1
	})

	// GET_TIMER_METRICS: the delivered one no longer counts, a far one does.
	h.Properties = message.SetProperty("", message.PropertyTimerDeliverMS, strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
	if r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte("far")); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	wait.For(t, 15*time.Second, "the far message counted", func() bool {
		r := c.invoke(c.b.Addr(), protocol.GetTimerMetrics, nil, nil)
		if r.Code != protocol.Success {
			t.Fatalf("GET_TIMER_METRICS: %d %s", r.Code, r.Remark)
		}
		var m protocol.TimerMetrics
		if err := protocol.UnmarshalFastJSON(r.Body, &m); err != nil {
			t.Fatalf("%v: %s", err, r.Body)
		}
		return m.TimingCount[topic].Count == 1 && m.DataVersion.Counter > 0
	})
}
