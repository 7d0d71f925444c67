package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// row is one line of the table: a figure per target.
type row struct {
	title        string
	value        func(*targetResult) (float64, bool)
	format       string
	higherBetter bool
}

// table renders the results as one Markdown table: a column per target, a
// row per workload plus start-up and memory. A peer's cell carries its
// ratio to the rocketd target of the same durability, oriented so that a
// ratio above 1 means rocketd is better (throughput: rocketd ÷ peer;
// latency, time and memory: peer ÷ rocketd).
func (h *harness) table(results []*targetResult) string {
	byName := map[string]*targetResult{}
	for _, r := range results {
		byName[r.name] = r
	}
	var b strings.Builder
	b.WriteString("| |")
	for _, r := range results {
		b.WriteString(" " + targetTitle[r.name] + " |")
	}
	b.WriteString("\n|---|")
	for range results {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	var rows []row
	remoting, grpc := false, false
	for _, r := range results {
		remoting, grpc = remoting || !isGRPCTarget(r.name), grpc || isGRPCTarget(r.name)
	}
	for _, w := range workloads {
		if !remoting {
			break
		}
		id := w.id
		title := w.title
		if id == "rate" {
			title = fmt.Sprintf("p99 at %d msgs/s (ms)", h.rate)
		}
		if id == "backlog" {
			title = fmt.Sprintf("consume %s backlog (msgs/s)", countName(h.backlog))
		}
		r := row{title: title, format: "%.0f", higherBetter: true, value: func(t *targetResult) (float64, bool) {
			m, ok := t.metrics[id]
			return m.TPS, ok
		}}
		if id == "rate" {
			r.format, r.higherBetter = "%.2f", false
			r.value = func(t *targetResult) (float64, bool) {
				m, ok := t.metrics[id]
				return m.P99, ok
			}
		}
		if id == "first" {
			r.title = fmt.Sprintf("max send latency, first %s after a fresh start (ms)", h.duration)
			r.format, r.higherBetter = "%.1f", false
			r.value = func(t *targetResult) (float64, bool) {
				m, ok := t.metrics[id]
				return m.Max, ok
			}
		}
		rows = append(rows, r)
	}
	if grpc {
		rows = append(rows, h.grpcRows()...)
	}
	rows = append(rows,
		row{title: "start to accepting connections (ms)", format: "%.0f", value: func(t *targetResult) (float64, bool) {
			return float64(t.startup.Milliseconds()), t.startup > 0
		}},
		row{title: "start to topic route, broker registered (ms)", format: "%.0f", value: func(t *targetResult) (float64, bool) {
			return float64(t.routed.Milliseconds()), t.routed > 0
		}},
		row{title: "idle RSS after start (MiB)", format: "%.0f", value: func(t *targetResult) (float64, bool) {
			return float64(t.idleRSS) / (1 << 20), t.idleRSS > 0
		}},
		row{title: "peak RSS (MiB)", format: "%.0f", value: func(t *targetResult) (float64, bool) {
			return float64(t.peakRSS) / (1 << 20), t.peakRSS > 0
		}})
	for _, rw := range rows {
		b.WriteString("| " + rw.title + " |")
		for _, r := range results {
			v, ok := rw.value(r)
			if !ok {
				b.WriteString(" - |")
				continue
			}
			cell := fmt.Sprintf(rw.format, v)
			if base := byName[ratioBase[r.name]]; base != nil {
				if bv, ok := rw.value(base); ok && bv > 0 && v > 0 {
					ratio := v / bv
					if rw.higherBetter {
						ratio = bv / v
					}
					cell += fmt.Sprintf(" (×%.2f)", ratio)
				}
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func countName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%d M", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%d k", n/1000)
	}
	return fmt.Sprint(n)
}

// resultsDoc is the results file: machine, load, command, table, notes.
func (h *harness) resultsDoc(results []*targetResult, table, load0, load1 string, total time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# rocketd side by side, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	args := strings.Join(os.Args[1:], " ")
	if args == "" {
		args = "default flags"
	}
	b.WriteString("Measured in one run of `go run ./bench/compare` (" + args + ")")
	fmt.Fprintf(&b, ", which took %s.\n\n", total.Round(time.Second))
	b.WriteString("## Machine\n\n")
	fmt.Fprintf(&b, "- CPU: %s, %d cores visible to Go\n", cpuModel(), runtime.NumCPU())
	fmt.Fprintf(&b, "- memory: %s\n", memTotal())
	fmt.Fprintf(&b, "- kernel: %s\n", firstLine(commandOutput("uname", "-sr")))
	fmt.Fprintf(&b, "- %s; %s\n", runtime.Version(), firstLine(commandOutput("java", "-version")))
	fmt.Fprintf(&b, "- load average (1, 5, 15 min) before the run: %s; after: %s. The load generators run on the\n", load0, load1)
	b.WriteString("  same 2 cores as the servers and a VM's figures swing from run to run, so absolute figures are\n")
	b.WriteString("  noisy; the ratios come from one run under the same conditions.\n\n")
	b.WriteString("## Results\n\n")
	b.WriteString("Each peer's cell shows, in parentheses, its ratio to the rocketd target of the same durability\n")
	b.WriteString("(RocketMQ ASYNC and NATS default to rocketd ASYNC_FLUSH; RocketMQ SYNC and NATS sync-always to\n")
	b.WriteString("rocketd SYNC_FLUSH; rocketd SYNC_FLUSH to rocketd ASYNC_FLUSH; RocketMQ's proxy to rocketd gRPC), oriented so that **above 1 means rocketd\n")
	b.WriteString("is better** (throughput: rocketd ÷ peer; latency, start-up and memory: peer ÷ rocketd).\n\n")
	b.WriteString(table)
	b.WriteString("\n## Workloads\n\n")
	fmt.Fprintf(&b, "- Each measured workload runs %s, after a %s unmeasured warm-up per target (16 producers).\n", h.duration, h.warmup)
	remoting, grpc := false, false
	for _, r := range results {
		remoting, grpc = remoting || !isGRPCTarget(r.name), grpc || isGRPCTarget(r.name)
	}
	if grpc {
		b.WriteString(h.grpcWorkloadsDoc())
	}
	if remoting {
		h.remotingWorkloadsDoc(&b)
	}
	var notes []string
	for _, r := range results {
		if r.err != nil {
			notes = append(notes, fmt.Sprintf("- %s failed: %v", targetTitle[r.name], r.err))
		}
		for _, n := range r.notes {
			notes = append(notes, "- "+targetTitle[r.name]+", "+n)
		}
		if r.backlog > 0 && r.backlog < h.backlog && !isGRPCTarget(r.name) {
			why := fmt.Sprintf("it reached --fill-limit %s", h.fillLimit)
			if len(r.fillFailures) > 0 {
				why = "sends failed: " + codeCounts(r.fillFailures)
			}
			notes = append(notes, fmt.Sprintf("- %s: the backlog holds %d messages (%s); the consume rate is over those.",
				targetTitle[r.name], r.backlog, why))
		}
		for _, w := range append(workloads, grpcWorkloads...) {
			if m := r.metrics[w.id]; m.Failures > 0 {
				note := fmt.Sprintf("- %s, %s: %d failed sends", targetTitle[r.name], w.title, m.Failures)
				if len(m.FailedBy) > 0 {
					note += " (" + codeCounts(m.FailedBy) + ")"
				}
				notes = append(notes, note+".")
			}
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

// remotingWorkloadsDoc describes the remoting and NATS workloads.
func (h *harness) remotingWorkloadsDoc(b *strings.Builder) {
	b.WriteString("- rocketd and RocketMQ: `rocketctl bench` (same client binary, a separate process), topic with 8 queues;\n")
	b.WriteString("  producers send synchronously (SEND_MESSAGE_V2, wait for the answer), one connection each.\n")
	b.WriteString("- NATS: nats.go JetStream, one connection per producer, `js.Publish` waiting for the stream's ack;\n")
	b.WriteString("  one file-storage stream; the backlog is read by a pull consumer (AckNone, batches of 1000).\n")
	fmt.Fprintf(b, "- Fixed rate: %d paced producers at %d msgs/s in total, 1 KiB; the p99 is measured from each send's\n", rateWorkers, h.rate)
	b.WriteString("  due time (no coordinated omission).\n")
	b.WriteString("- Backlog: 1 KiB messages, filled unmeasured (rocketctl: 8 producers, batches of 32; NATS: async publish),\n")
	b.WriteString("  then read from the start (rocketctl: one long-polling pull loop per queue, 32 messages per pull).\n")
	fmt.Fprintf(b, "- RocketMQ %s from Maven Central, broker heap %s, NameServer heap %s.\n",
		rocketmqVersion, strings.Join(brokerHeap, " "), strings.Join(namesrvHeap, " "))
	fmt.Fprintf(b, "- First sends: right after the topics are created on the fresh store, before the warm-up, 16 producers\n")
	fmt.Fprintf(b, "  send 1 KiB for %s; the row is their max send latency (a first CommitLog segment prepared only then,\n", h.duration)
	b.WriteString("  or the next one's preparation disturbing the flushes, shows there; timeouts count as failed sends).\n")
	b.WriteString("- Start-up: process start to the broker's (NATS: the server's) port accepting TCP connections;\n")
	b.WriteString("  topic route: process start to the topics created through the NameServer (the broker registered).\n")
	b.WriteString("  RSS: VmRSS after start and topic creation, and VmHWM at the end, summed over the target's processes\n")
	b.WriteString("  (RocketMQ: NameServer + broker JVMs; rocketd serve runs both in one process).\n")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memTotal() string {
	kb := procStatusFileKB("/proc/meminfo", "MemTotal:")
	if kb == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
}

func procStatusFileKB(path, field string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			var n int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &n)
			return n
		}
	}
	return 0
}

func commandOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return name + ": unknown"
	}
	return strings.TrimSpace(string(out))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// codeCounts renders failures by response code, most frequent first.
func codeCounts(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// grpcRows are the gRPC targets' rows (workloads_grpc.go).
func (h *harness) grpcRows() []row {
	var rows []row
	for _, w := range grpcWorkloads {
		id := w.id
		r := row{title: w.title, format: "%.0f", higherBetter: true, value: func(t *targetResult) (float64, bool) {
			m, ok := t.metrics[id]
			return m.TPS, ok
		}}
		switch id {
		case "g1kN":
			r.title = fmt.Sprintf(w.title, h.grpcProducers)
		case "g1kNp99":
			r.title = fmt.Sprintf(w.title, h.grpcProducers)
			r.format, r.higherBetter = "%.2f", false
			r.value = func(t *targetResult) (float64, bool) {
				m, ok := t.metrics[id]
				return m.P99, ok
			}
		case "gconsume":
			r.title = fmt.Sprintf(w.title, countName(h.grpcBacklog))
		}
		rows = append(rows, r)
	}
	return rows
}
