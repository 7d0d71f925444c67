// Package stats keeps the broker's runtime statistics as Java's
// BrokerStatsManager, StatsItemSet/StatsItem, StoreStatsService and
// BrokerStats do, for GET_BROKER_RUNTIME_INFO (28), VIEW_BROKER_STATS_DATA
// (315), GET_BROKER_CONSUME_STATS (317) and the metrics and console
// packages.
//
// # What is counted
//
// The processor calls, for every stored send (single, each batch with its
// message count, a committed transaction, a reply) and the broker for
// every delay-level or timer message delivered to its real topic:
// TopicPut(topic, msgs, storedBytes); for a stored send-back: SendBack(group, originTopic); for
// a pull that found messages: GroupGet(group, topic, msgs, bytes,
// latency); for one that found none: GetMiss. A half message counts under
// RMQ_SYS_TRANS_HALF_TOPIC, a system topic, as in Java.
//
// # Items (VIEW_BROKER_STATS_DATA statsName, statsKey)
//
//	TOPIC_PUT_NUMS, TOPIC_PUT_SIZE     topic         value msgs / bytes, times requests
//	GROUP_GET_NUMS, GROUP_GET_SIZE     topic@group   value msgs / bytes, times pulls
//	GROUP_GET_LATENCY                  topic@group   value latency ms, times pulls
//	SNDBCK_PUT_NUMS                    topic@group   value and times: send-backs
//	BROKER_PUT_NUMS, BROKER_GET_NUMS   cluster name  value msgs, no times
//	BROKER_{PUT,GET}_NUMS_WITHOUT_SYSTEM_TOPIC       the same without system topics
//
// Each item is sampled every 10 s (7 samples kept: the minute window),
// every 10 min (7: the hour) and every hour (25: the day); a window's
// snapshot is Java's StatsSnapshot: sum = last - first value, tps =
// sum*1000/(last-first ms), avgpt = sum/(last-first times). The first
// sample of an item is preceded by a zero sample one period earlier, as
// Java's samplingIn* adds.
//
// The broker totals are also sampled every second, 601 samples kept
// (StoreStatsService): putTps, getFoundTps, getMissTps, getTotalTps and
// getTransferredTps are "tps10s tps60s tps600s" over 10, 60 and 600 of
// those samples, each formatted as Java's Double.toString and "" while
// fewer samples exist. At every local midnight the totals without system
// topics are recorded (BrokerStats.record): msgPutTotalTodayMorning
// becomes msgPutTotalYesterdayMorning and the current total the new
// msgPutTotalTodayMorning; msgPutTotalTodayNow is the current total.
// Put latency (PutLatency, the store call of each send) is kept as
// StoreStatsService keeps it: putMessageEntireTimeMax is the longest since
// boot in ms; putMessageDistributeTime ("[<=0ms]:n [0~10ms]:n ... ", 13
// ranges) and putLatency99/999 (findPutMessageEntireTimePX over 1 ms to
// 1 s steps, "%.2f") cover the last complete minute.
//
// Everything starts at 0 when the broker starts: statistics are not
// persisted, as in Java.
//
// # Read API (stable, for the metrics exporter and the console)
//
//	EachTopicPut(fn func(topic string, msgs, bytes uint64))
//	EachGroupGet(fn func(group, topic string, msgs, bytes uint64))
//	BrokerPutTotal() uint64, BrokerGetTotal() uint64
//	GroupGetTPS(group, topic string) float64
//	Item(statsName, statsKey string) (Windows, bool)
//	Runtime() Runtime
//
// Besides the counting calls above the broker uses PutLatency(d) (the
// store call of a send), PutFailed() (a put the store refused),
// NewRate(read) (a 10 s rate of a counter kept elsewhere, the timer's) and,
// in tests, Config.NoSampler with Sample(now) to drive the samplings with
// a fake clock. JavaDouble and JavaFloat format figures as Java's
// String.valueOf does.
//
// All counts are cumulative since the broker started and monotonic. Keys
// are never removed while the broker runs (Java's maxStatsIdleTimeInMinutes
// defaults to -1: no cleaning either).
//
// # Cost
//
// Counting finds the key's entry with one atomic load and a map lookup (a
// copy-on-write map: no lock, no allocation for a known key) and adds to
// one of 8 cache-line stripes picked by the runtime's per-P random
// generator; the system-topic test is made once per entry. One goroutine,
// owned by Stats (New starts it, Close stops it), does all sampling every
// second; it is the only writer of the windows. Measured on the shared
// 2-core dev machine (load 7): TopicPut 60-100 ns, PutLatency 8 ns, 0
// allocations; processor BenchmarkSendStats, 10 alternated runs of 5000
// sends each way, median cpu-ns/op on/off = 1.002 (48.9 µs vs 48.8 µs),
// 14 allocs/op both.
package stats
