package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

var errBucketCount = errors.New("metrics: message size buckets do not match MessageSizeBuckets")

// descs are the collector's families. The RIP-46 ones carry the base
// labels (cluster, node_type, node_id) as constant labels; the
// exporter-compatible ones carry the exporter's own label names.
type descs struct {
	// RIP-46 (BrokerMetricsConstant, DefaultStoreMetricsConstant).
	watermark, brokerPermission, topicNumber, groupNumber             *prometheus.Desc
	messagesIn, messagesOut, throughputIn, throughputOut, messageSize *prometheus.Desc
	producerConns, consumerConns                                      *prometheus.Desc
	lagMessages, lagLatency, inflight, queueingLatency, ready         *prometheus.Desc
	storageSize, flushBehind, dispatchBehind, reserveTime             *prometheus.Desc
	timerEnqueueTotal, timerDequeueTotal                              *prometheus.Desc
	timerEnqueueLag, timerEnqueueLatency, timingMessages              *prometheus.Desc
	timerDequeueLag, timerDequeueLatency, timerSnapshot               *prometheus.Desc
	// RIP-46 POP (PopMetricsConstant).
	popReviveLag, popReviveLatency *prometheus.Desc
	// rocketmq-exporter (RMQMetricsCollector).
	producerTPS, producerSize, consumerTPS, consumerSize              *prometheus.Desc
	brokerTPS, brokerQPS                                              *prometheus.Desc
	groupDiff, groupRetryDiff, groupDLQDiff, groupCount               *prometheus.Desc
	producerOffset, consumerOffset, topicRetryOffset, topicDLQOffset  *prometheus.Desc
	groupLatencyByStore                                               *prometheus.Desc
	rtPutTotal, rtGetTotal, rtPutSizeTotal, rtPutAvgSize              *prometheus.Desc
	rtCommitLogDiskRatio, rtConsumeQueueDiskRatio, rtDispatchBehind   *prometheus.Desc
	rtCommitLogMaxOffset, rtCommitLogMinOffset, rtEarliestMessageTime *prometheus.Desc
	rtCapacityFree, rtCapacityTotal, rtRemainToFlush                  *prometheus.Desc
	rtSendQueueSize, rtPullQueueSize                                  *prometheus.Desc
}

