package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Runtime is what GET_BROKER_RUNTIME_INFO reports from the counters, in
// Java's formats (StoreStatsService.getRuntimeInfo and BrokerStats).
type Runtime struct {
	// "tps10s tps60s tps600s" over the one-second samples, each Java's
	// Double.toString, or "" while fewer samples than seconds exist.
	PutTps, GetFoundTps, GetMissTps, GetTotalTps, GetTransferredTps string

	// Messages put and pulled outside system topics: now, at the last
	// midnight and at the one before (0 until the broker saw a midnight).
	PutTotalTodayNow, PutTotalTodayMorning, PutTotalYesterdayMorning uint64
	GetTotalTodayNow, GetTotalTodayMorning, GetTotalYesterdayMorning uint64

	// PutMessageTimesTotal is the messages stored since boot (Java
	// reports 1 for 0: the divisor of the average size), PutMessageSizeTotal
	// their bytes, PutMessageFailedTimes the puts the store refused.
	PutMessageTimesTotal, PutMessageSizeTotal, PutMessageFailedTimes uint64

	// Put latency: the longest since boot (ms), and over the last
	// complete minute the distribution and the 99th and 99.9th
	// percentiles ("%.2f" ms), as StoreStatsService reports them.
	PutMessageEntireTimeMax     int64
	PutMessageDistributeTime    string
	PutLatency99, PutLatency999 string

	// GetMessageEntireTimeMax is the longest pull since boot (ms).
	GetMessageEntireTimeMax int64

	BootMillis int64  // bootTimestamp
	Uptime     string // runtime: "[ d days, h hours, m minutes, s seconds ]"
}

// Runtime returns the runtime figures at the last sample.
func (s *Stats) Runtime() Runtime {
	if s == nil {
		return Runtime{PutTps: "  ", GetFoundTps: "  ", GetMissTps: "  ", GetTotalTps: "0.0 0.0 0.0", GetTransferredTps: "  ",
			PutMessageTimesTotal: 1, Uptime: uptime(0)}
	}
	now := s.broker.c.load()
	var size uint64
	s.topics.each(func(_ string, e *entry) { size += e.c.sum(fBytes) })
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Runtime{
		PutTps:            s.tpsTriple(fStorePut),
		GetFoundTps:       s.tpsTriple(fGetFound),
		GetMissTps:        s.tpsTriple(fGetMiss),
		GetTransferredTps: s.tpsTriple(fTransferred),
		PutTotalTodayNow:  now[fPutNoSys], PutTotalTodayMorning: s.putTodayMorning, PutTotalYesterdayMorning: s.putYesterdayMorning,
		GetTotalTodayNow: now[fGetNoSys], GetTotalTodayMorning: s.getTodayMorning, GetTotalYesterdayMorning: s.getYesterdayMorning,
		PutMessageTimesTotal: max(now[fStorePut], 1),
		PutMessageSizeTotal:  size, PutMessageFailedTimes: s.putFailed.Load(),
		PutMessageEntireTimeMax:  s.lat.max.Load(),
		PutMessageDistributeTime: s.lat.distString(),
		PutLatency99:             fmt.Sprintf("%.2f", s.lat.percentile(0.99)),
		PutLatency999:            fmt.Sprintf("%.2f", s.lat.percentile(0.999)),
		GetMessageEntireTimeMax:  s.lat.get.Load(),
		BootMillis:               s.bootMillis,
		Uptime:                   uptime(s.cfg.Now().UnixMilli() - s.bootMillis),
	}
	var total [3]string
	for i, secs := range storeSpans {
		found, _ := s.tps(fGetFound, secs)
		miss, _ := s.tps(fGetMiss, secs)
		total[i] = javaDouble(found + miss)
	}
	r.GetTotalTps = strings.Join(total[:], " ")
	return r
}

// storeSpans are the seconds of StoreStatsService's three TPS figures.
var storeSpans = [3]int{10, 60, 600}

// tpsTriple is Java's getPutTps() and alike: three figures joined by a
// space, each "" until enough samples exist.
func (s *Stats) tpsTriple(f int) string {
	var out [3]string
	for i, secs := range storeSpans {
		if v, ok := s.tps(f, secs); ok {
			out[i] = javaDouble(v)
		}
	}
	return strings.Join(out[:], " ")
}

// tps is the per-second rate of field f between the last sample and the
// one secs samples before it (CallSnapshot.getTPS); false with too few
// samples. Caller holds s.mu.
func (s *Stats) tps(f, secs int) (float64, bool) {
	n := len(s.sec)
	if n <= secs {
		return 0, false
	}
	last, before := s.sec[n-1], s.sec[n-1-secs]
	d := last.at - before.at
	if d <= 0 {
		return 0, true
	}
	return float64(last.v[f]-before.v[f]) / float64(d) * 1000, true
}

// JavaDouble formats v as Java's String.valueOf(double) (GET_BROKER_RUNTIME_INFO
// values such as putMessageAverageSize).
func JavaDouble(v float64) string { return javaDouble(v) }

// uptime formats ms as StoreStatsService.getFormatRuntime.
func uptime(ms int64) string {
	const second, minute, hour, day = 1000, 60 * 1000, 3600 * 1000, 24 * 3600 * 1000
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]",
		ms/day, ms%day/hour, ms%hour/minute, ms%minute/second)
}

// javaDouble formats v as Java's Double.toString: the shortest decimal
// that reads back as v, with at least one fractional digit, in computer
// scientific notation ("1.0E7") outside [1e-3, 1e7).
func javaDouble(v float64) string { return javaFloating(v, 64) }

// JavaFloat formats v as Java's String.valueOf(float) (Float.toString).
func JavaFloat(v float32) string { return javaFloating(float64(v), 32) }

func javaFloating(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	if a := math.Abs(v); a != 0 && (a < 1e-3 || a >= 1e7) {
		m, e, _ := strings.Cut(strconv.FormatFloat(v, 'E', -1, bits), "E")
		if !strings.Contains(m, ".") {
			m += ".0"
		}
		exp, _ := strconv.Atoi(e)
		return m + "E" + strconv.Itoa(exp)
	}
	out := strconv.FormatFloat(v, 'f', -1, bits)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}
