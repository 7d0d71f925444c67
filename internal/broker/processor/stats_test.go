package processor_test

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// statsClock is a settable clock for the statistics sampler.
type statsClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *statsClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *statsClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// newStatsEnv is an env whose processor counts into a Stats sampled only
// when the test says (at the clock's time).
func newStatsEnv(t *testing.T) (*env, *stats.Stats, *statsClock) {
	clk := &statsClock{t: time.Now()}
	var st *stats.Stats
	e := newEnv(t, func(bc *config.BrokerConfig, d *processor.Deps) {
		st = stats.New(stats.Config{Cluster: bc.BrokerClusterName, Now: clk.now, NoSampler: true,
			IsSystemTopic: func(topic string) bool { return strings.HasPrefix(topic, "rmq_sys_") }})
		d.Stats = st
	})
	t.Cleanup(func() { _ = st.Close() })
	return e, st, clk
}

func (e *env) runtimeInfo() map[string]string {
	e.t.Helper()
	r := e.call(protocol.GetBrokerRuntimeInfo, nil, nil)
	if r.Code != protocol.Success {
		e.t.Fatalf("runtime info: %d %s", r.Code, r.Remark)
	}
	var kv protocol.KVTable
	must(e.t, protocol.UnmarshalFastJSON(r.Body, &kv))
	return kv.Table
}

