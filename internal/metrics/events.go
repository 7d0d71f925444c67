package metrics

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// finishBuckets are Java's rocketmq_finish_message_latency buckets
// (BrokerMetricsManager commitLatencyBuckets): 5 s, 1 min, 10 min, 1 h,
// 12 h, 24 h. Java records the latency in seconds ((now - born) / 1000)
// although it declares the unit "ms"; rocketd records the same values.
var finishBuckets = [...]float64{5, 60, 600, 3600, 12 * 3600, 24 * 3600}

// txnCell is one topic's transaction figures.
type txnCell struct {
	half      atomic.Int64 // half messages neither committed nor rolled back
	commits   atomic.Uint64
	rollbacks atomic.Uint64
	finished  atomic.Uint64 // observations of the finish latency
	finishSum atomic.Uint64 // seconds
	buckets   [len(finishBuckets)]atomic.Uint64
}

// Events records the families counted where things happen rather than
// read at scrape time: the transaction families (rocketmq_half_messages,
// rocketmq_commit_messages_total, rocketmq_rollback_messages_total,
// rocketmq_finish_message_latency) and rocketmq_send_to_dlq_messages_total.
// Each topic (or group and topic) has a cell made on first use, then
// updated with atomic adds only: no lock is taken once the cell exists
// (sync.Map reads of a stable key are lock-free). A nil *Events records
// nothing.
type Events struct {
	half, commits, rollbacks, finish, dlq *prometheus.Desc

	txn  sync.Map // topic -> *txnCell
	dlqs sync.Map // dlqKey -> *atomic.Uint64

	reviveRetry *prometheus.Desc
	retries     sync.Map // retryKey -> *atomic.Uint64

	reviveIn, reviveOut *prometheus.Desc
	reviveIns           sync.Map // reviveInKey -> *atomic.Uint64
	reviveOuts          sync.Map // reviveOutKey -> *atomic.Uint64
}

// reviveInKey and reviveOutKey label the revive log's records: kind is
// Java's PopReviveMessageType name (CK or ACK).
type reviveInKey struct{ group, topic, kind, status string }

type reviveOutKey struct {
	group, topic, kind string
	queueID            int32
}

// Java's PopReviveMessageType names.
const (
	reviveCK  = "CK"
	reviveAck = "ACK"
)

func reviveKind(ck bool) string {
	if ck {
		return reviveCK
	}
	return reviveAck
}

type retryKey struct{ group, topic, status string }

type dlqKey struct {
	group, topic string
	system       bool
}

// NewEvents returns an Events whose series carry base's labels.
func NewEvents(base prometheus.Labels) *Events {
	return &Events{
		half:      prometheus.NewDesc("rocketmq_half_messages", "Half messages of all topics", []string{"topic"}, base),
		commits:   prometheus.NewDesc("rocketmq_commit_messages_total", "Total number of commit messages", []string{"topic"}, base),
		rollbacks: prometheus.NewDesc("rocketmq_rollback_messages_total", "Total number of rollback messages", []string{"topic"}, base),
		finish:    prometheus.NewDesc("rocketmq_finish_message_latency", "Transaction finish latency", []string{"topic"}, base),
		dlq: prometheus.NewDesc("rocketmq_send_to_dlq_messages_total", "Consumer send to DLQ messages",
			[]string{"consumer_group", "topic", "is_system"}, base),
		reviveRetry: prometheus.NewDesc("rocketmq_pop_revive_retry_messages_total", "Total number of retry messages",
			[]string{"consumer_group", "topic", "put_status"}, base),
		reviveIn: prometheus.NewDesc("rocketmq_pop_revive_in_message_total", "Total number of put message to revive topic",
			[]string{"consumer_group", "topic", "revive_message_type", "put_status"}, base),
		reviveOut: prometheus.NewDesc("rocketmq_pop_revive_out_message_total", "Total number of get message from revive topic",
			[]string{"consumer_group", "topic", "queue_id", "revive_message_type"}, base),
	}
}

