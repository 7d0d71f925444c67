package broker

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/metrics"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/vfs"
)

// newRPCMetrics returns the remoting servers' request observer when
// metrics are on (nil, and no clock read per request, when off).
func newRPCMetrics(bc *config.BrokerConfig) *metrics.RPC {
	if !bc.MetricsEnabled() {
		return nil
	}
	return metrics.NewRPC(metrics.BaseLabels(bc.BrokerClusterName, bc.BrokerName))
}

// observer is rpc as a remoting.RequestObserver: nil stays a nil
// interface, which the server checks.
func observer(rpc *metrics.RPC) remoting.RequestObserver {
	if rpc == nil {
		return nil
	}
	return rpc
}

// startMetrics starts the metrics listener (metricsExporterType=PROM) on
// metricsPromExporterHost:metricsPromExporterPort, or cfg.MetricsAddr.
// With tls.server.mode=enforcing it serves HTTPS only; permissive and
// disabled serve plain HTTP (Java's exporter has no TLS at all, and a
// scraper speaks one or the other).
func (b *Broker) startMetrics(cfg *Config, rpc *metrics.RPC, fs vfs.FS) error {
	if rpc == nil {
		return nil
	}
	col := metrics.NewCollector(metrics.Config{
		Cluster: b.cfg.BrokerClusterName, BrokerName: b.cfg.BrokerName, BrokerAddr: b.addr,
		BrokerPermission: b.cfg.BrokerPermission, BrokerVersion: remoting.DefaultVersion,
		BootTime: b.bootTime, Source: &metricsSource{b: b, fs: fs},
		// The runtime statistics' counters: the send and pull paths count
		// once, for GET_BROKER_RUNTIME_INFO and the metrics alike.
		Counts: b.stats,
	})
	reg, err := metrics.NewRegistry(col, rpc, b.events)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	addr := cfg.MetricsAddr
	if addr == "" {
		addr = b.cfg.MetricsAddr()
	}
	scfg := metrics.ServerConfig{Addr: addr, Gatherer: reg, Pprof: b.cfg.MetricsPprofEnable, Logger: b.log}
	if b.tlsListener.Mode == remoting.TLSEnforcing {
		scfg.TLS = b.tlsListener.Config
	}
	b.metrics = metrics.NewServer(scfg)
	if err := b.metrics.Start(); err != nil {
		b.metrics = nil
		return fmt.Errorf("broker: metricsPromExporterPort: %w", err)
	}
	return nil
}

// MetricsAddr is the metrics listener's bound address ("" when off).
func (b *Broker) MetricsAddr() string {
	if b.metrics == nil {
		return ""
	}
	return b.metrics.Addr().String()
}

// closeMetrics stops the metrics listener (idempotent; nil-safe).
func (b *Broker) closeMetrics(ctx context.Context) error {
	if b.metrics == nil {
		return nil
	}
	return b.metrics.Close(ctx)
}

// metricsSource reads the broker's state for a scrape.
type metricsSource struct {
	b  *Broker
	fs vfs.FS
}

func (s *metricsSource) Topics() []metrics.Topic {
	snap := s.b.topics.Snapshot()
	out := make([]metrics.Topic, 0, len(snap.TopicConfigTable))
	for name, tc := range snap.TopicConfigTable {
		out = append(out, metrics.Topic{
			Name: name, ReadQueues: tc.ReadQueueNums, WriteQueues: tc.WriteQueueNums, Perm: tc.Perm,
			System:      s.b.topics.IsSystemTopic(name),
			MessageType: messageTypeLabel(tc.Attributes[protocol.TopicAttrMessageType]),
		})
	}
	return out
}

// messageTypeLabel is TopicMessageType.getMetricsValue: the type in lower
// case, normal when unspecified.
func messageTypeLabel(attr string) string {
	switch t := strings.ToLower(attr); t {
	case "", strings.ToLower(protocol.MessageTypeUnspecified):
		return "normal"
	default:
		return t
	}
}

func (s *metricsSource) MaxOffset(topic string, q int32) int64 { return s.b.store.MaxOffset(topic, q) }

func (s *metricsSource) StoreTimestamp(topic string, q int32, offset int64) int64 {
	return max(s.b.store.MessageStoreTimestamp(topic, q, offset), 0)
}

func (s *metricsSource) ConsumerOffsets(fn func(group, topic string, offsets map[int32]int64)) {
	snap := s.b.offsets.Snapshot()
	for key, offsets := range snap.OffsetTable {
		topic, group, ok := strings.Cut(key, "@")
		if !ok {
			continue
		}
		fn(group, topic, offsets)
	}
}

func (s *metricsSource) ConsumerGroups() []metrics.ConsumerGroup {
	names := s.b.clients.ConsumerGroups()
	out := make([]metrics.ConsumerGroup, 0, len(names))
	for _, name := range names {
		g, ok := s.b.clients.ConsumerGroup(name)
		if !ok {
			continue
		}
		mg := metrics.ConsumerGroup{Name: name, ConsumeMode: consumeMode(g.ConsumeType), MessageModel: string(g.MessageModel)}
		for topic := range g.Subscriptions {
			mg.Topics = append(mg.Topics, topic)
		}
		for _, ch := range g.Channels {
			mg.Clients = append(mg.Clients, metrics.Client{Group: name, Addr: ch.Channel.RemoteAddr(),
				Language: ch.Language.String(), Version: ch.Version})
		}
		out = append(out, mg)
	}
	return out
}

