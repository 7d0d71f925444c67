package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestRuntimeInfoCountsTraffic sends 10 messages with the official Go
// client, commits 2 transactional ones on another topic (the producer's
// warm-up and one more), sends one with delay level 1 to a third, consumes
// the 10 and checks what the broker's statistics report through
// GET_BROKER_RUNTIME_INFO and VIEW_BROKER_STATS_DATA: half messages and
// parked delayed and timer ones are a system topic's, so only the 14
// delivered messages count in msgPutTotalTodayNow (the delayed and the
// timer one once delivered, as Java counts those deliveries).
func TestRuntimeInfoCountsTraffic(t *testing.T) {
	c := startCluster(t, txnTune(15))
	topic, txTopic, delayTopic := uniq(t, "T"), uniq(t, "TX"), uniq(t, "TD")
	c.createTopic(topic, 2)
	c.createTopic(txTopic, 2)
	c.createTopic(delayTopic, 1)
	p := c.newProducer()
	for i := range 10 {
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(fmt.Sprintf("m-%d", i)))); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	delayed := primitive.NewMessage(delayTopic, []byte("later"))
	delayed.WithDelayTimeLevel(1)
	if _, err := p.SendSync(context.Background(), delayed); err != nil {
		t.Fatalf("send delayed: %v", err)
	}
	tp := c.newTxnProducer(uniq(t, "tg"), txTopic, newTxnListener())
	sendTxn(t, tp, txTopic, "commit-1", primitive.CommitMessageState)
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 30*time.Second, "10 messages consumed", func() bool { return rec.len() == 10 })
	// Last, so that the timer's rates over 10 s still see it below.
	timed := primitive.NewMessage(delayTopic, []byte("timed"))
	timed.WithDelayTimestamp(time.Now().Add(time.Second))
	if _, err := p.SendSync(context.Background(), timed); err != nil {
		t.Fatalf("send timer message: %v", err)
	}

	info := func() map[string]string {
		r := c.invoke(c.b.Addr(), protocol.GetBrokerRuntimeInfo, nil, nil)
		var kv protocol.KVTable
		if r.Code != protocol.Success {
			t.Fatalf("runtime info: %d %s", r.Code, r.Remark)
		}
		if err := protocol.UnmarshalFastJSON(r.Body, &kv); err != nil {
			t.Fatal(err)
		}
		return kv.Table
	}
	// END_TRANSACTION is one-way: the commit may still be on its way; the
	// delayed message is delivered 1 s after it was stored.
	wait.For(t, 10*time.Second, "14 messages put", func() bool { return info()["msgPutTotalTodayNow"] == "14" })
	kv := info()
	if kv["scheduleMessageOffset_1"] != "1,1" {
		t.Errorf("scheduleMessageOffset_1 = %q, want 1,1", kv["scheduleMessageOffset_1"])
	}
	// The timer read and delivered its message: nothing behind, and its
	// rates over the last 10 s (sampled every second) show the one message.
	if kv["timerOffsetBehind"] != "0" || kv["timerReadBehind"] != "0" || kv["timerCongestNum"] != "0" {
		t.Errorf("timer behind: offset %q read %q congest %q", kv["timerOffsetBehind"], kv["timerReadBehind"], kv["timerCongestNum"])
	}
	wait.For(t, 10*time.Second, "the timer's rates", func() bool {
		kv := info()
		return kv["timerEnqueueTps"] != "0.0" && kv["timerDequeueTps"] != "0.0"
	})
	if kv["msgGetTotalTodayNow"] != "10" || kv["brokerVersionDesc"] != "V4_9_8" || kv["brokerActive"] != "true" {
		t.Fatalf("msgGetTotalTodayNow %q brokerVersionDesc %q brokerActive %q", kv["msgGetTotalTodayNow"], kv["brokerVersionDesc"], kv["brokerActive"])
	}
	for _, k := range []string{"putTps", "getTransferredTps", "bootTimestamp", "runtime", "commitLogDirCapacity"} {
		if _, ok := kv[k]; !ok {
			t.Errorf("runtime info lacks %s", k)
		}
	}
	for _, key := range []struct{ name, key string }{
		{"TOPIC_PUT_NUMS", topic}, {"TOPIC_PUT_NUMS", txTopic}, {"TOPIC_PUT_NUMS", "RMQ_SYS_TRANS_HALF_TOPIC"},
		{"TOPIC_PUT_NUMS", delayTopic}, {"TOPIC_PUT_NUMS", "SCHEDULE_TOPIC_XXXX"},
		{"BROKER_PUT_NUMS", c.brokerConfig().BrokerClusterName},
	} {
		r := c.invoke(c.b.Addr(), protocol.ViewBrokerStatsData, &protocol.ViewBrokerStatsDataRequestHeader{StatsName: key.name, StatsKey: key.key}, nil)
		if r.Code != protocol.Success {
			t.Errorf("VIEW_BROKER_STATS_DATA %s %s: %d %s", key.name, key.key, r.Code, r.Remark)
		}
	}
}
