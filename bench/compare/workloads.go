package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// The workloads, in table order.
var workloads = []struct{ id, title string }{
	{"p1k1", "produce 1 KiB, 1 producer (msgs/s)"},
	{"p1k64", "produce 1 KiB, 64 producers (msgs/s)"},
	{"p128x64", "produce 128 B, 64 producers (msgs/s)"},
	{"backlog", "consume backlog (msgs/s)"},
	{"rate", "p99 at fixed rate (ms)"},
	{"first", "max send latency after a fresh start (ms)"},
	{"pipe1", pipelinedShapes[0].title},
	{"pipe16", pipelinedShapes[1].title},
	{"batch32", pipelinedShapes[2].title},
}

const (
	benchTopic   = "BenchTopic"
	backlogTopic = "BenchBacklog"
	rateWorkers  = 16
)

// rocketctlReport is the part of `rocketctl bench --json` the harness uses.
type rocketctlReport struct {
	Messages int64            `json:"messages"`
	Failures int64            `json:"failures"`
	FailedBy map[string]int64 `json:"failuresByCode"`
	TPS      float64          `json:"tps"`
	CPU      float64          `json:"cpuSeconds"`
	Latency  struct {
		P99 float64 `json:"p99Ms"`
		Max float64 `json:"maxMs"`
	} `json:"latency"`
	// Parts is the breakdown of a paced run's latency (--rate).
	Parts *struct {
		BehindP99      float64 `json:"behindP99Ms"`
		LateP99        float64 `json:"lateP99Ms"`
		RTTP50         float64 `json:"roundTripP50Ms"`
		RTTP99         float64 `json:"roundTripP99Ms"`
		TailFrom       float64 `json:"tailFromMs"`
		TailBehindMean float64 `json:"tailBehindMeanMs"`
		TailLateMean   float64 `json:"tailLateMeanMs"`
		TailRTTMean    float64 `json:"tailRoundTripMeanMs"`
	} `json:"latencyParts"`
}

// rocketctl runs the built rocketctl against the NameServer at ns.
func (h *harness) ctl(ctx context.Context, ns string, args ...string) ([]byte, error) {
	return run(ctx, h.rocketctlBin, append([]string{"-n", ns, "--timeout", "10s"}, args...)...)
}

// benchRun runs one `rocketctl bench` and returns its figures.
func (h *harness) benchRun(ctx context.Context, ns string, args ...string) (metric, error) {
	// No workload may hang the run: a count that is never reached, a
	// broker that stops answering.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out, err := h.ctl(ctx, ns, append(append([]string{"bench"}, args...), "--json", "--progress=false")...)
	if err != nil {
		return metric{}, err
	}
	m, err := parseBenchJSON(out)
	if err != nil {
		return metric{}, fmt.Errorf("rocketctl bench %v: %w", args, err)
	}
	return m, nil
}

// parseBenchJSON reads the figures of `rocketctl bench --json`.
func parseBenchJSON(out []byte) (metric, error) {
	var rep rocketctlReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return metric{}, fmt.Errorf("%w: %s", err, out)
	}
	m := metric{TPS: rep.TPS, P99: rep.Latency.P99, Max: rep.Latency.Max, Failures: rep.Failures, Messages: rep.Messages, FailedBy: rep.FailedBy}
	if rep.Messages > 0 {
		m.ClientCPU = time.Duration(rep.CPU * float64(time.Second) / float64(rep.Messages))
	}
	if p := rep.Parts; p != nil {
		m.Parts = fmt.Sprintf("sends at or above %.2f ms: behind an earlier send %.3f + late to send %.3f + round trip %.3f ms (means); "+
			"p99s: behind %.3f, late %.3f, round trip %.3f ms (p50 %.3f)",
			p.TailFrom, p.TailBehindMean, p.TailLateMean, p.TailRTTMean, p.BehindP99, p.LateP99, p.RTTP99, p.RTTP50)
	}
	return m, nil
}

