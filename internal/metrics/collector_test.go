package metrics

import (
	"testing"
	"time"
)

// testState is a broker with one business topic T (4 queues), g1's retry
// and DLQ topics, a system topic, an online group g1 with two clients
// and offsets, and two producers.
func testState() (*fakeSource, *fakeCounts) {
	src := &fakeSource{
		topics: []Topic{
			{Name: "T", ReadQueues: 4, WriteQueues: 4, Perm: 6, MessageType: "fifo"},
			{Name: "%RETRY%g1", ReadQueues: 1, WriteQueues: 1, Perm: 6},
			{Name: "%DLQ%g1", ReadQueues: 1, WriteQueues: 1, Perm: 6},
			{Name: "SYS", ReadQueues: 1, WriteQueues: 1, Perm: 6, System: true},
		},
		max:    map[string][]int64{"T": {10, 5, 0, 3}, "%RETRY%g1": {2}, "%DLQ%g1": {1}},
		stored: map[string]int64{"T": 1_000_000},
		offsets: map[[2]string]map[int32]int64{
			{"g1", "T"}:         {0: 4, 1: 5},
			{"g1", "%RETRY%g1"}: {0: 1},
		},
		groups: []ConsumerGroup{{
			Name: "g1", Topics: []string{"T", "%RETRY%g1"}, ConsumeMode: "PUSH", MessageModel: "CLUSTERING",
			Clients: []Client{
				{Group: "g1", Addr: "10.0.0.1:1", Language: "JAVA", Version: 409},
				{Group: "g1", Addr: "10.0.0.2:2", Language: "GO", Version: 409},
			},
		}},
		producers: []Client{{Group: "pg", Addr: "10.0.0.3:3", Language: "JAVA", Version: 479}, {Group: "pg", Addr: "10.0.0.4:4", Language: "JAVA", Version: 479}},
		store: StoreStats{
			CommitLogMinOffset: 0, CommitLogMaxOffset: 4096, FlushBehindBytes: 100, DispatchBehind: 7,
			DiskUsedBytes: 1 << 30, DiskTotalBytes: 4 << 30, CommitLogDiskRatio: 0.25, ConsumeQueueDiskRatio: 0.25,
			EarliestMessageTime: 1_000_000, TimerEnabled: true, TimerEnqueued: 3, TimerDelivered: 2,
			TimerEnqueueBehind: 1, TimerEnqueueLatencyMs: 50, TimerDequeueBehind: 2, TimerDequeueLatencyS: 1,
			TimerSnapshot:  []TimerBound{{5, 1}, {60, 0}, {86400, 2}},
			TimingMessages: map[string]int64{"T": 1},
		},
		procs: []Processor{{Name: "send", Queued: 2}, {Name: "pull", Queued: 1}},
	}
	counts := &fakeCounts{
		put: map[string][2]uint64{"T": {18, 1800}},
		get: map[[2]string][2]uint64{{"g1", "T"}: {9, 900}},
	}
	return src, counts
}

func newTestCollector(src Source, counts Counts, clk *fakeClock) *Collector {
	return NewCollector(Config{
		Cluster: "c1", BrokerName: "b1", BrokerAddr: "10.0.0.9:10911", BrokerPermission: 6, BrokerVersion: 409,
		BootTime: time.UnixMilli(900_000), Source: src, Counts: counts, Now: clk.now,
	})
}

