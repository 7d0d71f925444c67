package stats

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Put latency as StoreStatsService keeps it: the longest put since boot
// (putMessageEntireTimeMax), a 13-range distribution and a finer
// histogram for the 99th and 99.9th percentiles. Java resets the two
// every minute and reports the last complete minute; here the counters
// only grow and the sampler keeps the minute's difference.

// distDesc are PUT_MESSAGE_ENTIRE_TIME_MAX_DESC; distUpper[i] is the
// exclusive upper bound in ms of range i (the last is open).
var (
	distDesc = [13]string{"[<=0ms]", "[0~10ms]", "[10~50ms]", "[50~100ms]", "[100~200ms]", "[200~500ms]",
		"[500ms~1s]", "[1~2s]", "[2~3s]", "[3~4s]", "[4~5s]", "[5~10s]", "[10s~]"}
	distUpper = [12]int64{1, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000}
)

// pxBounds are the inclusive upper bounds in ms of the percentile buckets
// (PUT_MESSAGE_ENTIRE_TIME_BUCKETS: 1 ms steps to 20, 2 to 50, 5 to 100,
// 10 to 200, 50 to 500, 100 to 1000, 1000 to 10000), then one open bucket.
var pxBounds = func() []int64 {
	var b []int64
	at := int64(0)
	for _, r := range [][2]int64{{1, 20}, {2, 15}, {5, 10}, {10, 10}, {50, 6}, {100, 5}, {1000, 9}} {
		for range r[1] {
			at += r[0]
			b = append(b, at)
		}
	}
	return b
}()

// nPx is len(pxBounds)+1.
const nPx = 76

// latency holds the put latency counters (written by every put: a few
// shared atomics, as Java's LongAdders in one TreeMap).
type latency struct {
	max  atomic.Int64
	get  atomic.Int64 // getMessageEntireTimeMax
	dist [13]atomic.Uint64
	px   [nPx]atomic.Uint64

	// sampler state (Stats.mu): the counts at the last minute boundary and
	// the minute before it.
	nextMinute         int64
	prevDist, lastDist [13]uint64
	prevPx, lastPx     [nPx]uint64
}

// PutLatency records how long one put took (DefaultMessageStore's
// elapsed time of putMessage, in ms).
func (s *Stats) PutLatency(d time.Duration) {
	if s == nil {
		return
	}
	ms := d.Milliseconds()
	l := &s.lat
	i := 0
	for i < len(distUpper) && ms >= distUpper[i] {
		i++
	}
	if ms <= 0 {
		i = 0
	}
	l.dist[i].Add(1)
	j := 0
	for j < len(pxBounds) && ms > pxBounds[j] {
		j++
	}
	l.px[j].Add(1)
	raise(&l.max, ms)
}

// GetLatency records how long one pull took to be answered from the store
// (DefaultMessageStore's elapsed time of getMessage: Java keeps only the
// longest since boot, getMessageEntireTimeMax, in ms).
func (s *Stats) GetLatency(d time.Duration) {
	if s != nil {
		raise(&s.lat.get, d.Milliseconds())
	}
}

// raise sets m to v when v is larger.
func raise(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}

// sampleLatency closes a minute every 60 s (printTps): the last minute's
// counts become what runtime info reports. Caller holds s.mu.
func (s *Stats) sampleLatency(ms int64) {
	l := &s.lat
	if l.nextMinute == 0 {
		l.nextMinute = ms + 60_000
		return
	}
	if !due(&l.nextMinute, ms, 60_000) {
		return
	}
	for i := range l.dist {
		v := l.dist[i].Load()
		l.lastDist[i], l.prevDist[i] = v-l.prevDist[i], v
	}
	for i := range l.px {
		v := l.px[i].Load()
		l.lastPx[i], l.prevPx[i] = v-l.prevPx[i], v
	}
}

// distString is putMessageDistributeTime: "[<=0ms]:n [0~10ms]:n ... " over
// the last complete minute.
func (l *latency) distString() string {
	var b strings.Builder
	for i, d := range distDesc {
		fmt.Fprintf(&b, "%s:%d ", d, l.lastDist[i])
	}
	return b.String()
}

// percentile is findPutMessageEntireTimePX over the last complete minute:
// the bucket holding the px-th put, interpolated linearly inside it.
func (l *latency) percentile(px float64) float64 {
	var total uint64
	for _, c := range l.lastPx {
		total += c
	}
	idx := uint64(float64(total) * px)
	var pass uint64
	for i, c := range l.lastPx {
		if idx <= pass+c {
			rel := float64(idx - pass)
			upper := float64(pxUpper(i))
			if c == 0 {
				if i == 0 {
					return 0
				}
				return float64(pxUpper(i - 1))
			}
			if i == 0 {
				return upper * rel / float64(c)
			}
			lower := float64(pxUpper(i - 1))
			return lower + (upper-lower)*rel/float64(c)
		}
		pass += c
	}
	return 0
}

// pxUpper is bucket i's upper bound (Java's Long.MAX_VALUE for the last).
func pxUpper(i int) int64 {
	if i < len(pxBounds) {
		return pxBounds[i]
	}
	return 1<<63 - 1
}