// rocketWorkloads runs the workloads with rocketctl bench against rocketd or
// RocketMQ.
func (h *harness) rocketWorkloads(ctx context.Context, name string, s *server, r *targetResult) error {
	if err := h.createTopics(ctx, s); err != nil {
		return err
	}
	r.routed = time.Since(s.started)
	r.idleRSS = s.rss()
	size := func(n int) string { return strconv.Itoa(n) }
	dur := h.duration.String()
	// The first sends of a fresh store, before any warm-up: a broker that
	// prepares its first CommitLog segment (a 1 GiB zero-fill under
	// SYNC_FLUSH) only now, or whose next segment's preparation disturbs
	// the flushes, shows it in the max latency (and in failures when a
	// send times out).
	if h.want("first") {
		first, err := h.benchRun(ctx, s.addr, "produce", "-t", benchTopic, "-s", "1024", "-w", "16", "--duration", dur)
		if err != nil {
			return fmt.Errorf("first sends: %w", err)
		}
		h.logf("%s first: route after %s, %.0f msgs/s, p99 %.3f ms, max %.3f ms, failures %d",
			name, r.routed.Round(time.Millisecond), first.TPS, first.P99, first.Max, first.Failures)
		r.metrics["first"] = first
	}
	if _, err := h.benchRun(ctx, s.addr, "produce", "-t", benchTopic, "-w", "16", "--duration", h.warmup.String()); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	steps := []struct {
		id      string
		profile string
		args    []string
	}{
		{"p1k1", "", []string{"produce", "-t", benchTopic, "-s", "1024", "-w", "1", "--duration", dur}},
		{"p1k64", "produce", []string{"produce", "-t", benchTopic, "-s", "1024", "-w", "64", "--duration", dur}},
		{"p128x64", "", []string{"produce", "-t", benchTopic, "-s", "128", "-w", "64", "--duration", dur}},
		{"rate", "", []string{"produce", "-t", benchTopic, "-s", "1024", "-w", size(rateWorkers), "--rate", size(h.rate), "--duration", dur}},
	}
	for _, st := range steps {
		if !h.want(st.id) {
			continue
		}
		if st.id == boundWorkload && name == "rocketd-sync" {
			// One fdatasync on the store's file system, for the bound
			// (bound.go), with the broker idle between two workloads.
			d, err := probeFsync(storeProbeDir(filepath.Join(h.work, name)), probeWrites, probeWriteSize, probeLimit)
			if err != nil {
				return err
			}
			h.logf("%s: fdatasync median %s", name, d)
			r.fsync = d
		}
		share := startCPUShare(s)
		m, err := h.profiled(ctx, name, st.profile, s, func() (metric, error) { return h.benchRun(ctx, s.addr, st.args...) })
		if err != nil {
			return fmt.Errorf("%s: %w", st.id, err)
		}
		h.logf("%s %s: %.0f msgs/s, p99 %.3f ms, failures %d", name, st.id, m.TPS, m.P99, m.Failures)
		if m.Parts != "" {
			// What the tail consists of, and how long the broker's
			// threads waited for a CPU meanwhile (a shared machine).
			h.logf("%s %s: %s; %s", name, st.id, m.Parts, share.serverNote(m.Messages))
		}
		r.metrics[st.id] = m
	}
	if err := h.rocketPipelined(ctx, name, s, r); err != nil {
		return err
	}
	if !h.want("backlog") {
		return nil
	}
	// The backlog: filled in batches (not measured), then read from the
	// start.
	h.logf("%s: filling a backlog of %d messages", name, h.backlog)
	fill, err := h.benchRun(ctx, s.addr, "produce", "-t", backlogTopic, "-s", "1024", "-w", "8", "--batch", "32", "--count", size(h.backlog))
	if err != nil {
		return fmt.Errorf("backlog fill: %w", err)
	}
	// Read what was stored (a send that failed, e.g. FLUSH_DISK_TIMEOUT,
	// stored nothing).
	r.backlog = int(fill.Messages)
	r.fillFailures = fill.FailedBy
	if r.backlog == 0 {
		return fmt.Errorf("backlog fill: no message stored (%d failures)", fill.Failures)
	}
	m, err := h.profiled(ctx, name, "consume", s, func() (metric, error) {
		return h.benchRun(ctx, s.addr, "consume", "-t", backlogTopic, "--from-beginning", "--count", size(r.backlog))
	})
	if err != nil {
		return fmt.Errorf("backlog consume: %w", err)
	}
	h.logf("%s backlog: %.0f msgs/s", name, m.TPS)
	r.metrics["backlog"] = m
	return nil
}

