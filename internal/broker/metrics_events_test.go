package broker_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// sendRawMsg sends one message to queue 0 of topic over remoting with
// properties props and returns the send's response header.
func (c *cluster) sendRawMsg(addr, topic, props, body string) protocol.SendMessageResponseHeader {
	c.t.Helper()
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: props}
	resp := c.invoke(addr, protocol.SendMessage, &h, []byte(body))
	if resp.Code != protocol.Success {
		c.t.Fatalf("send to %s: %d %s", topic, resp.Code, resp.Remark)
	}
	var rh protocol.SendMessageResponseHeader
	if err := rh.Decode(resp.ExtFields); err != nil {
		c.t.Fatal(err)
	}
	return rh
}

// TestMetricsTxnDLQTimer: the families counted where things happen. Three
// half messages, one committed and one rolled back, leave
// rocketmq_half_messages at 1 with one commit, one rollback and one
// finish-latency sample; a send back with delay level -1 counts one
// rocketmq_send_to_dlq_messages_total; a timer message due in two hours is
// one rocketmq_timing_messages of its topic and in the 4 h range of
// rocketmq_timer_message_snapshot. The half-message count
// survives a clean restart (the transactionMetrics file).
func TestMetricsTxnDLQTimer(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.MetricsExporterType = config.MetricsProm })
	topic, group := uniq(t, "MetricsTxn"), uniq(t, "metricsDLQGroup")
	c.createTopic(topic, 1)
	addr := c.b.Addr()

	half := message.SetProperty("", message.PropertyTransactionPrepared, "true")
	half = message.SetProperty(half, message.PropertyProducerGroup, "pg")
	end := func(rh protocol.SendMessageResponseHeader, how int32) {
		t.Helper()
		_, off, err := message.ParseOffsetMsgID(rh.MsgID)
		if err != nil {
			t.Fatal(err)
		}
		eh := protocol.EndTransactionRequestHeader{ProducerGroup: "pg", TranStateTableOffset: rh.QueueOffset,
			CommitLogOffset: off, CommitOrRollback: how, MsgID: rh.MsgID}
		if resp := c.invoke(addr, protocol.EndTransaction, &eh, nil); resp.Code != protocol.Success {
			t.Fatalf("end transaction: %d %s", resp.Code, resp.Remark)
		}
	}
	h1 := c.sendRawMsg(addr, topic, half, "h1")
	h2 := c.sendRawMsg(addr, topic, half, "h2")
	c.sendRawMsg(addr, topic, half, "h3")
	end(h1, protocol.TransactionCommitType)
	end(h2, protocol.TransactionRollbackType)

	plain := c.sendRawMsg(addr, topic, "", "to the DLQ")
	_, off, err := message.ParseOffsetMsgID(plain.MsgID)
	if err != nil {
		t.Fatal(err)
	}
	sb := protocol.ConsumerSendMsgBackRequestHeader{Offset: off, Group: group, DelayLevel: -1, OriginMsgID: plain.MsgID, OriginTopic: topic}
	if resp := c.invoke(addr, protocol.ConsumerSendMsgBack, &sb, nil); resp.Code != protocol.Success {
		t.Fatalf("send back: %d %s", resp.Code, resp.Remark)
	}

	timerProps := message.SetProperty("", message.PropertyTimerDeliverMS, strconv.FormatInt(time.Now().Add(2*time.Hour).UnixMilli(), 10))
	c.sendRawMsg(addr, topic, timerProps, "later")

	base := []string{"cluster=" + config.DefaultBrokerClusterName, "node_type=broker", "node_id=" + config.DefaultBrokerName}
	want := []struct {
		name   string
		labels []string
		v      float64
	}{
		{"rocketmq_half_messages", []string{"topic=" + topic}, 1},
		{"rocketmq_commit_messages_total", []string{"topic=" + topic}, 1},
		{"rocketmq_rollback_messages_total", []string{"topic=" + topic}, 1},
		{"rocketmq_finish_message_latency", []string{"topic=" + topic}, 1},
		{"rocketmq_send_to_dlq_messages_total", []string{"consumer_group=" + group, "topic=" + topic, "is_system=false"}, 1},
		{"rocketmq_timing_messages", []string{"topic=" + topic, "storage_type=local", "storage_medium=disk"}, 1},
	}
	mAddr := c.b.MetricsAddr()
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("last mismatch:", last)
		}
	})
	wait.For(t, 30*time.Second, "transaction, DLQ and timer families", func() bool {
		mfs := scrape(t, mAddr)
		for _, w := range want {
			v, series := sumOf(mfs, w.name, append(w.labels, base...)...)
			if series != 1 || v != w.v {
				last = w.name + ": " + strconv.FormatFloat(v, 'g', -1, 64) + " over " + strconv.Itoa(series) + " series"
				return false
			}
		}
		// The message due in two hours is in the 4 h range of the snapshot.
		if v, series := sumOf(mfs, "rocketmq_timer_message_snapshot", append([]string{"timer_bound_s=14400", "storage_type=local"}, base...)...); series != 1 || v != 1 {
			last = "rocketmq_timer_message_snapshot{timer_bound_s=14400}: " + strconv.FormatFloat(v, 'g', -1, 64)
			return false
		}
		if _, series := sumOf(mfs, "rocketmq_timer_message_snapshot", base...); series != 8 {
			last = "rocketmq_timer_message_snapshot: " + strconv.Itoa(series) + " series, want 8"
			return false
		}
		for _, name := range []string{"rocketmq_timer_enqueue_lag", "rocketmq_timer_enqueue_latency",
			"rocketmq_timer_dequeue_lag", "rocketmq_timer_dequeue_latency"} {
			if _, series := sumOf(mfs, name, base...); series != 1 {
				last = name + " missing"
				return false
			}
		}
		return true
	})

	c.stopBroker()
	c.startBroker()
	if v, series := sumOf(scrape(t, c.b.MetricsAddr()), "rocketmq_half_messages", append([]string{"topic=" + topic}, base...)...); series != 1 || v != 1 {
		t.Errorf("after restart: rocketmq_half_messages %v over %d series, want 1 in one", v, series)
	}
}