func (e *Events) txnCell(topic string) *txnCell {
	if c, ok := e.txn.Load(topic); ok {
		return c.(*txnCell)
	}
	c, _ := e.txn.LoadOrStore(strings.Clone(topic), new(txnCell))
	return c.(*txnCell)
}

// HalfPut counts a half message of topic (its REAL_TOPIC) stored.
func (e *Events) HalfPut(topic string) {
	if e == nil {
		return
	}
	e.txnCell(topic).half.Add(1)
}

// HalfDone counts a half message of topic leaving the half state without
// a commit or rollback (discarded after too many checks).
func (e *Events) HalfDone(topic string) {
	if e == nil {
		return
	}
	decHalf(&e.txnCell(topic).half)
}

// Finished counts the commit (or rollback) of a half message of topic,
// born at bornMs, settled at nowMs.
func (e *Events) Finished(topic string, commit bool, bornMs, nowMs int64) {
	if e == nil {
		return
	}
	c := e.txnCell(topic)
	decHalf(&c.half)
	if !commit {
		c.rollbacks.Add(1)
		return
	}
	// Java (EndTransactionProcessor) records the commit latency only.
	c.commits.Add(1)
	s := max(nowMs-bornMs, 0) / 1000
	for i, le := range finishBuckets {
		if float64(s) <= le {
			c.buckets[i].Add(1)
			break
		}
	}
	c.finishSum.Add(uint64(s))
	c.finished.Add(1)
}

// decHalf decrements a half count, never below 0: counts loaded at
// start may be stale (see doc.go), so a settlement of an older half
// message must not make it negative.
func decHalf(n *atomic.Int64) {
	for {
		v := n.Load()
		if v <= 0 || n.CompareAndSwap(v, v-1) {
			return
		}
	}
}

// count adds 1 to m's counter of k, made on first use under owned(k): a
// copy whose strings are the key's own (callers' may alias a request).
func count[K comparable](m *sync.Map, k K, owned func(K) K) {
	c, ok := m.Load(k)
	if !ok {
		c, _ = m.LoadOrStore(owned(k), new(atomic.Uint64))
	}
	c.(*atomic.Uint64).Add(1)
}

// SentToDLQ counts a message of topic (the consumed topic, %RETRY%group
// for retries) that group's consumption moved to the group's DLQ. system
// is Java's BrokerMetricsManager.isSystem(topic, group): a system topic
// (the caller knows the topic table) or a CID_RMQ_SYS_ group.
func (e *Events) SentToDLQ(group, topic string, system bool) {
	if e == nil {
		return
	}
	system = system || isSystemGroup(group)
	count(&e.dlqs, dlqKey{group, topic, system}, func(k dlqKey) dlqKey {
		return dlqKey{strings.Clone(k.group), strings.Clone(k.topic), k.system}
	})
}

// RevivedToRetry counts a popped message of topic that the POP revive
// service put into group's retry topic, with the put's status (Java's
// PutMessageStatus name): rocketmq_pop_revive_retry_messages_total
// (PopMetricsManager.incPopReviveRetryMessageCount).
func (e *Events) RevivedToRetry(group, topic, putStatus string) {
	if e == nil {
		return
	}
	count(&e.retries, retryKey{group, topic, putStatus}, func(k retryKey) retryKey {
		return retryKey{strings.Clone(k.group), strings.Clone(k.topic), strings.Clone(k.status)}
	})
}

// RevivePut counts a record of group and topic put into the POP revive
// log (a check point when ck, else an ack or batch ack), with the put's
// status name: rocketmq_pop_revive_in_message_total
// (PopMetricsManager.incPopReviveCkPutCount / incPopReviveAckPutCount).
func (e *Events) RevivePut(group, topic string, ck bool, putStatus string) {
	if e == nil {
		return
	}
	count(&e.reviveIns, reviveInKey{group, topic, reviveKind(ck), putStatus}, func(k reviveInKey) reviveInKey {
		return reviveInKey{strings.Clone(k.group), strings.Clone(k.topic), k.kind, strings.Clone(k.status)}
	})
}