// createTopics creates the benchmark's topics (8 queues, as the Java
// benchmark's default topic) through the NameServer, retrying while the
// broker, which accepts connections before it has registered, is not yet
// known there.
func (h *harness) createTopics(ctx context.Context, s *server) error {
	for _, topic := range []string{benchTopic, backlogTopic} {
		var err error
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if _, err = h.ctl(ctx, s.addr, "topic", "create", "-t", topic, "-c", "DefaultCluster", "-r", "8", "-w", "8"); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", topic, err)
		}
	}
	return nil
}

// profiled runs f; with --profile and a pprof-enabled server it saves a CPU
// profile over f's run and the allocation profiles before and after it
// (compare with `go tool pprof -sample_index=alloc_space -diff_base before after`).
func (h *harness) profiled(ctx context.Context, target, what string, s *server, f func() (metric, error)) (metric, error) {
	if what == "" || s.pprof == "" {
		return f()
	}
	base := filepath.Join(h.profileDir, target+"-"+what)
	if err := fetchProfile(ctx, "http://"+s.pprof+"/debug/pprof/allocs", base+"-allocs-before.pprof"); err != nil {
		return metric{}, err
	}
	var wg sync.WaitGroup
	var cpuErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		secs := max(int(h.duration.Seconds())-1, 1)
		cpuErr = fetchProfile(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.pprof, secs), base+"-cpu.pprof")
	}()
	m, err := f()
	wg.Wait()
	if err != nil {
		return m, err
	}
	if cpuErr != nil {
		return m, cpuErr
	}
	if err := fetchProfile(ctx, "http://"+s.pprof+"/debug/pprof/allocs", base+"-allocs-after.pprof"); err != nil {
		return m, err
	}
	h.logf("profiles of %s %s saved under %s", target, what, h.profileDir)
	return m, nil
}

func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// natsWorkloads runs the same workloads with nats.go against a NATS
// server.
func (h *harness) natsWorkloads(ctx context.Context, s *server, r *targetResult) error {
	d := &natsDriver{url: "nats://" + s.addr}
	if err := d.createStream(ctx, "BENCH", "bench"); err != nil {
		return err
	}
	if err := d.createStream(ctx, "BACKLOG", "backlog"); err != nil {
		return err
	}
	r.idleRSS = s.rss()
	if _, err := d.produce("bench", 1024, 16, h.warmup, 0); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	steps := []struct {
		id            string
		size, workers int
		rate          int
	}{
		{"p1k1", 1024, 1, 0}, {"p1k64", 1024, 64, 0}, {"p128x64", 128, 64, 0}, {"rate", 1024, rateWorkers, h.rate},
	}
	for _, st := range steps {
		if !h.want(st.id) {
			continue
		}
		m, err := d.produce("bench", st.size, st.workers, h.duration, st.rate)
		if err != nil {
			return fmt.Errorf("%s: %w", st.id, err)
		}
		h.logf("%s %s: %.0f msgs/s, p99 %.3f ms, failures %d", r.name, st.id, m.TPS, m.P99, m.Failures)
		r.metrics[st.id] = m
	}
	if err := h.natsPipelined(d, r); err != nil {
		return err
	}
	if !h.want("backlog") {
		return nil
	}
	h.logf("%s: filling a backlog of up to %d messages (at most %s)", r.name, h.backlog, h.fillLimit)
	n, err := d.fill("BACKLOG", "backlog", 1024, h.backlog, h.fillLimit)
	if err != nil {
		return fmt.Errorf("backlog fill: %w", err)
	}
	r.backlog = n
	m, err := d.consume("BACKLOG", n)
	if err != nil {
		return fmt.Errorf("backlog consume: %w", err)
	}
	h.logf("%s backlog of %d: %.0f msgs/s", r.name, n, m.TPS)
	r.metrics["backlog"] = m
	return nil
}
