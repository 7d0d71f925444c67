package broker_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// scrape fetches and parses the broker's /metrics.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %s %.300s", resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// sumOf adds the values (histograms: sample counts) of the series of
// family name whose labels include every "k=v" of want.
func sumOf(mfs map[string]*dto.MetricFamily, name string, want ...string) (sum float64, series int) {
	for _, m := range mfs[name].GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			if labels[k] != v {
				ok = false
			}
		}
		if !ok {
			continue
		}
		series++
		switch {
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, series
}

// TestMetricsInterop: N messages sent and M consumed with the official Go
// client show up in a scrape as the group's lag (N-M), the exporter's
// offsets and diff, the connections, the storage, the send requests'
// rpc latency samples and the message counters (in: n, out: n pulled).
func TestMetricsInterop(t *testing.T) {
	const n, m = 10, 4
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.MetricsExporterType = config.MetricsProm })
	topic, group := uniq(t, "Metrics"), uniq(t, "metricsGroup")
	c.createTopic(topic, 1)
	p := c.newProducer()
	for i := range n {
		msg := primitive.NewMessage(topic, []byte("m-"+strconv.Itoa(i)))
		if _, err := p.SendSync(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	// The first m messages are consumed; the others block until the end,
	// so the group's committed offset stops at m.
	release := make(chan struct{})
	c.startPushConsumer(group, topic, "*", func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, msg := range ms {
			i, _ := strconv.Atoi(strings.TrimPrefix(string(msg.Body), "m-"))
			if i >= m {
				<-release
			}
		}
		return consumer.ConsumeSuccess, nil
	})
	t.Cleanup(func() { close(release) }) // before the consumer's shutdown

	addr := c.b.MetricsAddr()
	var mfs map[string]*dto.MetricFamily
	lag := []string{"consumer_group=" + group, "topic=" + topic, "is_retry=false", "is_system=false",
		"cluster=" + config.DefaultBrokerClusterName, "node_type=broker", "node_id=" + config.DefaultBrokerName}
	wait.For(t, 30*time.Second, "consumer lag n-m", func() bool {
		mfs = scrape(t, addr)
		v, series := sumOf(mfs, "rocketmq_consumer_lag_messages", lag...)
		return series == 1 && v == n-m
	})
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"rocketmq_consumer_ready_messages", lag, n - m},
		{"rocketmq_consumer_connections", []string{"consumer_group=" + group, "language=go", "consume_mode=push"}, 1},
		{"rocketmq_producer_offset", []string{"topic=" + topic}, n},
		{"rocketmq_consumer_offset", []string{"topic=" + topic, "group=" + group}, m},
		{"rocketmq_group_diff", []string{"topic=" + topic, "group=" + group, "countOfOnlineConsumers=1", "msgModel=1"}, n - m},
		{"rocketmq_group_count", []string{"group=" + group}, 1},
	} {
		if v, series := sumOf(mfs, c.name, c.labels...); series != 1 || v != c.want {
			t.Errorf("%s%v = %v over %d series, want %v in one", c.name, c.labels, v, series, c.want)
		}
	}
	if v, _ := sumOf(mfs, "rocketmq_producer_connections", "language=go", "protocol_type=remoting"); v < 1 {
		t.Errorf("producer connections %v, want >= 1", v)
	}
	if v, _ := sumOf(mfs, "rocketmq_storage_size", "storage_type=local", "storage_medium=disk"); v <= 0 {
		t.Errorf("storage size %v, want > 0", v)
	}
	if v, _ := sumOf(mfs, "rocketmq_brokeruntime_commitlog_maxoffset", "cluster="+config.DefaultBrokerClusterName); v <= 0 {
		t.Errorf("commitlog max offset %v, want > 0", v)
	}
	// The Go client sends SEND_MESSAGE_V2 (310) or SEND_MESSAGE (10).
	sends, _ := sumOf(mfs, "rocketmq_rpc_latency", "request_code=send_message_v2", "response_code=success", "result=success")
	sends1, _ := sumOf(mfs, "rocketmq_rpc_latency", "request_code=send_message", "response_code=success", "result=success")
	if sends+sends1 < n {
		t.Errorf("rpc latency has %v+%v send samples, want >= %d", sends, sends1, n)
	}
	if _, series := sumOf(mfs, "rocketmq_rpc_latency", "request_code=heart_beat"); series == 0 {
		t.Error("no heartbeat in rpc latency")
	}
	// The counters of the runtime statistics: n messages in; the consumer
	// pulled all n (it holds n-m unconsumed), so n out to its group.
	if v, series := sumOf(mfs, "rocketmq_messages_in_total", "topic="+topic); series != 1 || v != n {
		t.Errorf("messages in %v over %d series, want %d in one", v, series, n)
	}
	if v, _ := sumOf(mfs, "rocketmq_throughput_in_total", "topic="+topic); v < n {
		t.Errorf("throughput in %v bytes, want at least %d", v, n)
	}
	wait.For(t, 30*time.Second, "n messages out to the group", func() bool {
		v, series := sumOf(scrape(t, addr), "rocketmq_messages_out_total", "topic="+topic, "consumer_group="+group)
		return series == 1 && v == n
	})
}