func TestLagFollowsConsumerLagCalculator(t *testing.T) {
	src, _ := testState()
	clk := &fakeClock{t: time.UnixMilli(1_060_000)}
	mfs := gather(t, newTestCollector(src, nil, clk))
	g := []string{"consumer_group=g1", "topic=T", "is_retry=false", "is_system=false", "cluster=c1", "node_type=broker", "node_id=b1"}
	// Queue 0: 10-4; queue 1: consumed; queue 2: empty; queue 3: no
	// committed offset, so no lag (Java counts from the max offset).
	if v := value(t, mfs, "rocketmq_consumer_lag_messages", g...); v != 6 {
		t.Errorf("lag %v, want 6", v)
	}
	// The first unconsumed message (queue 0, offset 4) was stored at
	// 1_000_004 ms.
	if v := value(t, mfs, "rocketmq_consumer_lag_latency", g...); v != 59_996 {
		t.Errorf("lag latency %v, want 59996", v)
	}
	if v := value(t, mfs, "rocketmq_consumer_ready_messages", g...); v != 6 {
		t.Errorf("ready %v, want 6", v)
	}
	if v := value(t, mfs, "rocketmq_consumer_inflight_messages", g...); v != 0 {
		t.Errorf("inflight %v, want 0", v)
	}
	// Retry topics are not reported on their own (Java skips them).
	for _, m := range mfs["rocketmq_consumer_lag_messages"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "topic" && lp.GetValue() != "T" {
				t.Errorf("lag reported for topic %s", lp.GetValue())
			}
		}
	}
	if v := value(t, mfs, "rocketmq_consumer_connections", "consumer_group=g1", "language=go", "version=v4_9_8", "consume_mode=push", "protocol_type=remoting", "is_system=false"); v != 1 {
		t.Errorf("go consumer connections %v, want 1", v)
	}
	if v := value(t, mfs, "rocketmq_producer_connections", "language=java", "version=v5_3_3", "protocol_type=remoting"); v != 2 {
		t.Errorf("producer connections %v, want 2", v)
	}
	if v := value(t, mfs, "rocketmq_storage_size", "storage_type=local", "storage_medium=disk"); v != 1<<30 {
		t.Errorf("storage size %v", v)
	}
	if v := value(t, mfs, "rocketmq_storage_message_reserve_time"); v != 60_000 {
		t.Errorf("reserve time %v, want 60000", v)
	}
	if v := value(t, mfs, "rocketmq_processor_watermark", "processor=send"); v != 2 {
		t.Errorf("send watermark %v, want 2", v)
	}
}

func TestExporterOffsetsAndDiffs(t *testing.T) {
	src, _ := testState()
	clk := &fakeClock{t: time.UnixMilli(1_060_000)}
	mfs := gather(t, newTestCollector(src, nil, clk))
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"rocketmq_producer_offset", []string{"cluster=c1", "broker=b1", "topic=T"}, 18},
		{"rocketmq_topic_retry_offset", []string{"topic=%RETRY%g1"}, 2},
		{"rocketmq_topic_dlq_offset", []string{"group=g1"}, 1},
		{"rocketmq_consumer_offset", []string{"topic=T", "group=g1"}, 9},
		// GET_CONSUME_STATS counts a queue without offset from 0.
		{"rocketmq_group_diff", []string{"group=g1", "topic=T", "countOfOnlineConsumers=2", "msgModel=1"}, 9},
		{"rocketmq_group_retrydiff", []string{"group=g1", "topic=%RETRY%g1"}, 1},
		{"rocketmq_group_count", []string{"group=g1", "caddr=10.0.0.1:1,10.0.0.2:2"}, 2},
		{"rocketmq_group_get_latency_by_storetime", []string{"topic=T", "group=g1"}, 60_000},
		{"rocketmq_brokeruntime_commitlog_maxoffset", []string{"cluster=c1", "brokerIP=10.0.0.9:10911", "brokerHost=b1", "des=V4_9_8", "boottime=900000", "broker_version=409"}, 4096},
		{"rocketmq_brokeruntime_commitlogdir_capacity_free", nil, 3 << 30},
		{"rocketmq_brokeruntime_dispatch_behind_bytes", nil, 7},
	} {
		if v := value(t, mfs, c.name, c.labels...); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
}

// TestCountFamiliesNeedCounts: without Counts the count-based families
// are absent, not zero.
func TestCountFamiliesNeedCounts(t *testing.T) {
	src, _ := testState()
	mfs := gather(t, newTestCollector(src, nil, &fakeClock{t: time.UnixMilli(1_060_000)}))
	for _, name := range []string{"rocketmq_messages_in_total", "rocketmq_producer_tps", "rocketmq_brokeruntime_msg_put_total_today_now"} {
		if mfs[name] != nil {
			t.Errorf("%s exported without Counts", name)
		}
	}
}

