package main

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
