package main

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// within reports whether got is v within HdrHistogram's 3-digit precision.
func within(got, want float64) bool { return math.Abs(got-want) <= want*0.001+0.001 }

func TestLatencyRecorderPercentiles(t *testing.T) {
	r := newLatencyRecorder()
	// 1..1000 µs once each, one slow outlier of 250 ms.
	for us := 1; us <= 1000; us++ {
		r.record(time.Duration(us)*time.Microsecond, 1, 100)
	}
	r.record(250*time.Millisecond, 1, 100)
	s := r.summary()
	if s.Samples != 1001 {
		t.Fatalf("samples = %d, want 1001", s.Samples)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p50", s.P50, 0.501}, {"p90", s.P90, 0.901}, {"p99", s.P99, 0.991},
		{"p99.9", s.P999, 1.000}, {"max", s.Max, 250},
	} {
		if !within(c.got, c.want) {
			t.Errorf("%s = %.4f ms, want %.4f", c.name, c.got, c.want)
		}
	}
	wantAvg := (500.5*1000 + 250000) / 1001 / 1000
	if !within(s.Avg, wantAvg) {
		t.Errorf("avg = %.4f ms, want %.4f", s.Avg, wantAvg)
	}
	if got := r.bytesTotal.Load(); got != 1001*100 {
		t.Errorf("bytes = %d, want %d", got, 1001*100)
	}
}

func TestLatencyRecorderBatchesAndClamps(t *testing.T) {
	r := newLatencyRecorder()
	r.record(2*time.Millisecond, 16, 10) // one batch send of 16 messages
	r.record(0, 1, 10)                   // below the range: counted as 1 µs
	r.record(2*time.Hour, 1, 10)         // above the range: clamped, still counted
	s := r.summary()
	if s.Samples != 18 {
		t.Fatalf("samples = %d, want 18", s.Samples)
	}
	if !within(s.P50, 2) {
		t.Errorf("p50 = %.4f ms, want 2", s.P50)
	}
	if s.Max < 3_599_000 {
		t.Errorf("max = %.1f ms, want the clamp at 1 h", s.Max)
	}
	if empty := newLatencyRecorder().summary(); empty != (latencySummary{}) {
		t.Errorf("empty summary = %+v", empty)
	}
}

