package main

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The RocketMQ 5 SDK (the gRPC workloads) imports opencensus, whose
	// package init starts a worker that lives for the process.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("go.opencensus.io/stats/view.(*worker).start"))
}

func TestParseFlags(t *testing.T) {
	h, err := parseFlags([]string{"--quick", "--targets", "rocketd-async, nats-always"})
	if err != nil {
		t.Fatal(err)
	}
	if h.duration != 3*time.Second || h.warmup != time.Second || h.backlog != 100_000 || h.out != "" {
		t.Errorf("--quick: duration %s warmup %s backlog %d out %q", h.duration, h.warmup, h.backlog, h.out)
	}
	if strings.Join(h.targets, ",") != "rocketd-async,nats-always" {
		t.Errorf("targets = %v", h.targets)
	}
	h, err = parseFlags([]string{"--quick", "--duration", "7s"})
	if err != nil || h.duration != 7*time.Second || len(h.targets) != len(allTargets) {
		t.Errorf("--quick --duration 7s: %v %+v", err, h)
	}
	h, err = parseFlags(nil)
	if err != nil || h.duration != 15*time.Second || h.backlog != 1_000_000 || !strings.HasPrefix(h.out, "bench/results/") {
		t.Errorf("defaults: %v %+v", err, h)
	}
	for _, bad := range [][]string{{"--targets", "kafka"}, {"--duration", "10ms"}, {"--rate", "1"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestTableRatios checks that every ratio reads "above 1: rocketd better",
// against the rocketd target of the same durability.
func TestTableRatios(t *testing.T) {
	h := &harness{rate: 20000, backlog: 1_000_000, duration: 15 * time.Second}
	results := []*targetResult{
		{name: "rocketd-async", startup: 20 * time.Millisecond, routed: 500 * time.Millisecond, idleRSS: 10 << 20,
			metrics: map[string]metric{"p1k1": {TPS: 1000}, "rate": {P99: 2}, "first": {Max: 40}}},
		{name: "rocketd-sync", metrics: map[string]metric{"p1k1": {TPS: 100}}},
		{name: "rocketmq-async", startup: 2 * time.Second, routed: 4 * time.Second, idleRSS: 700 << 20,
			metrics: map[string]metric{"p1k1": {TPS: 500}, "rate": {P99: 8}, "first": {Max: 4500}}},
		{name: "nats-always", metrics: map[string]metric{"p1k1": {TPS: 400}}},
	}
	table := h.table(results)
	for _, want := range []string{
		"| produce 1 KiB, 1 producer (msgs/s) | 1000 | 100 (×10.00) | 500 (×2.00) | 400 (×0.25) |",
		"| p99 at 20000 msgs/s (ms) | 2.00 | - | 8.00 (×4.00) | - |",
		"| consume 1 M backlog (msgs/s) | - | - | - | - |",
		"| start to accepting connections (ms) | 20 | - | 2000 (×100.00) | - |",
		"| idle RSS after start (MiB) | 10 | - | 700 (×70.00) | - |",
		"| max send latency, first 15s after a fresh start (ms) | 40.0 | - | 4500.0 (×112.50) | - |",
		"| start to topic route, broker registered (ms) | 500 | - | 4000 (×8.00) | - |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestWorkloadsFlag(t *testing.T) {
	h, err := parseFlags([]string{"--quick", "--workloads", "pipe1, batch32"})
	if err != nil {
		t.Fatal(err)
	}
	if !h.want("pipe1") || !h.want("batch32") || h.want("p1k64") || h.want("backlog") {
		t.Errorf("--workloads pipe1,batch32: selected %v", h.only)
	}
	if h, _ = parseFlags(nil); !h.want("backlog") || !h.want("pipe16") {
		t.Errorf("default: not every workload selected: %v", h.only)
	}
	if _, err := parseFlags([]string{"--workloads", "pipe2"}); err == nil {
		t.Error("--workloads pipe2: no error")
	}
}

func TestPipelinedArgs(t *testing.T) {
	got := strings.Join(pipelinedShapes[2].rocketctlArgs("T", 5*time.Second), " ")
	want := "produce -t T -s 1024 -w 1 --mode async --window 125 --batch 32 --duration 5s"
	if got != want {
		t.Errorf("batch32 args = %q, want %q", got, want)
	}
}

func TestParseFlagsGRPC(t *testing.T) {
	h, err := parseFlags([]string{"--quick", "--targets", "rocketd-grpc,rocketmq-proxy", "--rounds", "2"})
	if err != nil {
		t.Fatal(err)
	}
	if h.grpcBacklog != 30_000 || h.grpcProducers != 32 || h.rounds != 2 || strings.Join(h.targets, ",") != "rocketd-grpc,rocketmq-proxy" {
		t.Errorf("--quick gRPC: backlog %d producers %d rounds %d targets %v", h.grpcBacklog, h.grpcProducers, h.rounds, h.targets)
	}
	h, err = parseFlags(nil)
	if err != nil || h.grpcBacklog != 200_000 || h.rounds != 1 || slices.Contains(h.targets, "rocketd-grpc") || h.sdkCallLog {
		t.Errorf("defaults: %v %+v", err, h)
	}
	if h, err = parseFlags([]string{"--sdk-call-log"}); err != nil || !h.sdkCallLog {
		t.Errorf("--sdk-call-log: %v, sdkCallLog %v", err, h != nil && h.sdkCallLog)
	}
	for _, bad := range [][]string{{"--rounds", "0"}, {"--grpc-producers", "0"}, {"--grpc-backlog", "0"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestTableGRPC checks the gRPC rows: the proxy's ratio to rocketd gRPC,
// and no remoting rows when only gRPC targets ran.
func TestTableGRPC(t *testing.T) {
	h := &harness{grpcProducers: 32, grpcBacklog: 200_000}
	table := h.table([]*targetResult{
		{name: "rocketd-grpc", metrics: map[string]metric{"g1k1": {TPS: 3000}, "g1kN": {TPS: 9000, P99: 10}, "g1kNp99": {TPS: 9000, P99: 10}, "gconsume": {TPS: 4000}}},
		{name: "rocketmq-proxy", metrics: map[string]metric{"g1k1": {TPS: 1000}, "g1kN": {TPS: 3000, P99: 40}, "g1kNp99": {TPS: 3000, P99: 40}, "gconsume": {TPS: 2000}}},
	})
	for _, want := range []string{
		"| gRPC produce 1 KiB, 1 producer (msgs/s) | 3000 | 1000 (×3.00) |",
		"| gRPC produce 1 KiB, 32 producers (msgs/s) | 9000 | 3000 (×3.00) |",
		"| gRPC send p99, 32 producers (ms) | 10.00 | 40.00 (×4.00) |",
		"| gRPC SimpleConsumer receive + ack, 200 k backlog (msgs/s) | 4000 | 2000 (×2.00) |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "produce 128 B") {
		t.Errorf("remoting rows in a gRPC-only table:\n%s", table)
	}
}

// TestMergeRounds checks the median over rounds and that failures and
// errors of every round are kept.
func TestMergeRounds(t *testing.T) {
	round := func(tps, p99 float64, fails int64, err error) []*targetResult {
		return []*targetResult{{name: "rocketd-grpc", startup: time.Duration(tps) * time.Millisecond, err: err,
			metrics: map[string]metric{"g1kN": {TPS: tps, P99: p99, Failures: fails}}}}
	}
	boom := errors.New("boom")
	got := mergeRounds([][]*targetResult{round(100, 9, 1, nil), round(300, 1, 0, boom), round(200, 5, 2, nil)})
	if len(got) != 1 {
		t.Fatalf("%d results", len(got))
	}
	m := got[0].metrics["g1kN"]
	if m.TPS != 200 || m.P99 != 5 || m.Failures != 3 || got[0].startup != 200*time.Millisecond || !errors.Is(got[0].err, boom) {
		t.Errorf("three rounds: %+v startup %s err %v", m, got[0].startup, got[0].err)
	}
	got = mergeRounds([][]*targetResult{round(100, 4, 0, nil), round(300, 8, 0, nil)})
	if m := got[0].metrics["g1kN"]; m.TPS != 200 || m.P99 != 6 || got[0].err != nil {
		t.Errorf("two rounds: %+v err %v", m, got[0].err)
	}
}

// TestExitedZombie: a child that has ended but is not reaped yet (a
// zombie, which signal 0 still reaches) counts as exited, so waitTCP stops
// waiting for a server that died at start.
func TestExitedZombie(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	wait.For(t, 10*time.Second, "an ended, unreaped child seen as exited", func() bool { return exited(cmd) })
}

// TestSchedstat: this process's threads have run, and a busy loop adds to
// it.
func TestSchedstat(t *testing.T) {
	run0, _ := schedstat(os.Getpid())
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	run1, _ := schedstat(os.Getpid())
	if run0 <= 0 || run1 <= run0 {
		t.Errorf("run time %s then %s", run0, run1)
	}
}

// TestParseBenchJSONParts: a paced run's breakdown reaches the log line;
// an unpaced run has none.
func TestParseBenchJSONParts(t *testing.T) {
	m, err := parseBenchJSON([]byte(`{"tps":20000,"messages":200000,"latency":{"p99Ms":2.5,"maxMs":9},
		"latencyParts":{"behindP99Ms":1.5,"lateP99Ms":0.4,"roundTripP50Ms":0.3,"roundTripP99Ms":1.9,
		"tailFromMs":2.5,"tailBehindMeanMs":2.1,"tailLateMeanMs":0.01,"tailRoundTripMeanMs":0.8}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "sends at or above 2.50 ms: behind an earlier send 2.100 + late to send 0.010 + round trip 0.800 ms (means); " +
		"p99s: behind 1.500, late 0.400, round trip 1.900 ms (p50 0.300)"
	if m.P99 != 2.5 || m.Parts != want {
		t.Errorf("got p99 %v, parts %q\nwant %q", m.P99, m.Parts, want)
	}
	m, err = parseBenchJSON([]byte(`{"tps":1,"latency":{"p99Ms":1}}`))
	if err != nil || m.Parts != "" {
		t.Errorf("unpaced: parts %q, err %v", m.Parts, err)
	}
}