// ReviveGot counts a record of group and topic the revive service read
// from revive queue queueID: rocketmq_pop_revive_out_message_total
// (PopMetricsManager.incPopReviveCkGetCount / incPopReviveAckGetCount).
func (e *Events) ReviveGot(group, topic string, queueID int32, ck bool) {
	if e == nil {
		return
	}
	count(&e.reviveOuts, reviveOutKey{group, topic, reviveKind(ck), queueID}, func(k reviveOutKey) reviveOutKey {
		return reviveOutKey{strings.Clone(k.group), strings.Clone(k.topic), k.kind, k.queueID}
	})
}

// RevivedToRetryFunc is RevivedToRetry as a callback; nil when e is.
func (e *Events) RevivedToRetryFunc() func(group, topic, putStatus string) {
	if e == nil {
		return nil
	}
	return e.RevivedToRetry
}

// Describe implements prometheus.Collector.
func (e *Events) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{e.half, e.commits, e.rollbacks, e.finish, e.dlq, e.reviveRetry, e.reviveIn, e.reviveOut} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (e *Events) Collect(ch chan<- prometheus.Metric) {
	em := emitter{ch: ch}
	e.txn.Range(func(k, v any) bool {
		topic, c := k.(string), v.(*txnCell)
		em.gauge(e.half, float64(c.half.Load()), topic)
		em.counter(e.commits, float64(c.commits.Load()), topic)
		em.counter(e.rollbacks, float64(c.rollbacks.Load()), topic)
		count := c.finished.Load()
		buckets := make(map[float64]uint64, len(finishBuckets))
		var cum uint64
		for i, le := range finishBuckets {
			cum += c.buckets[i].Load()
			buckets[le] = min(cum, count)
		}
		m, err := prometheus.NewConstHistogram(e.finish, count, float64(c.finishSum.Load()), buckets, topic)
		if err != nil {
			m = prometheus.NewInvalidMetric(e.finish, err)
		}
		ch <- m
		return true
	})
	e.dlqs.Range(func(k, v any) bool {
		key := k.(dlqKey)
		em.counter(e.dlq, float64(v.(*atomic.Uint64).Load()), key.group, key.topic, boolLabel(key.system))
		return true
	})
	e.retries.Range(func(k, v any) bool {
		key := k.(retryKey)
		em.counter(e.reviveRetry, float64(v.(*atomic.Uint64).Load()), key.group, key.topic, key.status)
		return true
	})
	e.reviveIns.Range(func(k, v any) bool {
		key := k.(reviveInKey)
		em.counter(e.reviveIn, float64(v.(*atomic.Uint64).Load()), key.group, key.topic, key.kind, key.status)
		return true
	})
	e.reviveOuts.Range(func(k, v any) bool {
		key := k.(reviveOutKey)
		em.counter(e.reviveOut, float64(v.(*atomic.Uint64).Load()), key.group, key.topic, strconv.Itoa(int(key.queueID)), key.kind)
		return true
	})
}

// HalfCounts returns the half-message count of each topic counted.
func (e *Events) HalfCounts() map[string]int64 {
	out := map[string]int64{}
	if e == nil {
		return out
	}
	e.txn.Range(func(k, v any) bool {
		out[k.(string)] = v.(*txnCell).half.Load()
		return true
	})
	return out
}

// SetHalfCounts replaces every topic's half-message count with counts
// (a topic absent from it: 0), e.g. counts rebuilt from the half queue at
// start. Call it before half messages are counted concurrently.
func (e *Events) SetHalfCounts(counts map[string]int64) {
	if e == nil {
		return
	}
	e.txn.Range(func(k, v any) bool {
		v.(*txnCell).half.Store(max(counts[k.(string)], 0))
		return true
	})
	for topic, n := range counts {
		e.txnCell(topic).half.Store(max(n, 0))
	}
}

// AddHalf adds n to topic's half-message count (a saved count loaded at
// start).
func (e *Events) AddHalf(topic string, n int64) {
	if e == nil || n <= 0 {
		return
	}
	e.txnCell(topic).half.Add(n)
}
