package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
)

// runBench runs a bench command with --json and decodes its report.
func runBench(t *testing.T, args ...string) benchReport {
	t.Helper()
	out := mustRun(t, append(args, "--json", "--progress=false")...)
	var rep benchReport
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &rep); err != nil {
		t.Fatalf("%v: report is not JSON: %v\n%s", args, err, out)
	}
	return rep
}

// TestBenchSmoke runs `bench produce` and `bench consume` for a couple of
// seconds against an in-process rocketd: not a timed test, it checks that
// the tool works and that its numbers are consistent.
func TestBenchSmoke(t *testing.T) {
	// The counts must be exact: no SYSTEM_BUSY from the broker's flow
	// control (a send queued over 200 ms, which a loaded CI machine under
	// -race can cause) may count as a failure here.
	ns := startRocketdWith(t, func(bc *config.BrokerConfig) { bc.BrokerFastFailureEnable = false })
	mustRun(t, "-n", ns, "topic", "create", "-t", "BenchSmoke", "-r", "4", "-w", "4")
	waitFor(t, 10*time.Second, "the topic route", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", "BenchSmoke")
		return err == nil, out
	})

	sync := runBench(t, "-n", ns, "bench", "produce", "-t", "BenchSmoke", "-s", "256", "-w", "4", "--duration", "1s")
	if sync.Messages == 0 || sync.Failures != 0 || sync.Latency.Samples != sync.Messages {
		t.Fatalf("sync produce: %+v", sync)
	}
	l := sync.Latency
	if !(l.P50 > 0 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("sync produce percentiles out of order: %+v", l)
	}
	// The run ends at --duration; its clock starts with the workers, a
	// little after the command's own, so it may read just under 1 s.
	if sync.Bytes != sync.Messages*256 || sync.TPS <= 0 || sync.Seconds < 0.9 {
		t.Errorf("sync produce totals: %+v", sync)
	}

	// Exact counts: async in flight, a batch that does not divide the
	// count, and a paced run.
	async := runBench(t, "-n", ns, "bench", "produce", "-t", "BenchSmoke", "-s", "256", "-w", "2", "--mode", "async", "--count", "1000")
	batch := runBench(t, "-n", ns, "bench", "produce", "-t", "BenchSmoke", "-s", "256", "-w", "3", "--batch", "7", "--count", "500")
	paced := runBench(t, "-n", ns, "bench", "produce", "-t", "BenchSmoke", "-s", "256", "-w", "2", "--rate", "400", "--count", "200")
	for name, rep := range map[string]benchReport{"async": async, "batch": batch, "paced": paced} {
		if rep.Failures != 0 || rep.Latency.Samples != rep.Messages {
			t.Errorf("%s produce: %+v", name, rep)
		}
	}
	if async.Messages != 1000 || batch.Messages != 500 || paced.Messages != 200 {
		t.Errorf("messages: async %d (want 1000), batch %d (want 500), paced %d (want 200)", async.Messages, batch.Messages, paced.Messages)
	}
	if paced.Parts == nil || paced.Parts.TailSamples < 1 || paced.Parts.RTTP50 <= 0 {
		t.Errorf("paced produce: latency parts %+v, want a breakdown with a tail", paced.Parts)
	}
	if async.Parts != nil {
		t.Errorf("unpaced produce: latency parts %+v, want none", async.Parts)
	}
	if paced.Seconds < 0.4 {
		t.Errorf("200 messages at 400 msgs/s took %.2fs, want about 0.5s", paced.Seconds)
	}

	total := sync.Messages + async.Messages + batch.Messages + paced.Messages
	backlog := runBench(t, "-n", ns, "bench", "consume", "-t", "BenchSmoke", "--from-beginning", "--count", strconv.FormatInt(total, 10), "--suspend", "500ms")
	if backlog.Messages != total || backlog.Bytes != total*256 || backlog.Latency.Samples != total || backlog.Failures != 0 {
		t.Errorf("backlog consume of %d: %+v", total, backlog)
	}
	if sync.CPUSeconds <= 0 || backlog.CPUSeconds <= 0 {
		t.Errorf("client CPU not reported: produce %v s, consume %v s", sync.CPUSeconds, backlog.CPUSeconds)
	}

	// From the end: only what is sent while it runs, with end-to-end
	// latency.
	done := make(chan benchReport, 1)
	go func() {
		out, err := rocketctl(t, "-n", ns, "bench", "consume", "-t", "BenchSmoke", "--count", "300", "--suspend", "500ms", "--json", "--progress=false")
		var rep benchReport
		if err == nil {
			err = json.Unmarshal([]byte(strings.TrimSpace(out)), &rep)
		}
		if err != nil {
			t.Errorf("live consume: %v\n%s", err, out)
		}
		done <- rep
	}()
	var live benchReport
	deadline := time.After(30 * time.Second)
	for received := false; !received; {
		// Keep producing until the consumer has its 300: it may start
		// after the first of these sends.
		runBench(t, "-n", ns, "bench", "produce", "-t", "BenchSmoke", "-s", "64", "--count", "100")
		select {
		case live = <-done:
			received = true
		case <-deadline:
			t.Fatal("live consume did not receive 300 messages in 30s")
		default:
		}
	}
	if live.Messages != 300 || live.Latency.Samples < 300 || live.Latency.Max > 30_000 {
		t.Errorf("live consume: %+v", live)
	}
}

