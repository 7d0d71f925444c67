package metrics

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Topic-name prefixes of retry and dead-letter topics (MixAll).
const (
	retryPrefix = "%RETRY%"
	dlqPrefix   = "%DLQ%"
)

// sysGroupPrefix marks a system consumer group (MixAll.CID_RMQ_SYS_PREFIX,
// compared in lower case as BrokerMetricsManager.isSystemGroup does).
const sysGroupPrefix = "cid_rmq_sys_"

// Permission bits (PermName).
const (
	permWrite = 1 << 1
	permRead  = 1 << 2
)

// Config configures a Collector.
type Config struct {
	Cluster    string // brokerClusterName
	BrokerName string
	BrokerAddr string // the advertised brokerIP1:port
	// BrokerPermission is brokerPermission (PermName bits).
	BrokerPermission int32
	// BrokerVersion is the MQVersion ordinal the broker reports.
	BrokerVersion int32
	BootTime      time.Time
	Source        Source
	// Counts, when set, adds the count-based families; nil leaves them
	// out (see Counts).
	Counts Counts
	// Now is the clock (default time.Now).
	Now func() time.Time
	// RateWindow is the sampling window of the rates (default
	// DefaultRateWindow).
	RateWindow time.Duration
}

// Collector exports the broker's state as the RocketMQ 5 metrics
// (RIP-46: BrokerMetricsManager, ConsumerLagCalculator,
// DefaultStoreMetricsManager) and as the families rocketmq-exporter
// publishes for Grafana dashboard 10477. Every value is read from Source
// (and Counts) at scrape time. It is an unchecked collector: its label
// values are only known when it collects.
type Collector struct {
	cfg   Config
	rates rates
	d     descs
}

// NewCollector returns a collector over cfg.Source.
func NewCollector(cfg Config) *Collector {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = DefaultRateWindow
	}
	c := &Collector{cfg: cfg, rates: rates{window: cfg.RateWindow}}
	c.d = newDescs(BaseLabels(cfg.Cluster, cfg.BrokerName))
	return c
}

// BaseLabels are the labels Java puts on every RIP-46 series:
// BrokerMetricsManager's cluster, node_type and node_id (the broker name).
// Java adds aggregation=delta only with metricsInDelta, which exports
// deltas rocketd does not produce: the label is never set.
func BaseLabels(cluster, brokerName string) prometheus.Labels {
	return prometheus.Labels{"cluster": cluster, "node_type": "broker", "node_id": brokerName}
}

// Describe implements prometheus.Collector; it describes nothing, which
// makes the collector unchecked (label values are only known at scrape).
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	src := c.cfg.Source
	now := c.cfg.Now()
	e := emitter{ch: ch}
	topics := src.Topics()
	byName := make(map[string]*Topic, len(topics))
	for i := range topics {
		byName[topics[i].Name] = &topics[i]
	}
	groups := src.ConsumerGroups()
	st := src.Store()

	c.collectBroker(&e, topics, src, st)
	c.collectConnections(&e, groups, src.Producers())
	c.collectLag(&e, now, groups, byName)
	c.collectOffsets(&e, now, topics, byName, groups)
	c.collectRuntime(&e, st, src.Processors())
	for _, l := range src.ReviveLags() {
		q := strconv.Itoa(int(l.QueueID))
		e.gauge(c.d.popReviveLag, float64(l.Messages), q)
		e.gauge(c.d.popReviveLatency, float64(l.LatencyMs), q)
	}
	if c.cfg.Counts != nil {
		c.collectCounts(&e, now, byName)
	}
}

// emitter sends const metrics, turning a bad label set into an invalid
// metric (the scrape reports it) rather than a panic.
type emitter struct{ ch chan<- prometheus.Metric }