// TestRatesFromCounts: the TPS families are the per-second rates between
// two samples one window apart; a scrape in between keeps the last rates.
func TestRatesFromCounts(t *testing.T) {
	src, counts := testState()
	clk := &fakeClock{t: time.UnixMilli(1_060_000)}
	c := newTestCollector(src, counts, clk)
	if mfs := gather(t, c); mfs["rocketmq_producer_tps"] != nil {
		t.Fatal("rates before a window passed")
	}
	counts.put["T"] = [2]uint64{18 + 200, 1800 + 20000}
	counts.get[[2]string{"g1", "T"}] = [2]uint64{9 + 100, 900 + 10000}
	clk.t = clk.t.Add(DefaultRateWindow)
	mfs := gather(t, c)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"rocketmq_producer_tps", []string{"topic=T"}, 20},
		{"rocketmq_producer_message_size", []string{"topic=T"}, 2000},
		{"rocketmq_consumer_tps", []string{"topic=T", "group=g1"}, 10},
		{"rocketmq_consumer_message_size", []string{"topic=T", "group=g1"}, 1000},
		{"rocketmq_broker_tps", []string{"brokerIP=10.0.0.9:10911"}, 20},
		{"rocketmq_broker_qps", nil, 10},
		{"rocketmq_messages_in_total", []string{"topic=T", "message_type=fifo", "is_system=false"}, 218},
		{"rocketmq_throughput_out_total", []string{"topic=T", "consumer_group=g1", "is_retry=false"}, 10900},
		{"rocketmq_brokeruntime_msg_put_total_today_now", nil, 218},
		{"rocketmq_brokeruntime_put_message_average_size", nil, 100},
	} {
		if v := value(t, mfs, tc.name, tc.labels...); v != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, v, tc.want)
		}
	}
	// Half a window later: same rates, although the counts moved.
	counts.put["T"] = [2]uint64{10000, 10000}
	clk.t = clk.t.Add(DefaultRateWindow / 2)
	if v := value(t, gather(t, c), "rocketmq_producer_tps", "topic=T"); v != 20 {
		t.Errorf("rate within the window %v, want the last one (20)", v)
	}
}

// exporterFamilies are the rocketmq-exporter families Grafana dashboard
// 10477 reads that rocketd exports; the TPS ones need Counts.
var exporterFamilies = []string{
	"rocketmq_producer_tps", "rocketmq_producer_message_size", "rocketmq_consumer_tps",
	"rocketmq_consumer_message_size", "rocketmq_group_diff", "rocketmq_group_retrydiff", "rocketmq_group_dlqdiff",
	"rocketmq_group_count", "rocketmq_producer_offset", "rocketmq_consumer_offset", "rocketmq_topic_retry_offset",
	"rocketmq_topic_dlq_offset", "rocketmq_group_get_latency_by_storetime", "rocketmq_broker_tps", "rocketmq_broker_qps",
	"rocketmq_brokeruntime_msg_put_total_today_now", "rocketmq_brokeruntime_msg_gettotal_today_now",
	"rocketmq_brokeruntime_commitlog_disk_ratio", "rocketmq_brokeruntime_consumequeue_disk_ratio",
	"rocketmq_brokeruntime_dispatch_behind_bytes", "rocketmq_brokeruntime_put_message_size_total",
	"rocketmq_brokeruntime_put_message_average_size", "rocketmq_brokeruntime_commitlog_maxoffset",
	"rocketmq_brokeruntime_commitlog_minoffset", "rocketmq_brokeruntime_earliest_message_timestamp",
	"rocketmq_brokeruntime_commitlogdir_capacity_free", "rocketmq_brokeruntime_commitlogdir_capacity_total",
	"rocketmq_brokeruntime_remain_howmanydata_toflush", "rocketmq_brokeruntime_send_threadpool_queue_size",
	"rocketmq_brokeruntime_pull_threadpoolqueue_size",
}