// TestBenchConsumeFewerThanCount: a backlog smaller than --count ends the
// run after --idle and says so, and TPS is not diluted by the idle wait.
func TestBenchConsumeFewerThanCount(t *testing.T) {
	ns := startRocketd(t)
	runBench(t, "-n", ns, "bench", "produce", "-t", "BenchFew", "-s", "64", "--count", "50")
	// The send auto-created the topic; its registration with the
	// NameServer follows asynchronously.
	waitFor(t, 10*time.Second, "the route of BenchFew", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", "BenchFew")
		return err == nil, out
	})
	rep := runBench(t, "-n", ns, "bench", "consume", "-t", "BenchFew", "--from-beginning", "--count", "1000",
		"--suspend", "200ms", "--idle", "1500ms")
	if rep.Messages != 50 || !strings.Contains(rep.Note, "received 50 of --count 1000") {
		t.Fatalf("consume of a 50-message backlog with --count 1000: %+v", rep)
	}
	// The window is the pulls that returned messages, not the 1.5 s of
	// idle that ended the run.
	if rep.Seconds >= 1.5 {
		t.Errorf("TPS window %.3fs includes the idle wait", rep.Seconds)
	}
}

// TestBenchTopicCount: --topic-count N sends round-robin over the queues of
// topics <topic>0 .. <topic>N-1 (the scale curves' many-topics layout).
func TestBenchTopicCount(t *testing.T) {
	ns := startRocketdWith(t, func(bc *config.BrokerConfig) { bc.BrokerFastFailureEnable = false })
	for _, topic := range []string{"Spread0", "Spread1"} {
		mustRun(t, "-n", ns, "topic", "create", "-t", topic, "-r", "2", "-w", "2")
		waitFor(t, 10*time.Second, "the route of "+topic, func() (bool, string) {
			out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", topic)
			return err == nil, out
		})
	}
	rep := runBench(t, "-n", ns, "bench", "produce", "-t", "Spread", "--topic-count", "2", "-s", "64", "-w", "1", "--count", "40")
	if rep.Messages != 40 || rep.Failures != 0 {
		t.Fatalf("produce over 2 topics: %+v", rep)
	}
	for _, topic := range []string{"Spread0", "Spread1"} {
		got := runBench(t, "-n", ns, "bench", "consume", "-t", topic, "--from-beginning", "--count", "20", "--suspend", "500ms", "--idle", "2s")
		if got.Messages != 20 {
			t.Errorf("%s holds %d messages, want 20 (half of the round-robin)", topic, got.Messages)
		}
	}
	// A topic of the range that does not exist is named.
	if out, err := rocketctl(t, "-n", ns, "bench", "produce", "-t", "Spread", "--topic-count", "3", "--count", "1"); err == nil || !strings.Contains(err.Error()+out, "Spread2") {
		t.Errorf("--topic-count 3 with Spread2 missing: err %v\n%s", err, out)
	}
}