func (e *emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func (e *emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func boolLabel(b bool) string { return strconv.FormatBool(b) }

func isSystemGroup(group string) bool {
	return len(group) >= len(sysGroupPrefix) && strings.EqualFold(group[:len(sysGroupPrefix)], sysGroupPrefix)
}

// queues is the number of queues a topic's offsets are read from.
func (t *Topic) queues() int32 { return max(t.ReadQueues, t.WriteQueues) }

func (c *Collector) collectBroker(e *emitter, topics []Topic, src Source, st StoreStats) {
	d := &c.d
	e.gauge(d.brokerPermission, float64(c.cfg.BrokerPermission))
	e.gauge(d.topicNumber, float64(len(topics)))
	e.gauge(d.groupNumber, float64(src.SubscriptionGroups()))
	storage := []string{"local", "disk"} // DefaultStoreMetricsConstant
	e.gauge(d.storageSize, float64(st.DiskUsedBytes), storage...)
	e.gauge(d.flushBehind, float64(st.FlushBehindBytes), storage...)
	e.gauge(d.dispatchBehind, float64(st.DispatchBehind), storage...)
	if st.EarliestMessageTime > 0 {
		reserve := c.cfg.Now().UnixMilli() - st.EarliestMessageTime
		e.gauge(d.reserveTime, float64(max(reserve, 0)), storage...)
	}
	if st.TimerEnabled {
		e.counter(d.timerEnqueueTotal, float64(st.TimerEnqueued), storage...)
		e.counter(d.timerDequeueTotal, float64(st.TimerDelivered), storage...)
		e.gauge(d.timerEnqueueLag, float64(st.TimerEnqueueBehind), storage...)
		e.gauge(d.timerEnqueueLatency, float64(st.TimerEnqueueLatencyMs), storage...)
		e.gauge(d.timerDequeueLag, float64(st.TimerDequeueBehind), storage...)
		e.gauge(d.timerDequeueLatency, float64(st.TimerDequeueLatencyS), storage...)
		for _, b := range st.TimerSnapshot {
			e.gauge(d.timerSnapshot, float64(b.Count), "local", "disk", strconv.FormatInt(b.BoundS, 10))
		}
		for topic, n := range st.TimingMessages {
			e.gauge(d.timingMessages, float64(n), "local", "disk", topic)
		}
	}
}

// connKey groups connections as Java's connection gauges do.
type connKey struct{ group, language, version, mode string }

func (c *Collector) collectConnections(e *emitter, groups []ConsumerGroup, producers []Client) {
	prod := map[connKey]int{}
	for _, p := range producers {
		prod[connKey{language: strings.ToLower(p.Language), version: versionDesc(p.Version)}]++
	}
	for k, n := range prod {
		e.gauge(c.d.producerConns, float64(n), k.language, k.version, "remoting")
	}
	cons := map[connKey]int{}
	for _, g := range groups {
		for _, cl := range g.Clients {
			cons[connKey{g.Name, strings.ToLower(cl.Language), versionDesc(cl.Version), strings.ToLower(g.ConsumeMode)}]++
		}
	}
	for k, n := range cons {
		e.gauge(c.d.consumerConns, float64(n), k.group, k.language, k.version, k.mode, "remoting",
			boolLabel(isSystemGroup(k.group)))
	}
	for _, g := range groups {
		addrs := make([]string, 0, len(g.Clients))
		for _, cl := range g.Clients {
			addrs = append(addrs, cl.Addr)
		}
		// The exporter's "localaddr" is the client ids; rocketd keeps
		// channels by address only, so both carry the addresses.
		joined := strings.Join(addrs, ",")
		e.gauge(c.d.groupCount, float64(len(g.Clients)), joined, joined, g.Name)
	}
}

// queueLag is the lag of one group on one topic, over its queues.
type queueLag struct {
	lag      int64
	earliest int64 // store time (ms) of the oldest unconsumed message; 0: none
}

// lagOf is ConsumerLagCalculator.getConsumerLagStats for a PULL/PUSH
// group: per queue, the max offset minus the committed offset (a queue
// without a committed offset has no lag), and the store time of the first
// unconsumed message.
func (c *Collector) lagOf(t *Topic, offsets map[int32]int64) queueLag {
	var out queueLag
	src := c.cfg.Source
	for q := range t.WriteQueues {
		top := max(src.MaxOffset(t.Name, q), 0)
		consumed, ok := offsets[q]
		if !ok || consumed < 0 {
			consumed = top
		}
		if consumed >= top {
			continue
		}
		out.lag += top - consumed
		if ts := src.StoreTimestamp(t.Name, q, consumed); ts > 0 && (out.earliest == 0 || ts < out.earliest) {
			out.earliest = ts
		}
	}
	return out
}

// collectLag exports ConsumerLagCalculator's five gauges for every
// online group and each topic it subscribes to (retry topics excluded,
// as in Java). rocketd keeps no pull offsets apart from the committed
// ones, which is what Java's queryPullOffset falls back to: in-flight is
// then 0 and ready equals the lag.
func (c *Collector) collectLag(e *emitter, now time.Time, groups []ConsumerGroup, topics map[string]*Topic) {
	offsets := map[[2]string]map[int32]int64{}
	c.cfg.Source.ConsumerOffsets(func(group, topic string, o map[int32]int64) {
		cp := make(map[int32]int64, len(o))
		for k, v := range o {
			cp[k] = v
		}
		offsets[[2]string{group, topic}] = cp
	})
	nowMs := now.UnixMilli()
	for _, g := range groups {
		for _, name := range g.Topics {
			if strings.HasPrefix(name, retryPrefix) {
				continue
			}
			t := topics[name]
			if t == nil || t.Perm&c.cfg.BrokerPermission&(permRead|permWrite) == 0 {
				continue
			}
			l := c.lagOf(t, offsets[[2]string{g.Name, name}])
			latency := int64(0)
			if l.earliest > 0 {
				latency = max(nowMs-l.earliest, 0)
			}
			labels := []string{g.Name, name, "false", boolLabel(t.System || isSystemGroup(g.Name))}
			e.gauge(c.d.lagMessages, float64(l.lag), labels...)
			e.gauge(c.d.lagLatency, float64(latency), labels...)
			e.gauge(c.d.inflight, 0, labels...)
			e.gauge(c.d.queueingLatency, float64(latency), labels...)
			e.gauge(c.d.ready, float64(l.lag), labels...)
		}
	}
}

// collectOffsets exports the exporter's offset and diff families: per
// topic the sum of its queues' max offsets, per group and topic the sum of
// committed offsets and the diff (max minus committed, a queue without a
// committed offset counting from 0, as GET_CONSUME_STATS answers).
func (c *Collector) collectOffsets(e *emitter, now time.Time, topics []Topic, byName map[string]*Topic, groups []ConsumerGroup) {
	src := c.cfg.Source
	cl, br := c.cfg.Cluster, c.cfg.BrokerName
	maxOf := make(map[string][]int64, len(topics))
	for i := range topics {
		t := &topics[i]
		maxes := make([]int64, t.queues())
		var sum int64
		for q := range t.queues() {
			maxes[q] = max(src.MaxOffset(t.Name, q), 0)
			sum += maxes[q]
		}
		maxOf[t.Name] = maxes
		switch {
		case strings.HasPrefix(t.Name, retryPrefix):
			e.gauge(c.d.topicRetryOffset, float64(sum), cl, br, t.Name)
		case strings.HasPrefix(t.Name, dlqPrefix):
			e.gauge(c.d.topicDLQOffset, float64(sum), cl, br, strings.TrimPrefix(t.Name, dlqPrefix))
		default:
			e.gauge(c.d.producerOffset, float64(sum), cl, br, t.Name)
		}
	}
	online := make(map[string]*ConsumerGroup, len(groups))
	for i := range groups {
		online[groups[i].Name] = &groups[i]
	}
	nowMs := now.UnixMilli()
	src.ConsumerOffsets(func(group, topic string, offsets map[int32]int64) {
		var committed, diff int64
		var earliest int64
		maxes := maxOf[topic]
		for q, m := range maxes {
			o, ok := offsets[int32(q)]
			if !ok || o < 0 {
				o = 0
			}
			committed += o
			if m > o {
				diff += m - o
				if ts := src.StoreTimestamp(topic, int32(q), o); ts > 0 && (earliest == 0 || ts < earliest) {
					earliest = ts
				}
			}
		}
		if maxes == nil { // the topic is gone: the offsets alone
			for _, o := range offsets {
				committed += max(o, 0)
			}
		}
		e.gauge(c.d.consumerOffset, float64(committed), cl, br, topic, group)
		latency := int64(0)
		if earliest > 0 {
			latency = max(nowMs-earliest, 0)
		}
		e.gauge(c.d.groupLatencyByStore, float64(latency), cl, br, topic, group)
		count, model := 0, "1" // MessageModel.CLUSTERING.ordinal()
		if g := online[group]; g != nil {
			count = len(g.Clients)
			if g.MessageModel == "BROADCASTING" {
				// The exporter reports no diff for broadcasting groups
				// (each consumer keeps its own offsets).
				return
			}
		}
		diffDesc := c.d.groupDiff
		switch {
		case strings.HasPrefix(topic, retryPrefix):
			diffDesc = c.d.groupRetryDiff
		case strings.HasPrefix(topic, dlqPrefix):
			diffDesc = c.d.groupDLQDiff
		}
		e.gauge(diffDesc, float64(diff), group, topic, strconv.Itoa(count), model)
	})
}

// exporterVersionDesc is the broker version as GET_BROKER_RUNTIME_INFO's
// brokerVersionDesc says it (MQVersion name, upper case).
func exporterVersionDesc(v int32) string { return strings.ToUpper(versionDesc(v)) }

func (c *Collector) collectRuntime(e *emitter, st StoreStats, procs []Processor) {
	lv := c.runtimeLabels()
	d := &c.d
	e.gauge(d.rtCommitLogDiskRatio, st.CommitLogDiskRatio, lv...)
	e.gauge(d.rtConsumeQueueDiskRatio, st.ConsumeQueueDiskRatio, lv...)
	e.gauge(d.rtDispatchBehind, float64(st.DispatchBehind), lv...)
	e.gauge(d.rtCommitLogMaxOffset, float64(st.CommitLogMaxOffset), lv...)
	e.gauge(d.rtCommitLogMinOffset, float64(st.CommitLogMinOffset), lv...)
	e.gauge(d.rtEarliestMessageTime, float64(st.EarliestMessageTime), lv...)
	e.gauge(d.rtCapacityFree, float64(max(st.DiskTotalBytes-st.DiskUsedBytes, 0)), lv...)
	e.gauge(d.rtCapacityTotal, float64(st.DiskTotalBytes), lv...)
	e.gauge(d.rtRemainToFlush, float64(st.FlushBehindBytes), lv...)
	for _, p := range procs {
		e.gauge(d.watermark, float64(p.Queued), p.Name)
		switch p.Name {
		case "send":
			e.gauge(d.rtSendQueueSize, float64(p.Queued), lv...)
		case "pull":
			e.gauge(d.rtPullQueueSize, float64(p.Queued), lv...)
		}
	}
}

// runtimeLabels are the values of the exporter's brokeruntime labels:
// cluster, brokerIP, brokerHost, des, boottime, broker_version.
func (c *Collector) runtimeLabels() []string {
	return []string{c.cfg.Cluster, c.cfg.BrokerAddr, c.cfg.BrokerName, exporterVersionDesc(c.cfg.BrokerVersion),
		strconv.FormatInt(c.cfg.BootTime.UnixMilli(), 10), itoa(c.cfg.BrokerVersion)}
}

// collectCounts exports the families built on Counts: RIP-46's message
// and byte counters, the exporter's today totals, and the TPS families
// (rates over the last RateWindow).
func (c *Collector) collectCounts(e *emitter, now time.Time, topics map[string]*Topic) {
	d := &c.d
	sample := map[rateKey]uint64{}
	var putMsgs, putBytes, getMsgs uint64
	c.cfg.Counts.EachTopicPut(func(topic string, msgs, bytes uint64) {
		typ, system := "normal", false
		if t := topics[topic]; t != nil {
			system = t.System
			if t.MessageType != "" {
				typ = t.MessageType
			}
		}
		e.counter(d.messagesIn, float64(msgs), topic, typ, boolLabel(system))
		e.counter(d.throughputIn, float64(bytes), topic, typ, boolLabel(system))
		sample[rateKey{kind: topicPutMsgs, a: topic}] = msgs
		sample[rateKey{kind: topicPutBytes, a: topic}] = bytes
		putMsgs += msgs
		putBytes += bytes
	})
	c.cfg.Counts.EachGroupGet(func(group, topic string, msgs, bytes uint64) {
		system := isSystemGroup(group)
		if t := topics[topic]; t != nil {
			system = system || t.System
		}
		retry := strings.HasPrefix(topic, retryPrefix)
		e.counter(d.messagesOut, float64(msgs), topic, group, boolLabel(retry), boolLabel(system))
		e.counter(d.throughputOut, float64(bytes), topic, group, boolLabel(retry), boolLabel(system))
		sample[rateKey{kind: groupGetMsgs, a: group, b: topic}] = msgs
		sample[rateKey{kind: groupGetBytes, a: group, b: topic}] = bytes
		getMsgs += msgs
	})
	lv := c.runtimeLabels()
	e.gauge(d.rtPutTotal, float64(putMsgs), lv...)
	e.gauge(d.rtGetTotal, float64(getMsgs), lv...)
	e.gauge(d.rtPutSizeTotal, float64(putBytes), lv...)
	avg := 0.0
	if putMsgs > 0 {
		avg = float64(putBytes) / float64(putMsgs)
	}
	e.gauge(d.rtPutAvgSize, avg, lv...)
	if sizes, ok := c.cfg.Counts.(MessageSizes); ok {
		c.collectSizes(e, sizes, topics)
	}

	cur := c.rates.update(now, sample)
	if len(cur) == 0 {
		return // a window has not passed yet
	}
	cl, br := c.cfg.Cluster, c.cfg.BrokerName
	keys := make([]rateKey, 0, len(cur))
	for k := range cur {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.a != b.a {
			return a.a < b.a
		}
		return a.b < b.b
	})
	var brokerTPS, brokerQPS float64
	for _, k := range keys {
		v := cur[k]
		switch k.kind {
		case topicPutMsgs:
			e.gauge(d.producerTPS, v, cl, br, k.a)
			brokerTPS += v
		case topicPutBytes:
			e.gauge(d.producerSize, v, cl, br, k.a)
		case groupGetMsgs:
			e.gauge(d.consumerTPS, v, cl, br, k.b, k.a)
			brokerQPS += v
		case groupGetBytes:
			e.gauge(d.consumerSize, v, cl, br, k.b, k.a)
		}
	}
	e.gauge(d.brokerTPS, brokerTPS, cl, c.cfg.BrokerAddr, br)
	e.gauge(d.brokerQPS, brokerQPS, cl, c.cfg.BrokerAddr, br)
}

// MessageSizeBuckets are Java's rocketmq_message_size buckets in bytes
// (BrokerMetricsManager: 1 KiB, 4 KiB, 512 KiB, 1 MiB, 2 MiB, 4 MiB).
var MessageSizeBuckets = []float64{1 << 10, 4 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}

// MessageSizes is implemented by a Counts that also keeps the size
// distribution of the messages put: it adds rocketmq_message_size.
type MessageSizes interface {
	// EachTopicSizes calls fn for each topic with the cumulative count of
	// messages at or below each of MessageSizeBuckets, the total count and
	// the sum of the sizes.
	EachTopicSizes(fn func(topic string, cumulative []uint64, count, sum uint64))
}

func (c *Collector) collectSizes(e *emitter, sizes MessageSizes, topics map[string]*Topic) {
	sizes.EachTopicSizes(func(topic string, cumulative []uint64, count, sum uint64) {
		if len(cumulative) != len(MessageSizeBuckets) {
			e.ch <- prometheus.NewInvalidMetric(c.d.messageSize, errBucketCount)
			return
		}
		b := make(map[float64]uint64, len(MessageSizeBuckets))
		for i, le := range MessageSizeBuckets {
			b[le] = cumulative[i]
		}
		typ, system := "normal", false
		if t := topics[topic]; t != nil {
			system = t.System
			if t.MessageType != "" {
				typ = t.MessageType
			}
		}
		m, err := prometheus.NewConstHistogram(c.d.messageSize, count, float64(sum), b, topic, typ, boolLabel(system))
		if err != nil {
			m = prometheus.NewInvalidMetric(c.d.messageSize, err)
		}
		e.ch <- m
	})
}