func TestLatencyRecorderTickAndFailures(t *testing.T) {
	r := newLatencyRecorder()
	r.record(time.Millisecond, 1, 1)
	r.record(3*time.Millisecond, 1, 1)
	r.fail("SYSTEM_BUSY", 2)
	r.fail("transport", 1)
	r.fail("SYSTEM_BUSY", 1)
	iv := r.tick()
	if iv.count != 2 || iv.failures != 4 || iv.avg != 2*time.Millisecond || iv.max != 3*time.Millisecond {
		t.Errorf("interval = %+v", iv)
	}
	if iv := r.tick(); iv != (interval{}) {
		t.Errorf("second interval = %+v, want zero", iv)
	}
	if r.summary().Samples != 2 {
		t.Errorf("tick must not reset the histogram")
	}
	f := r.failuresByReason()
	if f["SYSTEM_BUSY"] != 3 || f["transport"] != 1 || len(f) != 2 {
		t.Errorf("failures = %v", f)
	}
	line := progressLine("send", 2*time.Second, interval{count: 10, failures: 1, avg: 1500 * time.Microsecond, max: 3 * time.Millisecond}, 42)
	for _, want := range []string{"send TPS 10", "failures 1", "avg RT 1.500 ms", "max RT 3.000 ms", "total 42"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}

func TestBenchReport(t *testing.T) {
	rep := benchReport{Kind: "produce", Mode: modeSync, Topic: "T", Size: 1024, Workers: 2, Batch: 1,
		Messages: 2048, Bytes: 2048 * 1024, Failures: 3, FailedBy: map[string]int64{"SYSTEM_BUSY": 3},
		Latency: latencySummary{Samples: 2048, P99: 1.5}, LatencyOf: "send latency"}
	rep.finish(2 * time.Second)
	if rep.TPS != 1024 || rep.MBps != 1 {
		t.Errorf("tps %v MB/s %v, want 1024 and 1", rep.TPS, rep.MBps)
	}
	var b strings.Builder
	if err := rep.writeText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2048 messages", "TPS 1024 msgs/s", "1.00 MB/s", "SYSTEM_BUSY: 3", "p99 1.500"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
	raw, err := json.Marshal(&rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back["tps"] != 1024.0 || back["latency"].(map[string]any)["p99Ms"] != 1.5 {
		t.Errorf("json report: %s", raw)
	}
}

func TestBenchFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "produce", "--mode", "fast"}, "--mode"},
		{[]string{"bench", "produce", "-s", "0"}, "message size"},
		{[]string{"bench", "produce", "-w", "0"}, "workers"},
		{[]string{"bench", "produce", "--batch", "0"}, "--batch"},
		{[]string{"bench", "produce", "--batch", "1000", "-s", "8192"}, "over 4 MiB"},
		{[]string{"bench", "produce", "--rate", "-1"}, "--rate"},
		{[]string{"bench", "produce", "--rate", "10", "-w", "64"}, "at least 1 msg/s"},
		{[]string{"bench", "produce", "--window", "0"}, "--window"},
		{[]string{"bench", "produce", "--count", "10", "--duration", "1s"}, "not both"},
		{[]string{"bench", "produce", "--duration", "0s"}, "--duration"},
		{[]string{"bench", "produce", "--count", "-1"}, "--count"},
		{[]string{"bench", "produce", "-t", ""}, "topic is required"},
		{[]string{"bench", "produce", "--topic-count", "0"}, "--topic-count"},
		{[]string{"bench", "consume", "--pull-batch", "0"}, "--pull-batch"},
		{[]string{"bench", "consume", "--count", "5", "--duration", "3s"}, "not both"},
	} {
		// No NameServer is reachable at this address: validation must fail
		// before any call.
		out, err := rocketctl(t, append([]string{"-n", "127.0.0.1:1"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want it to mention %q\n%s", c.args, err, c.want, out)
		}
	}
}

func TestBenchFlagDefaults(t *testing.T) {
	o := benchOptions{topic: "T", size: 1024, workers: 1, duration: 10 * time.Second, mode: modeSync, batch: 1, window: 16, topics: 1}
	if err := o.validateProduce(false); err != nil {
		t.Errorf("defaults: %v", err)
	}
	o.count, o.duration = 1000, 10*time.Second
	if err := o.validateProduce(false); err != nil {
		t.Errorf("--count with the default duration: %v", err)
	}
	o.rate, o.workers = 20000, 64
	if err := o.validateProduce(false); err != nil {
		t.Errorf("--rate 20000 -w 64: %v", err)
	}
	root, closeClient := newRootCommand()
	defer closeClient()
	produce, _, err := root.Find([]string{"bench", "produce"})
	if err != nil {
		t.Fatalf("bench produce not registered: %v", err)
	}
	for name, want := range map[string]string{"size": "1024", "workers": "1", "mode": "sync", "batch": "1", "duration": "10s", "rate": "0", "topic-count": "1"} {
		if f := produce.Flags().Lookup(name); f == nil || f.DefValue != want {
			t.Errorf("bench produce --%s default = %v, want %s", name, f, want)
		}
	}
	if f := produce.Flags().ShorthandLookup("s"); f == nil || f.Name != "size" {
		t.Errorf("-s is not --size")
	}
}

// TestPacedParts: the parts of a paced send's latency add up to it, and
// the tail breakdown covers the sends at or above the p99.
func TestPacedParts(t *testing.T) {
	p := newPacedParts()
	base := time.Unix(1000, 0)
	// 99 quick sends: due, sent 20 µs late, answered after 300 µs.
	for i := range 99 {
		due := base.Add(time.Duration(i) * time.Millisecond)
		p.record(due, time.Time{}, due.Add(20*time.Microsecond), due.Add(320*time.Microsecond), 1)
	}
	// One send queued 5 ms behind its worker's previous answer, then
	// sent 100 µs later and answered after 1 ms more.
	due := base.Add(time.Second)
	p.record(due, due.Add(5*time.Millisecond), due.Add(5100*time.Microsecond), due.Add(6100*time.Microsecond), 2)
	s := p.summary(6.1)
	if s == nil {
		t.Fatal("no summary")
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"behind p50", s.BehindP50, 0.001}, {"behind p99", s.BehindP99, 5}, {"late p50", s.LateP50, 0.02},
		{"late p99", s.LateP99, 0.1}, {"rtt p50", s.RTTP50, 0.3}, {"rtt p99", s.RTTP99, 1},
		{"tail from", s.TailFrom, 6.1}, {"tail behind", s.TailBehindMean, 5}, {"tail late", s.TailLateMean, 0.1},
		{"tail rtt", s.TailRTTMean, 1},
	} {
		if !within(c.got, c.want) {
			t.Errorf("%s = %.4f ms, want %.4f", c.name, c.got, c.want)
		}
	}
	if s.TailSamples != 2 {
		t.Errorf("tail samples = %d, want 2 (one send of 2 messages)", s.TailSamples)
	}
	// A send slower than the tail's range lands in its last bucket.
	p.record(due, due, due, due.Add(2*time.Second), 1)
	if s := p.summary(5000); s.TailSamples != 1 || s.TailFrom != 1000 {
		t.Errorf("beyond the range: %d samples from %.1f ms, want 1 from 1000", s.TailSamples, s.TailFrom)
	}
	if newPacedParts().summary(1) != nil {
		t.Error("empty breakdown: want nil")
	}
}

// BenchmarkPacedPartsRecord is what the breakdown adds to each paced send.
//
//	go test -run '^$' -bench PacedParts -benchmem ./cmd/rocketctl/
func BenchmarkPacedPartsRecord(b *testing.B) {
	p := newPacedParts()
	due := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		p.record(due, due.Add(100*time.Microsecond), due.Add(130*time.Microsecond), due.Add(500*time.Microsecond), 1)
	}
}

// TestPullDeadline: a pull's context is reused while its timer is
// stopped in time, canceled when the timer fires (which disarm reports),
// and replaced by a fresh one for the next pull.
func TestPullDeadline(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	var d pullDeadline
	defer d.stop()
	first := d.arm(parent, time.Hour)
	if d.disarm() {
		t.Fatal("disarm reported a timeout an hour early")
	}
	if again := d.arm(parent, time.Hour); again != first || again.Err() != nil {
		t.Fatal("context not reused after a pull that returned in time")
	}
	d.disarm()
	short := d.arm(parent, time.Millisecond)
	<-short.Done()
	if !d.disarm() {
		t.Fatal("disarm after the timer fired: no timeout reported")
	}
	next := d.arm(parent, time.Hour)
	if next == short || next.Err() != nil {
		t.Fatal("no fresh context after a timeout")
	}
	cancel()
	<-next.Done() // the run's end reaches the pull
}