// TestMetricsListenerDefaults: metrics are off by default; with
// metricsExporterType=PROM the listener binds loopback, port 5557 unless
// configured; OTLP_GRPC is refused at start.
func TestMetricsListenerDefaults(t *testing.T) {
	bc := config.NewBrokerConfig()
	bc.EnsureDefaults()
	if bc.MetricsEnabled() {
		t.Fatal("metrics on by default")
	}
	c := startCluster(t, nil)
	if addr := c.b.MetricsAddr(); addr != "" {
		t.Fatalf("metrics listening at %s while off", addr)
	}

	// A free port to configure (the default 5557 may be taken on a
	// shared machine).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	dir := t.TempDir()
	bc = config.NewBrokerConfig()
	bc.BrokerIP1 = "127.0.0.1"
	bc.StorePathRootDir = dir
	bc.MappedFileSizeCommitLog = 1 << 20
	bc.MetricsExporterType = "PROM"
	bc.MetricsPromExporterPort = port
	b, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			conn.Close()
			t.Error("metrics listener still open after shutdown")
		}
	}()
	host, gotPort, err := net.SplitHostPort(b.MetricsAddr())
	if err != nil || host != "127.0.0.1" || gotPort != strconv.Itoa(port) {
		t.Fatalf("metrics bound at %s, want 127.0.0.1:%d", b.MetricsAddr(), port)
	}
	if mfs := scrape(t, b.MetricsAddr()); mfs["rocketmq_storage_size"] == nil || mfs["go_goroutines"] == nil {
		t.Fatal("scrape without rocketmq_storage_size or go_goroutines")
	}

	bc.MetricsExporterType = "OTLP_GRPC"
	bc.StorePathRootDir = t.TempDir()
	if _, err := startWith(bc); err == nil || !strings.Contains(err.Error(), "metricsExporterType") {
		t.Fatalf("OTLP_GRPC accepted: %v", err)
	}
}

// TestMetricsTLSEnforcing: with tls.server.mode=enforcing the metrics
// listener serves HTTPS only.
func TestMetricsTLSEnforcing(t *testing.T) {
	bc := config.NewBrokerConfig()
	bc.BrokerIP1 = "127.0.0.1"
	bc.StorePathRootDir = t.TempDir()
	bc.MappedFileSizeCommitLog = 1 << 20
	bc.MetricsExporterType = config.MetricsProm
	bc.TLS = config.TLSConfig{ServerMode: "enforcing", TestModeEnable: "true"}
	b, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
	})
	// The self-signed test-mode certificate: not verified here.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // test certificate
	resp, err := hc.Get("https://" + b.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "rocketmq_storage_size") {
		t.Fatalf("https scrape: %s %.200s", resp.Status, body)
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	if resp, err := plain.Get("http://" + b.MetricsAddr() + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP served while TLS is enforced")
		}
	}
}
