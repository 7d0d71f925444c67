package main

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// pacedParts splits the latency of paced sends (--rate) in three:
//
//   - behind: from a send's due time until the worker could send it, when
//     its previous send (sync) was still in flight or its async window was
//     full at the due time: queueing behind an earlier slow answer;
//   - late: from then until the client handed it to the transport: the
//     pacing timer's lateness, the client's own scheduling and encoding;
//   - round trip: from there to the answer (write, broker, read).
//
// The sum is the reported latency. For the tail it keeps, per 10 µs of
// total latency, the sums of the parts, so the report can say what the
// sends at or above the p99 consisted of.
type pacedParts struct {
	mu     sync.Mutex
	behind *hdrhistogram.Histogram
	late   *hdrhistogram.Histogram
	rtt    *hdrhistogram.Histogram
	tail   []tailBucket // tailBuckets of tailBucketWidth
}

// tailBucketWidth is the resolution of the tail breakdown; totals from
// tailBuckets-1 widths up share the last bucket.
const (
	tailBucketWidth = 10 * time.Microsecond
	tailBuckets     = 100_001 // up to 1 s
)

type tailBucket struct {
	count, behindMicros, lateMicros, rttMicros int64
}

func newPacedParts() *pacedParts {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(histMinMicros, histMaxMicros, histDigits) }
	return &pacedParts{behind: h(), late: h(), rtt: h(), tail: make([]tailBucket, tailBuckets)}
}

// record adds one send of n messages: due at due, sendable at ready (due,
// or later when the worker's previous send or window held it), handed to
// the transport at sent and answered at done.
func (p *pacedParts) record(due, ready, sent, done time.Time, n int) {
	if ready.Before(due) {
		ready = due
	}
	bh := clampMicros(ready.Sub(due))
	lt := clampMicros(sent.Sub(ready))
	r := clampMicros(done.Sub(sent))
	b := min(max(int(done.Sub(due)/tailBucketWidth), 0), tailBuckets-1)
	k := int64(n)
	p.mu.Lock()
	_ = p.behind.RecordValues(bh, k)
	_ = p.late.RecordValues(lt, k)
	_ = p.rtt.RecordValues(r, k)
	t := &p.tail[b]
	t.count += k
	t.behindMicros += bh * k
	t.lateMicros += lt * k
	t.rttMicros += r * k
	p.mu.Unlock()
}

// clampMicros is d in µs within the histograms' range (0 counts as 1 µs,
// which the breakdown's means may round up by).
func clampMicros(d time.Duration) int64 {
	return min(max(d.Microseconds(), histMinMicros), histMaxMicros)
}

// latencyParts is the breakdown in a report, in milliseconds.
type latencyParts struct {
	BehindP50 float64 `json:"behindP50Ms"` // due time to sendable (previous send, window)
	BehindP99 float64 `json:"behindP99Ms"`
	LateP50   float64 `json:"lateP50Ms"` // sendable to handed to the transport
	LateP99   float64 `json:"lateP99Ms"`
	RTTP50    float64 `json:"roundTripP50Ms"` // handed to the transport to answered
	RTTP99    float64 `json:"roundTripP99Ms"`
	// The sends whose total latency is at or above the p99 (to the tail
	// breakdown's 10 µs): how many, and the mean of each part over them.
	TailFrom       float64 `json:"tailFromMs"`
	TailSamples    int64   `json:"tailSamples"`
	TailBehindMean float64 `json:"tailBehindMeanMs"`
	TailLateMean   float64 `json:"tailLateMeanMs"`
	TailRTTMean    float64 `json:"tailRoundTripMeanMs"`
}

// summary reads the breakdown; p99 is the total latency's p99 in ms.
func (p *pacedParts) summary(p99 float64) *latencyParts {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rtt.TotalCount() == 0 {
		return nil
	}
	q := func(h *hdrhistogram.Histogram, pct float64) float64 { return microsToMillis(h.ValueAtQuantile(pct)) }
	s := &latencyParts{BehindP50: q(p.behind, 50), BehindP99: q(p.behind, 99), LateP50: q(p.late, 50),
		LateP99: q(p.late, 99), RTTP50: q(p.rtt, 50), RTTP99: q(p.rtt, 99)}
	from := min(int(time.Duration(p99*float64(time.Millisecond))/tailBucketWidth), tailBuckets-1)
	s.TailFrom = float64(time.Duration(from)*tailBucketWidth) / float64(time.Millisecond)
	var bh, lt, r int64
	for _, t := range p.tail[from:] {
		s.TailSamples += t.count
		bh += t.behindMicros
		lt += t.lateMicros
		r += t.rttMicros
	}
	if n := s.TailSamples; n > 0 {
		s.TailBehindMean, s.TailLateMean, s.TailRTTMean = microsToMillis(bh/n), microsToMillis(lt/n), microsToMillis(r/n)
	}
	return s
}