func newDescs(base prometheus.Labels) descs {
	rip := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, base)
	}
	exp := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	lag := []string{"consumer_group", "topic", "is_retry", "is_system"}
	storage := []string{"storage_type", "storage_medium"}
	topicNums := []string{"cluster", "broker", "topic"}
	groupNums := []string{"cluster", "broker", "topic", "group"}
	diff := []string{"group", "topic", "countOfOnlineConsumers", "msgModel"}
	brokerNums := []string{"cluster", "brokerIP", "broker"}
	rt := []string{"cluster", "brokerIP", "brokerHost", "des", "boottime", "broker_version"}
	return descs{
		watermark:        rip("rocketmq_processor_watermark", "Request processor watermark", "processor"),
		brokerPermission: rip("rocketmq_broker_permission", "Broker permission"),
		topicNumber:      rip("rocketmq_topic_number", "Active topic number"),
		groupNumber:      rip("rocketmq_consumer_group_number", "Active subscription group number"),
		messagesIn:       rip("rocketmq_messages_in_total", "Total number of incoming messages", "topic", "message_type", "is_system"),
		throughputIn:     rip("rocketmq_throughput_in_total", "Total traffic of incoming messages", "topic", "message_type", "is_system"),
		messagesOut:      rip("rocketmq_messages_out_total", "Total number of outgoing messages", "topic", "consumer_group", "is_retry", "is_system"),
		throughputOut:    rip("rocketmq_throughput_out_total", "Total traffic of outgoing messages", "topic", "consumer_group", "is_retry", "is_system"),
		messageSize:      rip("rocketmq_message_size", "Incoming messages size", "topic", "message_type", "is_system"),
		producerConns:    rip("rocketmq_producer_connections", "Producer connections", "language", "version", "protocol_type"),
		consumerConns: rip("rocketmq_consumer_connections", "Consumer connections",
			"consumer_group", "language", "version", "consume_mode", "protocol_type", "is_system"),
		lagMessages:         rip("rocketmq_consumer_lag_messages", "Consumer lag messages", lag...),
		lagLatency:          rip("rocketmq_consumer_lag_latency", "Consumer lag time (milliseconds)", lag...),
		inflight:            rip("rocketmq_consumer_inflight_messages", "Consumer inflight messages", lag...),
		queueingLatency:     rip("rocketmq_consumer_queueing_latency", "Consumer queueing time (milliseconds)", lag...),
		ready:               rip("rocketmq_consumer_ready_messages", "Consumer ready messages", lag...),
		storageSize:         rip("rocketmq_storage_size", "Broker storage size (bytes)", storage...),
		flushBehind:         rip("rocketmq_storage_flush_behind_bytes", "Broker flush behind bytes", storage...),
		dispatchBehind:      rip("rocketmq_storage_dispatch_behind_bytes", "Broker dispatch behind bytes", storage...),
		reserveTime:         rip("rocketmq_storage_message_reserve_time", "Broker message reserve time (milliseconds)", storage...),
		timerEnqueueTotal:   rip("rocketmq_timer_enqueue_total", "Total number of timer enqueue", storage...),
		timerDequeueTotal:   rip("rocketmq_timer_dequeue_total", "Total number of timer dequeue", storage...),
		timerEnqueueLag:     rip("rocketmq_timer_enqueue_lag", "Timer enqueue messages lag", storage...),
		timerEnqueueLatency: rip("rocketmq_timer_enqueue_latency", "Timer enqueue latency (milliseconds)", storage...),
		timerDequeueLag:     rip("rocketmq_timer_dequeue_lag", "Timer dequeue messages lag", storage...),
		timerDequeueLatency: rip("rocketmq_timer_dequeue_latency", "Timer dequeue latency", storage...),
		timingMessages:      rip("rocketmq_timing_messages", "Current message number in timing", append(storage, "topic")...),
		timerSnapshot: rip("rocketmq_timer_message_snapshot", "Timer message distribution snapshot, only count timing messages in 24h.",
			append(storage, "timer_bound_s")...),
		popReviveLag:     rip("rocketmq_pop_revive_lag", "The processing lag of revive topic", "queue_id"),
		popReviveLatency: rip("rocketmq_pop_revive_latency", "The processing latency of revive topic (milliseconds)", "queue_id"),

		producerTPS:         exp("rocketmq_producer_tps", "TopicPutNums", topicNums...),
		producerSize:        exp("rocketmq_producer_message_size", "TopicPutMessageSize", topicNums...),
		consumerTPS:         exp("rocketmq_consumer_tps", "GroupGetNums", groupNums...),
		consumerSize:        exp("rocketmq_consumer_message_size", "GroupGetMessageSize", groupNums...),
		brokerTPS:           exp("rocketmq_broker_tps", "BrokerPutNums", brokerNums...),
		brokerQPS:           exp("rocketmq_broker_qps", "BrokerGetNums", brokerNums...),
		groupDiff:           exp("rocketmq_group_diff", "GroupDiff", diff...),
		groupRetryDiff:      exp("rocketmq_group_retrydiff", "GroupRetryDiff", diff...),
		groupDLQDiff:        exp("rocketmq_group_dlqdiff", "GroupDLQDiff", diff...),
		groupCount:          exp("rocketmq_group_count", "GroupCount", "caddr", "localaddr", "group"),
		producerOffset:      exp("rocketmq_producer_offset", "TopicOffset", topicNums...),
		consumerOffset:      exp("rocketmq_consumer_offset", "GroupBrokerTotalOffset", groupNums...),
		topicRetryOffset:    exp("rocketmq_topic_retry_offset", "TopicRetryOffset", topicNums...),
		topicDLQOffset:      exp("rocketmq_topic_dlq_offset", "TopicDLQOffset", "cluster", "broker", "group"),
		groupLatencyByStore: exp("rocketmq_group_get_latency_by_storetime", "GroupGetLatencyByStoreTime", groupNums...),

		rtPutTotal:              exp("rocketmq_brokeruntime_msg_put_total_today_now", "brokerRuntimeMsgPutTotalTodayNow", rt...),
		rtGetTotal:              exp("rocketmq_brokeruntime_msg_gettotal_today_now", "brokerRuntimeMsgGetTotalTodayNow", rt...),
		rtPutSizeTotal:          exp("rocketmq_brokeruntime_put_message_size_total", "brokerRuntimePutMessageSizeTotal", rt...),
		rtPutAvgSize:            exp("rocketmq_brokeruntime_put_message_average_size", "brokerRuntimePutMessageAverageSize", rt...),
		rtCommitLogDiskRatio:    exp("rocketmq_brokeruntime_commitlog_disk_ratio", "brokerRuntimeCommitLogDiskRatio", rt...),
		rtConsumeQueueDiskRatio: exp("rocketmq_brokeruntime_consumequeue_disk_ratio", "brokerRuntimeConsumeQueueDiskRatio", rt...),
		rtDispatchBehind:        exp("rocketmq_brokeruntime_dispatch_behind_bytes", "brokerRuntimeDispatchBehindBytes", rt...),
		rtCommitLogMaxOffset:    exp("rocketmq_brokeruntime_commitlog_maxoffset", "brokerRuntimeCommitLogMaxOffset", rt...),
		rtCommitLogMinOffset:    exp("rocketmq_brokeruntime_commitlog_minoffset", "brokerRuntimeCommitLogMinOffset", rt...),
		rtEarliestMessageTime:   exp("rocketmq_brokeruntime_earliest_message_timestamp", "brokerRuntimeEarliestMessageTimeStamp", rt...),
		rtCapacityFree:          exp("rocketmq_brokeruntime_commitlogdir_capacity_free", "brokerRuntimeCommitLogDirCapacityFree", rt...),
		rtCapacityTotal:         exp("rocketmq_brokeruntime_commitlogdir_capacity_total", "brokerRuntimeCommitLogDirCapacityTotal", rt...),
		rtRemainToFlush:         exp("rocketmq_brokeruntime_remain_howmanydata_toflush", "brokerRuntimeRemainHowManyDataToFlush", rt...),
		rtSendQueueSize:         exp("rocketmq_brokeruntime_send_threadpool_queue_size", "brokerRuntimeSendThreadPoolQueueSize", rt...),
		rtPullQueueSize:         exp("rocketmq_brokeruntime_pull_threadpoolqueue_size", "brokerRuntimePullThreadPoolQueueSizeF", rt...),
	}
}