// consumeMode is ConsumeType.getTypeCN.
func consumeMode(t protocol.ConsumeType) string {
	switch t {
	case protocol.ConsumeActively:
		return "PULL"
	case protocol.ConsumePassively:
		return "PUSH"
	}
	return strings.TrimPrefix(string(t), "CONSUME_") // CONSUME_POP: POP
}

func (s *metricsSource) Producers() []metrics.Client {
	var out []metrics.Client
	for _, group := range s.b.clients.ProducerGroups() {
		for _, ch := range s.b.clients.ProducerChannels(group) {
			out = append(out, metrics.Client{Group: group, Addr: ch.Channel.RemoteAddr(),
				Language: ch.Language.String(), Version: ch.Version})
		}
	}
	return out
}

func (s *metricsSource) SubscriptionGroups() int { return len(s.b.groups.Names()) }

func (s *metricsSource) Store() metrics.StoreStats {
	st := s.b.store
	out := metrics.StoreStats{
		CommitLogMinOffset:  st.CommitLogMinOffset(),
		CommitLogMaxOffset:  st.CommitLogMaxOffset(),
		FlushBehindBytes:    st.FlushBehindBytes(),
		DispatchBehind:      st.DispatchBehindBytes(),
		EarliestMessageTime: max(st.EarliestStoreTime(), 0),
	}
	if d, err := s.fs.DiskUsage(s.b.cfg.StorePathCommitLog); err == nil {
		out.DiskUsedBytes, out.DiskTotalBytes = int64(d.Used), int64(d.Total)
		out.CommitLogDiskRatio = d.UsedPercent() / 100
	}
	if d, err := s.fs.DiskUsage(filepath.Join(s.b.cfg.StorePathRootDir, "consumequeue")); err == nil {
		out.ConsumeQueueDiskRatio = d.UsedPercent() / 100
	}
	if d := s.b.delivery.Load(); s.b.cfg.TimerWheelEnable && d != nil {
		ts := d.timer.Stats()
		out.TimerEnabled, out.TimerEnqueued, out.TimerDelivered = true, ts.Enqueued, ts.Delivered
		// As TimerMessageStore's getEnqueueBehindMessages,
		// getDequeueBehindMessages and getDequeueBehind (seconds).
		now := time.Now().UnixMilli()
		out.TimerEnqueueBehind = max(st.MaxOffset(timer.Topic, 0)-ts.EnqueueOffset, 0)
		if out.TimerEnqueueBehind > 0 {
			if born := st.MessageStoreTimestamp(timer.Topic, 0, ts.EnqueueOffset); born > 0 {
				out.TimerEnqueueLatencyMs = max(now-born, 0)
			}
		}
		out.TimerDequeueBehind = ts.InMemory
		if ts.WatermarkMs > 0 {
			out.TimerDequeueLatencyS = max(now-ts.WatermarkMs, 0) / 1000
		}
		if bounds, ok := d.timer.Snapshot(); ok {
			out.TimerSnapshot = make([]metrics.TimerBound, len(bounds))
			for i, b := range bounds {
				out.TimerSnapshot[i] = metrics.TimerBound{BoundS: b.BoundS, Count: b.Count}
			}
		}
		tm := d.timer.Metrics()
		out.TimingMessages = make(map[string]int64, len(tm))
		for topic, m := range tm {
			out.TimingMessages[topic] = m.Count
		}
	}
	return out
}

func (s *metricsSource) ReviveLags() []metrics.ReviveLag {
	if s.b.pop == nil {
		return nil
	}
	lags := s.b.pop.ReviveLags(time.Now())
	out := make([]metrics.ReviveLag, len(lags))
	for i, l := range lags {
		out[i] = metrics.ReviveLag{QueueID: l.QueueID, Messages: l.Messages, LatencyMs: l.LatencyMs}
	}
	return out
}

// processorNames are Java's processor labels of rocketd's families.
var processorNames = map[string]string{
	"send": "send", "pull": "pull", "heartbeat": "heartbeat", "consumerManage": "consumer_manager",
	"admin": "admin", "reply": "reply",
}

func (s *metricsSource) Processors() []metrics.Processor {
	var out []metrics.Processor
	for _, f := range familiesOf(s.b.fams) {
		name := processorNames[f.Name()]
		if name == "" {
			name = f.Name()
		}
		out = append(out, metrics.Processor{Name: name, Queued: f.Queued()})
	}
	return out
}

// familiesOf lists f's distinct families.
func familiesOf(f processor.Families) []*remoting.Family {
	var out []*remoting.Family
	seen := map[*remoting.Family]bool{}
	for _, x := range []*remoting.Family{f.Send, f.Pull, f.Offset, f.Client, f.Admin, f.Reply} {
		if x != nil && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// sentToDLQ counts rocketmq_send_to_dlq_messages_total (nil: metrics off).
func (b *Broker) sentToDLQ() func(group, topic string) {
	if b.events == nil {
		return nil
	}
	return func(group, topic string) {
		b.events.SentToDLQ(group, topic, b.topics.IsSystemTopic(topic))
	}
}
