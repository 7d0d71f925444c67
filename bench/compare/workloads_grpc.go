package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	"go.uber.org/zap"
)

// The gRPC workloads, in table order: the official Go v5 SDK
// (rocketmq-clients/golang v5.1.4) against a gRPC MessagingService.
var grpcWorkloads = []struct{ id, title string }{
	{"g1k1", "gRPC produce 1 KiB, 1 producer (msgs/s)"},
	{"g1kN", "gRPC produce 1 KiB, %d producers (msgs/s)"},
	{"g1kNp99", "gRPC send p99, %d producers (ms)"},
	{"gconsume", "gRPC SimpleConsumer receive + ack, %s backlog (msgs/s)"},
}

const (
	grpcConsumeGroup = "BenchSimpleGroup"
	grpcWarmupGroup  = "BenchSimpleWarmup"
	grpcBatch        = 32               // messages per Receive (the proxy's long-polling batch size)
	grpcInvisible    = 30 * time.Second // long enough that no message is redelivered during the run
	// A Receive's long polling: the proxy's minimum
	// (grpcClientConsumerMinLongPollingTimeoutMillis, 5 s); with less the
	// RPC's deadline leaves too little and both servers answer
	// ILLEGAL_POLLING_TIME.
	grpcAwait     = 5 * time.Second
	grpcConsumers = 16
)

// isGRPCTarget tells the targets driven by the SDK.
func isGRPCTarget(name string) bool { return name == "rocketd-grpc" || name == "rocketmq-proxy" }

// sdkDriver drives one gRPC endpoint with the v5 SDK, in this process
// (a separate process from the servers, as NATS's driver).
type sdkDriver struct {
	endpoint string // host:port of the gRPC service
	payload  []byte
	logf     func(format string, args ...any)
}

var sdkInit sync.Once

// sdkGCPercent is this process's GOGC while the SDK drives a target,
// unless the environment sets one: as rocketctl bench does for its
// client, and for the same reason (GC was ~13 % of the SDK's CPU at the
// default, on the cores the servers share). Not when rocketd runs in this
// process (--profile): its collector would change too.
const sdkGCPercent = 400

// sdkGCApplies tells whether the SDK's workloads run at sdkGCPercent.
func (h *harness) sdkGCApplies() bool { return os.Getenv("GOGC") == "" && h.profileDir == "" }

// sdkGC sets sdkGCPercent for the SDK's workloads and returns what puts
// the previous setting back.
func (h *harness) sdkGC() (restore func()) {
	if !h.sdkGCApplies() {
		return func() {}
	}
	prev := debug.SetGCPercent(sdkGCPercent)
	return func() { debug.SetGCPercent(prev) }
}

// initSDK sends the SDK's log (it writes ~/logs/rocketmq by default) under
// dir, at warn level, and turns TLS off (the SDK dials TLS by default; both
// servers serve plaintext on the one port).
//
// It also silences the SDK's per-call log: v5.1.4 logs every unary RPC
// (each SendMessage, each AckMessage) at info through a zap logger of its
// own, into /tmp/rocketmq-logger.log, whatever rocketmq.client.logLevel
// says; its ConnOption WithZapLogger would replace that logger, but the
// SDK's client manager creates its RPC clients without the client's
// ConnOptions, so the one way in is the exported NewRpcClient hook. That
// log cost ~10 % of the client's CPU (JSON encoding and a write(2) per
// call; 130 MB per run) on the cores the servers share: it is the load
// generator's weight, the same per call for every target, so it goes
// (bench/results/2026-12-03-sdklog.md measured both ways).
func initSDK(dir string, callLog bool) {
	sdkInit.Do(func() {
		_ = os.Setenv("rocketmq.client.logRoot", filepath.Join(dir, "sdk-logs"))
		_ = os.Setenv("rocketmq.client.logLevel", "warn")
		rmq.ResetLogger()
		rmq.EnableSsl = false
		if !callLog {
			newRPC := rmq.NewRpcClient
			rmq.NewRpcClient = func(target string, opts ...rmq.RpcClientOption) (rmq.RpcClient, error) {
				return newRPC(target, append(opts, rmq.WithRpcClientConnOption(rmq.WithZapLogger(zap.NewNop())))...)
			}
		}
	})
}

