package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to 1 h with 3
// significant digits: the histogram's error stays under 0.1% over the whole
// range (an old backlog has end-to-end latencies of minutes).
const (
	histMinMicros = 1
	histMaxMicros = 3_600_000_000
	histDigits    = 3
)

// latencyRecorder gathers the latencies of one benchmark: a histogram for
// the final percentiles and lock-free counters for the live progress line.
// Recording from many goroutines is safe.
type latencyRecorder struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram

	// Counters of the current progress interval, swapped to zero by tick.
	count, failures, sumMicros, maxMicros atomic.Int64

	bytesTotal atomic.Int64 // bytes of every message recorded (not per interval)

	failMu sync.Mutex
	fails  map[string]int64 // failures by response code name or "transport"
}

func newLatencyRecorder() *latencyRecorder {
	return &latencyRecorder{hist: hdrhistogram.New(histMinMicros, histMaxMicros, histDigits), fails: map[string]int64{}}
}

// record adds n messages of size bytes each, stored after d.
func (r *latencyRecorder) record(d time.Duration, n int, size int) {
	us := d.Microseconds()
	if us < histMinMicros {
		us = histMinMicros
	}
	r.mu.Lock()
	// Values above the range are clamped: an hour-old message is
	// "very late" whatever its exact age.
	_ = r.hist.RecordValues(min(us, histMaxMicros), int64(n))
	r.mu.Unlock()
	r.count.Add(int64(n))
	r.bytesTotal.Add(int64(n * size))
	r.sumMicros.Add(us * int64(n))
	for {
		m := r.maxMicros.Load()
		if us <= m || r.maxMicros.CompareAndSwap(m, us) {
			break
		}
	}
}

// countOnly adds n messages with no latency (oneway sends).
func (r *latencyRecorder) countOnly(n int, size int) {
	r.count.Add(int64(n))
	r.bytesTotal.Add(int64(n * size))
}

// fail counts n failed messages under reason (a response code name or
// "transport").
func (r *latencyRecorder) fail(reason string, n int) {
	r.failures.Add(int64(n))
	r.failMu.Lock()
	r.fails[reason] += int64(n)
	r.failMu.Unlock()
}

// interval is what the progress line shows for one second.
type interval struct {
	count, failures int64
	avg, max        time.Duration
}

// tick returns the counters since the previous tick and starts a new
// interval (the histogram keeps everything).
func (r *latencyRecorder) tick() interval {
	n := r.count.Swap(0)
	iv := interval{count: n, failures: r.failures.Swap(0), max: time.Duration(r.maxMicros.Swap(0)) * time.Microsecond}
	sum := r.sumMicros.Swap(0)
	if n > 0 {
		iv.avg = time.Duration(sum/n) * time.Microsecond
	}
	return iv
}

// latencySummary is the latency part of a report, in milliseconds.
type latencySummary struct {
	Samples int64   `json:"samples"`
	Avg     float64 `json:"avgMs"`
	P50     float64 `json:"p50Ms"`
	P90     float64 `json:"p90Ms"`
	P99     float64 `json:"p99Ms"`
	P999    float64 `json:"p999Ms"`
	Max     float64 `json:"maxMs"`
}

func microsToMillis(us int64) float64 { return float64(us) / 1000 }

// summary reads the percentiles of everything recorded so far.
func (r *latencyRecorder) summary() latencySummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.hist
	if h.TotalCount() == 0 {
		return latencySummary{}
	}
	return latencySummary{
		Samples: h.TotalCount(),
		Avg:     h.Mean() / 1000,
		P50:     microsToMillis(h.ValueAtQuantile(50)),
		P90:     microsToMillis(h.ValueAtQuantile(90)),
		P99:     microsToMillis(h.ValueAtQuantile(99)),
		P999:    microsToMillis(h.ValueAtQuantile(99.9)),
		Max:     microsToMillis(h.Max()),
	}
}

func (r *latencyRecorder) failuresByReason() map[string]int64 {
	r.failMu.Lock()
	defer r.failMu.Unlock()
	return maps.Clone(r.fails)
}

