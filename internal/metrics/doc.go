// Package metrics exports the broker's metrics for Prometheus: an HTTP
// listener (Server) serving /metrics, and /debug/pprof/ when enabled, from
// a private registry (NewRegistry) holding:
//
//   - Collector: the broker's state read at scrape time through Source
//     (and Counts: the broker passes its runtime statistics), under two naming schemes:
//     RocketMQ 5's (RIP-46; BrokerMetricsManager, ConsumerLagCalculator,
//     DefaultStoreMetricsManager) and rocketmq-exporter's (the families
//     Grafana dashboard 10477 reads).
//   - RPC: rocketmq_rpc_latency, fed by the remoting server's
//     RequestObserver, allocation-free per request.
//   - the Go runtime and process collectors (go_*, process_*).
//
// # Endpoint
//
// GET /metrics: the Prometheus text (or protobuf) exposition. At most 4
// scrapes at once and 20 s each (then 503). Other methods: 405; unknown
// paths: 404; a malformed request: 400; headers over 8 KiB: 431; a body
// over 1 KiB: 413. Read, write and idle timeouts bound slow clients. With
// metricsPprofEnable, GET /debug/pprof/... serves net/http/pprof on the
// same listener (this server's own mux, never http.DefaultServeMux).
//
// # RIP-46 families
//
// Every series carries cluster (brokerClusterName), node_type=broker and
// node_id (brokerName). Java adds aggregation=delta only with
// metricsInDelta; rocketd exports cumulative values, never that label.
// Names are Java's instrument names; the OpenTelemetry Prometheus exporter
// Java uses may append a unit suffix (_milliseconds), rocketd does not.
//
//	family                                   labels                                      source
//	rocketmq_processor_watermark             processor                                   request family queue lengths
//	rocketmq_broker_permission               -                                           brokerPermission
//	rocketmq_topic_number                    -                                           topic table
//	rocketmq_consumer_group_number           -                                           subscription group table
//	rocketmq_producer_connections            language, version, protocol_type            producer channels
//	rocketmq_consumer_connections            consumer_group, language, version,          consumer channels
//	                                         consume_mode, protocol_type, is_system
//	rocketmq_consumer_lag_messages           consumer_group, topic, is_retry, is_system  max offset - committed offset
//	rocketmq_consumer_lag_latency            (same)                                      now - store time of the first unconsumed message (ms)
//	rocketmq_consumer_inflight_messages      (same)                                      0: no pull offsets apart from the committed ones
//	rocketmq_consumer_queueing_latency       (same)                                      as lag_latency (pull offset = committed offset)
//	rocketmq_consumer_ready_messages         (same)                                      as lag_messages
//	rocketmq_storage_size                    storage_type=local, storage_medium=disk     bytes used on the store's disk
//	rocketmq_storage_flush_behind_bytes      (same)                                      CommitLog written - flushed
//	rocketmq_storage_dispatch_behind_bytes   (same)                                      CommitLog committed - dispatched
//	rocketmq_storage_message_reserve_time    (same)                                      now - oldest message's store time (ms)
//	rocketmq_timer_enqueue_total             (same)                                      timer entries read since start
//	rocketmq_timer_dequeue_total             (same)                                      timer messages delivered since start
//	rocketmq_timer_enqueue_lag               (same)                                      timer-queue messages not read into the timer yet
//	rocketmq_timer_enqueue_latency           (same)                                      now - store time of the first of them (ms; 0: none)
//	rocketmq_timer_dequeue_lag               (same)                                      held messages loaded for delivery, not delivered yet
//	rocketmq_timer_dequeue_latency           (same)                                      (now - delivery watermark) / 1000 (Java's getDequeueBehind: seconds)
//	rocketmq_timing_messages                 storage_type, storage_medium, topic         held timer messages per real topic (the timer's timermetrics counts)
//	rocketmq_timer_message_snapshot          storage_type, storage_medium, timer_bound_s held timer messages due in [now + previous bound, now + bound)
//	                                                                                     seconds, bounds 5 60 300 900 3600 14400 28800 86400 (below)
//	rocketmq_half_messages                   topic                                       Events: half messages neither committed, rolled back nor discarded
//	rocketmq_commit_messages_total           topic                                       Events: END_TRANSACTION commits
//	rocketmq_rollback_messages_total         topic                                       Events: END_TRANSACTION rollbacks
//	rocketmq_finish_message_latency          topic                                       Events: per commit, (now - half's born time) / 1000; buckets
//	  (histogram)                                                                        5, 60, 600, 3600, 43200, 86400 (Java's: seconds, unit declared "ms")
//	rocketmq_send_to_dlq_messages_total      consumer_group, topic, is_system            Events: messages moved to a DLQ (below)
//	rocketmq_pop_revive_retry_messages_total consumer_group, topic, put_status           Events: revived messages put into their retry topic
//	rocketmq_pop_revive_in_message_total     consumer_group, topic, revive_message_type, Events: check point (CK) and ack (ACK) records put
//	                                         put_status                                  into the revive log (below)
//	rocketmq_pop_revive_out_message_total    consumer_group, topic, queue_id,            Events: the same records read back by the revive service
//	                                         revive_message_type
//	rocketmq_pop_revive_lag                  queue_id                                    Source.ReviveLags: revive records not read yet + check points
//	                                                                                     due whose revive failed (below)
//	rocketmq_pop_revive_latency              queue_id                                    (same): how long the oldest of them has waited (ms)
//	rocketmq_rpc_latency (histogram, ms)     protocol_type=remoting, is_long_polling,    each answered request
//	                                         request_code, response_code, result
//	rocketmq_messages_in_total               topic, message_type, is_system              Counts
//	rocketmq_throughput_in_total             (same)                                      Counts
//	rocketmq_messages_out_total              topic, consumer_group, is_retry, is_system  Counts
//	rocketmq_throughput_out_total            (same)                                      Counts
//	rocketmq_message_size (histogram, bytes) topic, message_type, is_system              Counts implementing MessageSizes
//
// Lag follows ConsumerLagCalculator for PULL/PUSH groups: only groups with
// online consumers, each subscribed topic except %RETRY% ones, queue by
// queue; a queue without a committed offset has no lag. request_code and
// response_code are Java's constant names in lower case
// (RemotingHelper.getRequestCodeDesc); a code Java does not know is
// labelled "other" (Java: its number), which bounds the series a client
// can create. Requests whose reply is deferred (held pulls) are not
// observed, so is_long_polling is always false and result is success or
// oneway.
//
// Events counts where things happen (atomic adds on a per-topic cell, no
// lock once the cell exists). Half messages are counted by their
// REAL_TOPIC: +1 when stored, -1 when committed, rolled back or discarded
// to TRANS_CHECK_MAX_TIME_TOPIC after too many checks (never below 0);
// the broker saves them periodically and at a clean close (HalfCounts,
// AddHalf) and rebuilds them after a crash (SetHalfCounts). DLQ
// sends are counted where a message is stored in %DLQ%group: a send back
// (CONSUMER_SEND_MSG_BACK, which gRPC's ForwardMessageToDeadLetterQueue
// uses too; topic = originTopic), a send to %RETRY%group past its
// reconsume times (topic = the %RETRY% topic, counted at the redirect as
// Java's SendMessageProcessor does) and the POP revive service (topic =
// the popped topic; Java does not count these). Timer lag and latency
// follow TimerMessageStore's getEnqueueBehindMessages / getDequeueBehind;
// the latencies' units are Java's values' (enqueue: ms, dequeue: s).
//
// rocketmq_pop_revive_retry_messages_total counts each put of a revived
// message into its retry topic, stored or not, with the put's status name
// (PUT_OK, ...), as PopReviveService.reviveRetry; topic is the popped
// topic (the check point's).
//
// The other POP families follow PopMetricsManager. revive_in counts
// every revive log put, stored or not, with Java's labels: a pop's check
// point and CHANGE_MESSAGE_INVISIBLETIME's new one are CK, ACK_MESSAGE's
// ack, each BATCH_ACK_MESSAGE entry's bAck record and
// CHANGE_MESSAGE_INVISIBLETIME's ack of the old check point are ACK (Java
// counts the same puts; its ck buffer may merge a check point with its
// acks in memory and put neither, rocketd writes every record). revive_out
// counts each ck, ack and bAck record the revive service reads (again
// after a restart, from its saved position, as Java). Java puts check
// points into the revive queue through its timer wheel, so that they
// arrive when due, and its revive lag is the queue's records past the
// revive offset; rocketd stores them at once and its revive service reads
// every record each round (reviveInterval), keeping the check points not
// due in memory. Its lag is therefore what the revive service has not
// dealt with: records after its read position (between two rounds) plus
// check points due whose revive failed (a retry or DLQ put refused; tried
// again next round); the latency is now minus the store time of the first
// unread record or the revive time of the oldest failed check point,
// whichever is earlier; 0 for a queue not read yet (Java: before its
// first round). Java declares the lag's unit "milliseconds" although it
// is a record count; rocketd names no unit.
//
// Not exported, because rocketd has nothing they could truly measure:
// rocketmq_pop_checkpoint_buffer_size and rocketmq_pop_offset_buffer_size
// (Java's PopBufferMergeService holds check points and acks in memory
// before writing them to the revive log; rocketd writes each one at once,
// waiting for the store, and has no such buffer) and
// rocketmq_pop_buffer_scan_time_consume (the duration of that buffer's
// scan).
//
// rocketmq_timer_message_snapshot is Java's DefaultStoreMetricsManager
// gauge over TimerMetrics' timerDist: for each bound, the messages in the
// wheel slots from the previous bound (0 for the first) to it, counted
// from the current second. rocketd files messages in bucket files, not
// per-second slots, so its timer keeps per-second counts of the next 24 h
// in memory (package broker/timer, snapshot.go: 4 bytes a second, ~360
// KB once a timer message was held) and fills them from each bucket file
// as the bucket comes within 24 h; after a start the family is left out
// until the bucket files within 24 h have been read (one per timer
// round). A recalled message stays counted until its time.
//
// # rocketmq-exporter families
//
// Labels are the exporter's: broker is brokerName, brokerIP the broker's
// address; the brokeruntime_* families carry cluster, brokerIP,
// brokerHost (brokerName), des (version name), boottime (ms) and
// broker_version (MQVersion ordinal).
//
//	rocketmq_producer_offset{cluster,broker,topic}            sum of the topic's queue max offsets
//	rocketmq_topic_retry_offset{cluster,broker,topic}         the same for %RETRY% topics
//	rocketmq_topic_dlq_offset{cluster,broker,group}           the same for %DLQ% topics
//	rocketmq_consumer_offset{cluster,broker,topic,group}      sum of committed offsets
//	rocketmq_group_diff{group,topic,countOfOnlineConsumers,msgModel}
//	                                                          max - committed over the topic's queues (a queue without
//	                                                          offset counts from 0, as GET_CONSUME_STATS); clustering only
//	rocketmq_group_retrydiff, rocketmq_group_dlqdiff          the same for %RETRY% / %DLQ% topics
//	rocketmq_group_count{caddr,localaddr,group}               online consumers (both address labels hold the
//	                                                          channels' addresses: rocketd keeps no client ids there)
//	rocketmq_group_get_latency_by_storetime{cluster,broker,topic,group}
//	rocketmq_brokeruntime_{commitlog_disk_ratio, consumequeue_disk_ratio, dispatch_behind_bytes,
//	  commitlog_maxoffset, commitlog_minoffset, earliest_message_timestamp, commitlogdir_capacity_free,
//	  commitlogdir_capacity_total, remain_howmanydata_toflush, send_threadpool_queue_size,
//	  pull_threadpoolqueue_size}
//
// With Counts: rocketmq_brokeruntime_{msg_put_total_today_now,
// msg_gettotal_today_now, put_message_size_total,
// put_message_average_size} (totals since start), and the rates
// rocketmq_producer_tps and rocketmq_producer_message_size
// {cluster,broker,topic}, rocketmq_consumer_tps and
// rocketmq_consumer_message_size {cluster,broker,topic,group},
// rocketmq_broker_tps and rocketmq_broker_qps {cluster,brokerIP,broker}:
// per-second rates between two samples of the counts at least RateWindow
// (10 s) apart, taken by scrapes (the first scrape only samples).
package metrics