// rip46Families are the RocketMQ 5 families rocketd exports.
var rip46Families = []string{
	"rocketmq_processor_watermark", "rocketmq_broker_permission", "rocketmq_topic_number",
	"rocketmq_consumer_group_number", "rocketmq_messages_in_total", "rocketmq_messages_out_total",
	"rocketmq_throughput_in_total", "rocketmq_throughput_out_total", "rocketmq_producer_connections",
	"rocketmq_consumer_connections", "rocketmq_consumer_lag_messages", "rocketmq_consumer_lag_latency",
	"rocketmq_consumer_inflight_messages", "rocketmq_consumer_queueing_latency", "rocketmq_consumer_ready_messages",
	"rocketmq_storage_size", "rocketmq_storage_flush_behind_bytes", "rocketmq_storage_dispatch_behind_bytes",
	"rocketmq_storage_message_reserve_time", "rocketmq_timer_enqueue_total", "rocketmq_timer_dequeue_total",
	"rocketmq_timer_enqueue_lag", "rocketmq_timer_enqueue_latency", "rocketmq_timer_dequeue_lag",
	"rocketmq_timer_dequeue_latency", "rocketmq_timing_messages",
	// Events
	"rocketmq_half_messages", "rocketmq_commit_messages_total", "rocketmq_rollback_messages_total",
	"rocketmq_finish_message_latency", "rocketmq_send_to_dlq_messages_total", "rocketmq_pop_revive_retry_messages_total",
	"rocketmq_pop_revive_in_message_total", "rocketmq_pop_revive_out_message_total",
	// Source.ReviveLags, StoreStats.TimerSnapshot
	"rocketmq_pop_revive_lag", "rocketmq_pop_revive_latency", "rocketmq_timer_message_snapshot",
}

// TestEveryFamilyPresent: with Counts wired and a window passed, every
// family is exported.
func TestEveryFamilyPresent(t *testing.T) {
	src, counts := testState()
	src.offsets[[2]string{"g1", "%DLQ%g1"}] = map[int32]int64{0: 0}
	clk := &fakeClock{t: time.UnixMilli(1_060_000)}
	c := newTestCollector(src, counts, clk)
	gather(t, c)
	clk.t = clk.t.Add(DefaultRateWindow)
	ev := NewEvents(BaseLabels("c", "b"))
	ev.HalfPut("T")
	ev.Finished("T", true, 0, 1000)
	ev.SentToDLQ("g1", "T", false)
	ev.RevivedToRetry("g1", "T", "PUT_OK")
	ev.RevivePut("g1", "T", true, "PUT_OK")
	ev.ReviveGot("g1", "T", 3, false)
	src.revive = []ReviveLag{{QueueID: 3, Messages: 4, LatencyMs: 1500}}
	mfs := gather(t, c, ev)
	for _, w := range []struct {
		name   string
		labels []string
		v      float64
	}{
		{"rocketmq_pop_revive_in_message_total", []string{"consumer_group=g1", "topic=T", "revive_message_type=CK", "put_status=PUT_OK"}, 1},
		{"rocketmq_pop_revive_out_message_total", []string{"consumer_group=g1", "topic=T", "queue_id=3", "revive_message_type=ACK"}, 1},
		{"rocketmq_pop_revive_lag", []string{"queue_id=3"}, 4},
		{"rocketmq_pop_revive_latency", []string{"queue_id=3"}, 1500},
		{"rocketmq_timer_message_snapshot", []string{"timer_bound_s=5", "storage_type=local", "storage_medium=disk"}, 1},
		{"rocketmq_timer_message_snapshot", []string{"timer_bound_s=86400"}, 2},
	} {
		if got := value(t, mfs, w.name, w.labels...); got != w.v {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.v)
		}
	}
	if got := value(t, mfs, "rocketmq_timing_messages", "topic=T", "storage_type=local", "storage_medium=disk"); got != 1 {
		t.Errorf("rocketmq_timing_messages{topic=T} = %v, want 1", got)
	}
	for _, name := range append(append([]string(nil), exporterFamilies...), rip46Families...) {
		t.Run(name, func(t *testing.T) {
			if mfs[name] == nil || len(mfs[name].GetMetric()) == 0 {
				t.Errorf("family %s missing", name)
			}
		})
	}
}