// TestMetricsPopRevive: a popped message never acked, with retryMaxTimes
// 2, is revived twice into the retry topic
// (rocketmq_pop_revive_retry_messages_total, PUT_OK) and then into the
// DLQ (rocketmq_send_to_dlq_messages_total). Each of its three pops put
// a check point into the revive log, which the revive service read back
// (rocketmq_pop_revive_in/out_message_total, CK); every revive queue
// has a rocketmq_pop_revive_lag and _latency series.
func TestMetricsPopRevive(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) {
		popTune(bc)
		bc.MetricsExporterType = config.MetricsProm
	})
	addr := c.b.Addr()
	topic, group := uniq(t, "MetricsPop"), uniq(t, "MetricsPopG")
	c.createTopic(topic, 1)
	gc := protocol.NewSubscriptionGroupConfig(group)
	gc.RetryMaxTimes = 2
	body, err := protocol.MarshalFastJSON(&gc)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.invoke(addr, protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
		t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
	c.sendRaw(addr, topic, "TagA", "dead")
	wait.For(t, 20*time.Second, "message in the DLQ", func() bool {
		c.popRaw(addr, popReq{group: group, topic: topic, queue: -1, invisible: 300, pollTime: 300})
		return c.b.Store().MaxOffset("%DLQ%"+group, 0) == 1
	})
	mfs := scrape(t, c.b.MetricsAddr())
	if v, _ := sumOf(mfs, "rocketmq_pop_revive_retry_messages_total", "consumer_group="+group, "put_status=PUT_OK"); v != 2 {
		t.Errorf("revive retry messages %v, want 2", v)
	}
	if v, series := sumOf(mfs, "rocketmq_send_to_dlq_messages_total", "consumer_group="+group, "is_system=false"); series != 1 || v != 1 {
		t.Errorf("sent to DLQ %v over %d series, want 1 in one", v, series)
	}
	if v, _ := sumOf(mfs, "rocketmq_pop_revive_in_message_total", "consumer_group="+group, "revive_message_type=CK", "put_status=PUT_OK"); v != 3 {
		t.Errorf("check points put %v, want 3", v)
	}
	if v, _ := sumOf(mfs, "rocketmq_pop_revive_out_message_total", "consumer_group="+group, "revive_message_type=CK"); v != 3 {
		t.Errorf("check points read back %v, want 3", v)
	}
	if v, _ := sumOf(mfs, "rocketmq_pop_revive_in_message_total", "consumer_group="+group, "revive_message_type=ACK"); v != 0 {
		t.Errorf("acks put %v, want 0", v)
	}
	for _, name := range []string{"rocketmq_pop_revive_lag", "rocketmq_pop_revive_latency"} {
		if _, series := sumOf(mfs, name, "node_type=broker"); series != config.DefaultReviveQueueNum {
			t.Errorf("%s: %d series, want one per revive queue (%d)", name, series, config.DefaultReviveQueueNum)
		}
	}
}