func newSDKDriver(endpoint string) *sdkDriver {
	payload := make([]byte, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range payload {
		payload[i] = byte('a' + rng.IntN(26))
	}
	return &sdkDriver{endpoint: endpoint, payload: payload}
}

func (d *sdkDriver) config(group string) *rmq.Config {
	return &rmq.Config{Endpoint: d.endpoint, ConsumerGroup: group,
		Credentials: &credentials.SessionCredentials{}}
}

// startRetry is how long a client's start is retried: a server that
// accepts connections may still answer its first QueryRoute after the
// SDK's 3 s timeout (a cold JVM on a loaded machine).
const startRetry = 60 * time.Second

// producers starts n SDK producers of topic (each its own client and
// connection), stopped by the returned function.
func (d *sdkDriver) producers(topic string, n int) ([]rmq.Producer, func(), error) {
	ps := make([]rmq.Producer, 0, n)
	stop := func() {
		for _, p := range ps {
			_ = p.GracefulStop()
		}
	}
	deadline := time.Now().Add(startRetry)
	for range n {
		for {
			p, err := rmq.NewProducer(d.config(""), rmq.WithTopics(topic))
			if err == nil {
				if err = p.Start(); err == nil {
					ps = append(ps, p)
					break
				}
			}
			if time.Now().After(deadline) {
				stop()
				return nil, nil, fmt.Errorf("sdk producer: %w", err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return ps, stop, nil
}

// produce sends 1 KiB messages from n started producers (an SDK
// producer's start takes seconds: not measured), each synchronously (the
// next send after the answer), for dur or, with count > 0, until count
// messages were stored.
func (d *sdkDriver) produce(topic string, n int, dur time.Duration, count int64) (metric, error) {
	ps, stop, err := d.producers(topic, n)
	if err != nil {
		return metric{}, err
	}
	defer stop()
	return d.send(ps, topic, dur, count)
}

// send is produce's measured part.
func (d *sdkDriver) send(ps []rmq.Producer, topic string, dur time.Duration, count int64) (metric, error) {
	var (
		mu    sync.Mutex
		hist  = hdrhistogram.New(1, 3_600_000_000, 3)
		sent  atomic.Int64
		fails atomic.Int64
		first = map[string]int64{}
	)
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := hdrhistogram.New(1, 3_600_000_000, 3)
			failedBy := map[string]int64{}
			for ctx.Err() == nil && (count == 0 || sent.Load() < count) {
				t0 := time.Now()
				sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := p.Send(sctx, &rmq.Message{Topic: topic, Body: d.payload})
				scancel()
				if err != nil {
					fails.Add(1)
					failedBy[sdkErrorCode(err)]++
					continue
				}
				_ = local.RecordValue(max(time.Since(t0).Microseconds(), 1))
				sent.Add(1)
			}
			mu.Lock()
			hist.Merge(local)
			for k, v := range failedBy {
				first[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	m := metric{TPS: float64(sent.Load()) / elapsed.Seconds(), P99: float64(hist.ValueAtQuantile(99)) / 1000,
		Max: float64(hist.Max()) / 1000, Failures: fails.Load(), Messages: sent.Load()}
	if len(first) > 0 {
		m.FailedBy = first
	}
	if m.Messages == 0 {
		return m, fmt.Errorf("sdk produce: no message stored (%d failures: %s)", m.Failures, codeCounts(first))
	}
	return m, nil
}

// sdkErrorCode names a failed send by the SDK's error: the status code the
// server answered when the SDK reports one, else the error's first words.
func sdkErrorCode(err error) string {
	var es *rmq.ErrRpcStatus
	if errors.As(err, &es) {
		return fmt.Sprintf("CODE_%d", es.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "TIMEOUT"
	}
	s := err.Error()
	if len(s) > 40 {
		s = s[:40]
	}
	return strings.TrimSpace(s)
}

// simpleConsumers starts grpcConsumers SimpleConsumer clients of group
// subscribed to topic, stopped by the returned function.
func (d *sdkDriver) simpleConsumers(topic, group string) ([]rmq.SimpleConsumer, func(), error) {
	scs := make([]rmq.SimpleConsumer, 0, grpcConsumers)
	stop := func() {
		for _, sc := range scs {
			_ = sc.GracefulStop()
		}
	}
	deadline := time.Now().Add(startRetry)
	for range grpcConsumers {
		for {
			sc, err := rmq.NewSimpleConsumer(d.config(group), rmq.WithSimpleAwaitDuration(grpcAwait),
				rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
			if err == nil {
				if err = sc.Start(); err == nil {
					scs = append(scs, sc)
					break
				}
			}
			if time.Now().After(deadline) {
				stop()
				return nil, nil, fmt.Errorf("sdk simple consumer: %w", err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return scs, stop, nil
}

// consume receives with started SimpleConsumer clients (one goroutine
// each: Receive a batch of grpcBatch, then Ack each message) until want
// messages were acked, or for dur when want is 0 (the warm-up), and
// returns the acked messages per second.
func (d *sdkDriver) consume(scs []rmq.SimpleConsumer, want int64, dur time.Duration) (metric, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var (
		acked, ackFails, recvFails atomic.Int64
		receives, received         atomic.Int64
		ackNanos                   atomic.Int64
		doneAt                     atomic.Int64 // ns since start when want was reached
		wg                         sync.WaitGroup
		lastErr                    atomic.Value
	)
	start := time.Now()
	for _, sc := range scs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mvs, err := sc.Receive(ctx, grpcBatch, grpcInvisible)
				if err != nil {
					if ctx.Err() == nil && !isNoMessage(err) {
						recvFails.Add(1)
						lastErr.Store(err.Error())
						time.Sleep(100 * time.Millisecond) // no busy loop on a refusal
					}
					continue
				}
				receives.Add(1)
				received.Add(int64(len(mvs)))
				for _, mv := range mvs {
					actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
					t0 := time.Now()
					err := sc.Ack(actx, mv)
					ackNanos.Add(int64(time.Since(t0)))
					acancel()
					if err != nil {
						ackFails.Add(1)
						lastErr.Store(err.Error())
						continue
					}
					if n := acked.Add(1); want > 0 && n == want {
						doneAt.Store(int64(time.Since(start)))
						cancel()
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if at := doneAt.Load(); at > 0 {
		elapsed = time.Duration(at)
	}
	m := metric{TPS: float64(acked.Load()) / elapsed.Seconds(), Messages: acked.Load(), Failures: ackFails.Load() + recvFails.Load()}
	if n := receives.Load(); n > 0 && received.Load() > 0 {
		d.logf("%d receives of %.1f messages on average, mean ack %.2f ms", n, float64(received.Load())/float64(n),
			float64(ackNanos.Load())/float64(received.Load())/1e6)
	}
	if want > 0 && acked.Load() < want {
		last, _ := lastErr.Load().(string)
		return m, fmt.Errorf("sdk consume: %d of %d messages acked in %s (%d receive, %d ack failures; last: %s)",
			acked.Load(), want, dur, recvFails.Load(), ackFails.Load(), last)
	}
	return m, nil
}

// isNoMessage tells the answer of a Receive that found nothing before its
// long polling ended (MESSAGE_NOT_FOUND).
func isNoMessage(err error) bool {
	var es *rmq.ErrRpcStatus
	if errors.As(err, &es) && es.Code == 40401 {
		return true
	}
	return strings.Contains(err.Error(), "MESSAGE_NOT_FOUND")
}

// grpcWorkloadsRun creates the topics through the NameServer, then runs the
// gRPC workloads against s's gRPC endpoint.
func (h *harness) grpcWorkloadsRun(ctx context.Context, name string, s *server, r *targetResult) error {
	if err := h.createTopics(ctx, s); err != nil {
		return err
	}
	r.routed = time.Since(s.started)
	r.idleRSS = s.rss()
	initSDK(h.work, h.sdkCallLog)
	defer h.sdkGC()()
	d := newSDKDriver(s.grpc)
	d.logf = func(format string, args ...any) { h.logf(name+" "+format, args...) }
	if _, err := d.produce(benchTopic, 16, h.warmup, 0); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	for _, st := range []struct {
		id, profile string
		producers   int
	}{{"g1k1", "", 1}, {"g1kN", "grpc-produce", h.grpcProducers}} {
		ps, stop, err := d.producers(benchTopic, st.producers)
		if err != nil {
			return fmt.Errorf("%s: %w", st.id, err)
		}
		cpu := startCPUShare(s)
		m, err := h.profiled(ctx, name, st.profile, s, func() (metric, error) {
			return h.clientProfiled(name, st.profile, func() (metric, error) { return d.send(ps, benchTopic, h.duration, 0) })
		})
		if err == nil {
			r.notes = append(r.notes, cpu.note(st.id, m.Messages))
			h.logf("%s %s: %s", name, st.id, cpu.note(st.id, m.Messages))
		}
		stop()
		if err != nil {
			return fmt.Errorf("%s: %w", st.id, err)
		}
		h.logf("%s %s: %.0f msgs/s, p99 %.3f ms, failures %d", name, st.id, m.TPS, m.P99, m.Failures)
		r.metrics[st.id] = m
	}
	r.metrics["g1kNp99"] = r.metrics["g1kN"]
	// The consume path's warm-up: what the produce workloads stored, read
	// by another group for the warm-up's length.
	scs, stop, err := d.simpleConsumers(benchTopic, grpcWarmupGroup)
	if err != nil {
		return fmt.Errorf("consume warm-up: %w", err)
	}
	_, err = d.consume(scs, 0, h.warmup)
	stop()
	if err != nil {
		return fmt.Errorf("consume warm-up: %w", err)
	}
	h.logf("%s: filling a gRPC backlog of %d messages", name, h.grpcBacklog)
	fill, err := d.produce(backlogTopic, h.grpcProducers, 5*time.Minute, int64(h.grpcBacklog))
	if err != nil {
		return fmt.Errorf("backlog fill: %w", err)
	}
	if scs, stop, err = d.simpleConsumers(backlogTopic, grpcConsumeGroup); err != nil {
		return fmt.Errorf("backlog consume: %w", err)
	}
	defer stop()
	cpu := startCPUShare(s)
	m, err := h.profiled(ctx, name, "grpc-consume", s, func() (metric, error) {
		return h.clientProfiled(name, "grpc-consume", func() (metric, error) { return d.consume(scs, fill.Messages, 5*time.Minute) })
	})
	if err == nil {
		r.notes = append(r.notes, cpu.note("gconsume", m.Messages))
		h.logf("%s gconsume: %s", name, cpu.note("gconsume", m.Messages))
	}
	if err != nil {
		return fmt.Errorf("backlog consume: %w", err)
	}
	h.logf("%s gconsume: %.0f msgs/s (%d messages, %d failures)", name, m.TPS, m.Messages, m.Failures)
	r.metrics["gconsume"] = m
	r.backlog = int(fill.Messages)
	return nil
}

// grpcWorkloadsDoc describes the gRPC workloads for the results file.
func (h *harness) grpcWorkloadsDoc() string {
	var b strings.Builder
	b.WriteString("- gRPC targets (rocketd `serve --grpc-port`; RocketMQ's NameServer and `ProxyStartup -pm local`, the broker\n")
	b.WriteString("  inside the proxy's JVM, both ASYNC_FLUSH): the official Go SDK, rocketmq-clients/golang v5.1.4, in the\n")
	b.WriteString("  harness's process (plaintext), topics of 8 queues created through the NameServer.\n")
	if h.sdkCallLog {
		b.WriteString("  The SDK logs every unary RPC at info into /tmp/rocketmq-logger.log (its default; --sdk-call-log).\n")
	} else {
		b.WriteString("  The SDK's info line per unary RPC (its default, to /tmp/rocketmq-logger.log) is off: a no-op logger\n")
		b.WriteString("  through its NewRpcClient hook (--sdk-call-log keeps it).\n")
	}
	if h.sdkGCApplies() {
		fmt.Fprintf(&b, "  The harness runs at GOGC %d while the SDK drives a target (load-generator weight, as rocketctl bench).\n", sdkGCPercent)
	}
	fmt.Fprintf(&b, "  RocketMQ %s from Maven Central (rocketmq-proxy), proxy JVM heap %s, NameServer heap %s.\n",
		rocketmqVersion, strings.Join(brokerHeap, " "), strings.Join(namesrvHeap, " "))
	fmt.Fprintf(&b, "- gRPC produce: 1 or %d SDK producers (a client and connection each), each sending 1 KiB messages\n", h.grpcProducers)
	b.WriteString("  synchronously (`Producer.Send`, the next after the answer); the p99 is the send latency of the\n")
	b.WriteString("  multi-producer workload. The producers start before the clock runs. Warm-up: 16 producers.\n")
	fmt.Fprintf(&b, "- gRPC SimpleConsumer: a backlog of %d messages of 1 KiB is filled unmeasured (%d producers), then %d\n",
		h.grpcBacklog, h.grpcProducers, grpcConsumers)
	fmt.Fprintf(&b, "  SimpleConsumer clients of one new group each loop `Receive(%d, %s)` (long polling %s) and `Ack` each\n",
		grpcBatch, grpcInvisible, grpcAwait)
	b.WriteString("  message; the rate is acked messages per second until the whole backlog is acked. Before it, another\n")
	fmt.Fprintf(&b, "  group reads what the produce workloads stored for %s (the consume path's warm-up).\n", h.warmup)
	return b.String()
}

// clientProfiled runs f; with --profile it saves a CPU profile of this
// process, the SDK clients, over f's run (DIR/<target>-<what>-client-cpu.pprof):
// on a shared machine the client's share of the CPU bounds what a server
// can show.
func (h *harness) clientProfiled(target, what string, f func() (metric, error)) (metric, error) {
	if what == "" || h.profileDir == "" {
		return f()
	}
	path := filepath.Join(h.profileDir, target+"-"+what+"-client-cpu.pprof")
	out, err := os.Create(path)
	if err != nil {
		return metric{}, err
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return metric{}, fmt.Errorf("client profile: %w", err)
	}
	m, err := f()
	pprof.StopCPUProfile()
	return m, err
}

// cpuShare measures, over a workload, the CPU time the server's and this
// (the client's) processes ran and waited for a CPU (the sums of their
// threads' /proc/PID/task/TID/schedstat): on a shared, oversubscribed
// machine a process gets a share of the cores that the other processes'
// runnable threads decide, and the wait shows how far that bounded it.
type cpuShare struct {
	server, client [2]time.Duration // run, wait
	start          time.Time
	s              *server
}

func startCPUShare(s *server) *cpuShare {
	c := &cpuShare{s: s, start: time.Now()}
	c.server, c.client = c.read()
	return c
}

func (c *cpuShare) read() (server, client [2]time.Duration) {
	for _, p := range c.s.procs {
		r, w := schedstat(p.Process.Pid)
		server[0], server[1] = server[0]+r, server[1]+w
	}
	client[0], client[1] = schedstat(os.Getpid())
	return server, client
}

// note renders what ran and waited since the start, per message.
func (c *cpuShare) note(id string, messages int64) string {
	server, client := c.read()
	wall := time.Since(c.start)
	per := func(d time.Duration) string { return perMessage(d, messages) }
	return fmt.Sprintf("%s over %s: server ran %s (%s a message) and waited %s for a CPU; the SDK client ran %s (%s a message) and waited %s",
		id, wall.Round(100*time.Millisecond), (server[0] - c.server[0]).Round(time.Millisecond), per(server[0]-c.server[0]),
		(server[1] - c.server[1]).Round(time.Millisecond), (client[0] - c.client[0]).Round(time.Millisecond),
		per(client[0]-c.client[0]), (client[1] - c.client[1]).Round(time.Millisecond))
}

// serverNote renders what the server's threads ran and waited for a CPU
// since the start.
func (c *cpuShare) serverNote(messages int64) string {
	server, _ := c.read()
	run, wait := server[0]-c.server[0], server[1]-c.server[1]
	return fmt.Sprintf("over %s the server ran %s (%s a message) and its threads waited %s for a CPU",
		time.Since(c.start).Round(100*time.Millisecond), run.Round(time.Millisecond), perMessage(run, messages), wait.Round(time.Millisecond))
}

// serverPerMessage is the server's run time since the start over messages
// (0 for none).
func (c *cpuShare) serverPerMessage(messages int64) time.Duration {
	if messages <= 0 {
		return 0
	}
	server, _ := c.read()
	return (server[0] - c.server[0]) / time.Duration(messages)
}

// perMessage renders d shared over messages ("-" for none).
func perMessage(d time.Duration, messages int64) string {
	if messages <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(messages))
}

// schedstat sums the run and run-queue wait times of pid's threads; zero
// when unknown. (Threads that ended in between are lost: both servers keep
// theirs, and so does the Go runtime.)
func schedstat(pid int) (run, wait time.Duration) {
	dirs, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var r, w int64
		if _, err := fmt.Sscan(string(b), &r, &w); err == nil {
			run, wait = run+time.Duration(r), wait+time.Duration(w)
		}
	}
	return run, wait
}