// benchReport is the final summary of one run (the --json object).
type benchReport struct {
	Kind      string           `json:"kind"` // produce or consume
	Mode      string           `json:"mode,omitempty"`
	Topic     string           `json:"topic"`
	Size      int              `json:"size,omitempty"`
	Workers   int              `json:"workers,omitempty"`
	Batch     int              `json:"batch,omitempty"`
	Rate      int              `json:"targetRate,omitempty"`
	Messages  int64            `json:"messages"`
	Bytes     int64            `json:"bytes"`
	Failures  int64            `json:"failures"`
	FailedBy  map[string]int64 `json:"failuresByCode,omitempty"`
	Seconds   float64          `json:"seconds"`
	TPS       float64          `json:"tps"`
	MBps      float64          `json:"mbPerSec"`
	Latency   latencySummary   `json:"latency"`
	LatencyOf string           `json:"latencyOf"`              // what the latency measures
	Parts     *latencyParts    `json:"latencyParts,omitempty"` // --rate: wait + round trip
	// CPUSeconds is this client's own CPU time (user + system) over the
	// run: a load generator shares the machine with what it measures.
	CPUSeconds float64 `json:"cpuSeconds,omitempty"`
	Note       string  `json:"note,omitempty"`
}

// finish fills the rates of a report from its totals.
func (b *benchReport) finish(elapsed time.Duration) {
	b.Seconds = elapsed.Seconds()
	if b.Seconds > 0 {
		b.TPS = float64(b.Messages) / b.Seconds
		b.MBps = float64(b.Bytes) / b.Seconds / (1 << 20)
	}
}

// writeText prints the summary for people.
func (b *benchReport) writeText(w io.Writer) error {
	var s strings.Builder
	fmt.Fprintf(&s, "%s %s: %d messages", b.Kind, b.Topic, b.Messages)
	if b.Mode != "" {
		fmt.Fprintf(&s, " (%s, %d B, %d workers, batch %d", b.Mode, b.Size, b.Workers, b.Batch)
		if b.Rate > 0 {
			fmt.Fprintf(&s, ", target %d msgs/s", b.Rate)
		}
		s.WriteString(")")
	}
	fmt.Fprintf(&s, " in %.2fs\n", b.Seconds)
	fmt.Fprintf(&s, "  TPS %.0f msgs/s, %.2f MB/s, failures %d\n", b.TPS, b.MBps, b.Failures)
	for _, k := range slices.Sorted(maps.Keys(b.FailedBy)) {
		fmt.Fprintf(&s, "    %s: %d\n", k, b.FailedBy[k])
	}
	l := b.Latency
	if l.Samples > 0 {
		fmt.Fprintf(&s, "  %s (ms): avg %.3f p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f\n",
			b.LatencyOf, l.Avg, l.P50, l.P90, l.P99, l.P999, l.Max)
	}
	if p := b.Parts; p != nil {
		fmt.Fprintf(&s, "    parts (ms): behind an earlier send p50 %.3f p99 %.3f; late to send p50 %.3f p99 %.3f; round trip p50 %.3f p99 %.3f\n",
			p.BehindP50, p.BehindP99, p.LateP50, p.LateP99, p.RTTP50, p.RTTP99)
		fmt.Fprintf(&s, "    the %d sends at or above %.2f ms, means (ms): behind %.3f + late %.3f + round trip %.3f\n",
			p.TailSamples, p.TailFrom, p.TailBehindMean, p.TailLateMean, p.TailRTTMean)
	}
	if b.CPUSeconds > 0 {
		fmt.Fprintf(&s, "  client CPU %.2fs", b.CPUSeconds)
		if b.Messages > 0 {
			fmt.Fprintf(&s, " (%.2f µs a message)", b.CPUSeconds*1e6/float64(b.Messages))
		}
		s.WriteString("\n")
	}
	if b.Note != "" {
		fmt.Fprintf(&s, "  note: %s\n", b.Note)
	}
	_, err := io.WriteString(w, s.String())
	return err
}

// progressLine is the line printed each second.
func progressLine(kind string, elapsed time.Duration, iv interval, total int64) string {
	return fmt.Sprintf("[%4.0fs] %s TPS %d, failures %d, avg RT %.3f ms, max RT %.3f ms, total %d",
		elapsed.Seconds(), kind, iv.count, iv.failures,
		float64(iv.avg.Microseconds())/1000, float64(iv.max.Microseconds())/1000, total)
}