// TestStatsSendPull sends 5 single messages and a batch of 3, pulls them
// (one pull finding 8, one finding none) and checks the counters through
// GET_BROKER_RUNTIME_INFO, VIEW_BROKER_STATS_DATA and the consume TPS.
func TestStatsSendPull(t *testing.T) {
	e, st, clk := newStatsEnv(t)
	t0 := clk.now()
	st.Sample(t0)
	e.createTopic("T", 1)
	for i := range 5 {
		if r := e.send(sendHeader("T", 0, ""), "m"+strconv.Itoa(i)); r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	var body []byte
	for i := range 3 {
		body = message.AppendBatchItem(body, int32(i), []byte("b"+strconv.Itoa(i)), "")
	}
	h := sendHeader("T", 0, "")
	h.Batch = protocol.Some(true)
	ext := map[string]string{}
	h.AppendExtV2(ext)
	if r := e.call(protocol.SendBatchMessage, ext, body); r.Code != protocol.Success {
		t.Fatalf("batch: %d %s", r.Code, r.Remark)
	}
	// A refused send counts nothing.
	if r := e.send(sendHeader("NoSuchTopicX", 9, ""), "x"); r.Code == protocol.Success {
		t.Fatal("send to queue 9 of an unknown topic accepted")
	}
	e.waitMaxOffset("T", 0, 8)
	if r := e.call(protocol.PullMessage, protocol.Ext(pullHeader("g", "T", 0, 0, "*")), nil); r.Code != protocol.Success {
		t.Fatalf("pull: %d %s", r.Code, r.Remark)
	}
	if r := e.call(protocol.PullMessage, protocol.Ext(pullHeader("g", "T", 0, 8, "*")), nil); r.Code != protocol.PullNotFound {
		t.Fatalf("pull at the end: %d %s", r.Code, r.Remark)
	}

	if st.BrokerPutTotal() != 8 || st.BrokerGetTotal() != 8 {
		t.Fatalf("broker totals put %d get %d, want 8 8", st.BrokerPutTotal(), st.BrokerGetTotal())
	}
	var putBytes uint64
	st.EachTopicPut(func(topic string, msgs, bytes uint64) {
		if topic == "T" {
			if msgs != 8 {
				t.Errorf("EachTopicPut T msgs %d, want 8", msgs)
			}
			putBytes = bytes
		}
	})
	if putBytes <= 8*30 { // each stored record has a header over 30 bytes
		t.Fatalf("put bytes of T = %d: not the stored record sizes", putBytes)
	}

	// Ten seconds later the minute window holds the traffic.
	clk.set(t0.Add(10 * time.Second))
	st.Sample(clk.now())

	kv := e.runtimeInfo()
	for k, want := range map[string]string{
		"msgPutTotalTodayNow": "8", "msgGetTotalTodayNow": "8", "msgPutTotalTodayMorning": "0",
		"msgPutTotalYesterdayMorning": "0", "msgGetTotalTodayMorning": "0", "msgGetTotalYesterdayMorning": "0",
		"brokerVersionDesc": "V4_9_8", "brokerActive": "true", "putMessageTimesTotal": "8",
		"putMessageFailedTimes": "0",
		"putTps":                "  ", // two samples: fewer than 10 seconds of them
		"getTotalTps":           "0.0 0.0 0.0", "timerCongestNum": "0", "remainTransientStoreBufferNumbs": "0",
		"bootTimestamp": strconv.FormatInt(t0.UnixMilli(), 10),
		"runtime":       "[ 0 days, 0 hours, 0 minutes, 10 seconds ]",
	} {
		if kv[k] != want {
			t.Errorf("%s = %q, want %q", k, kv[k], want)
		}
	}
	if !strings.HasPrefix(kv["putMessageDistributeTime"], "[<=0ms]:") || kv["putLatency99"] != "0.00" || kv["putMessageEntireTimeMax"] == "" {
		t.Errorf("put latency: max %q distribution %q p99 %q (no minute closed yet)", kv["putMessageEntireTimeMax"], kv["putMessageDistributeTime"], kv["putLatency99"])
	}
	for _, k := range []string{"getMissTps", "getFoundTps", "getTransferredTps", "getTransferedTps", "commitLogDiskRatio",
		"consumeQueueDiskRatio", "commitLogMinOffset", "commitLogMaxOffset", "dispatchBehindBytes", "pageCacheLockTimeMills",
		"earliestMessageTimeStamp", "startAcceptSendRequestTimeStamp", "timerReadBehind", "timerOffsetBehind",
		"timerEnqueueTps", "timerDequeueTps", "remainHowManyDataToFlush", "sendThreadPoolQueueSize",
		"sendThreadPoolQueueCapacity", "pullThreadPoolQueueSize", "pullThreadPoolQueueCapacity",
		"litePullThreadPoolQueueSize", "litePullThreadPoolQueueCapacity", "queryThreadPoolQueueSize",
		"queryThreadPoolQueueCapacity", "ackThreadPoolQueueSize", "ackThreadPoolQueueCapacity",
		"sendThreadPoolQueueHeadWaitTimeMills", "pullThreadPoolQueueHeadWaitTimeMills",
		"queryThreadPoolQueueHeadWaitTimeMills", "litePullThreadPoolQueueHeadWaitTimeMills",
		"ackThreadPoolQueueHeadWaitTimeMills", "EndTransactionQueueSize", "EndTransactionThreadPoolQueueCapacity",
		// rocketmq-exporter parses these two and drops every brokeruntime family without them.
		"getMessageEntireTimeMax", "dispatchMaxBuffer"} {
		if _, ok := kv[k]; !ok {
			t.Errorf("runtime info lacks %s", k)
		}
	}
	if avg, err := strconv.ParseFloat(kv["putMessageAverageSize"], 64); err != nil || avg <= 30 ||
		kv["putMessageSizeTotal"] != strconv.FormatUint(putBytes, 10) {
		t.Errorf("putMessageAverageSize %q putMessageSizeTotal %q, want %d bytes", kv["putMessageAverageSize"], kv["putMessageSizeTotal"], putBytes)
	}
	if !regexp.MustCompile(`^Total : [0-9.]+ [KMGTPE]iB, Free : [0-9.]+ ([KMGTPE]i)?B\.$`).MatchString(kv["commitLogDirCapacity"]) {
		t.Errorf("commitLogDirCapacity = %q", kv["commitLogDirCapacity"])
	}

	view := func(name, key string) (protocol.BrokerStatsData, int32, string) {
		r := e.call(protocol.ViewBrokerStatsData, map[string]string{"statsName": name, "statsKey": key}, nil)
		var d protocol.BrokerStatsData
		if r.Code == protocol.Success {
			must(t, protocol.UnmarshalFastJSON(r.Body, &d))
		}
		return d, r.Code, r.Remark
	}
	d, code, remark := view("TOPIC_PUT_NUMS", "T")
	if code != protocol.Success || d.StatsMinute.Sum != 8 || d.StatsMinute.Tps != 0.8 || d.StatsMinute.Avgpt != 8.0/6 {
		t.Fatalf("TOPIC_PUT_NUMS T: %d %s %+v, want sum 8 tps 0.8 avgpt 8/6", code, remark, d.StatsMinute)
	}
	if d.StatsDay.Sum != 0 {
		t.Fatalf("TOPIC_PUT_NUMS T day %+v: the topic appeared after the hourly sampling", d.StatsDay)
	}
	d, code, remark = view("GROUP_GET_NUMS", "T@g")
	if code != protocol.Success || d.StatsMinute.Sum != 8 || d.StatsMinute.Avgpt != 8 {
		t.Fatalf("GROUP_GET_NUMS T@g: %d %s %+v, want sum 8 in one pull", code, remark, d.StatsMinute)
	}
	d, code, _ = view("BROKER_PUT_NUMS", e.cfg.BrokerClusterName)
	if code != protocol.Success || d.StatsMinute.Sum != 8 || d.StatsMinute.Avgpt != 0 {
		t.Fatalf("BROKER_PUT_NUMS: %d %+v", code, d.StatsMinute)
	}
	if _, code, remark = view("TOPIC_PUT_NUMS", "Nope"); code != protocol.SystemError || remark != "The stats <TOPIC_PUT_NUMS> <Nope> not exist" {
		t.Fatalf("unknown key: %d %q", code, remark)
	}
	if r := e.call(protocol.ViewBrokerStatsData, map[string]string{"statsName": "TOPIC_PUT_NUMS"}, nil); r.Code != protocol.SystemError ||
		!strings.Contains(r.Remark, "statsKey") {
		t.Fatalf("missing statsKey: %d %q", r.Code, r.Remark)
	}

	// consumeTps: 8 messages over 10 s, in GET_CONSUME_STATS and, once the
	// group has an offset on the topic, GET_BROKER_CONSUME_STATS.
	gh := protocol.GetConsumeStatsRequestHeader{ConsumerGroup: "g", Topic: "T"}
	r := e.call(protocol.GetConsumeStats, protocol.Ext(&gh), nil)
	if r.Code != protocol.Success || !strings.Contains(string(r.Body), `"consumeTps":0.8`) {
		t.Fatalf("GET_CONSUME_STATS: %d %s %s", r.Code, r.Remark, r.Body)
	}
	commitOffset(t, e, "g", "T", 0, 8)
	r = e.call(protocol.GetBrokerConsumeStats, map[string]string{"isOrder": "false"}, nil)
	if r.Code != protocol.Success || !strings.Contains(string(r.Body), `"consumeTps":0.8`) {
		t.Fatalf("GET_BROKER_CONSUME_STATS: %d %s %s", r.Code, r.Remark, r.Body)
	}
}
