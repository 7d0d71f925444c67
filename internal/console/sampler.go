package console

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/admin"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/lograte"
)

// sample is one GET_BROKER_RUNTIME_INFO reading of a broker.
type sample struct {
	at                 time.Time
	putTps, getTps     float64 // msgs/s over Java's first window (10 s); valid when hasTps
	hasTps             bool
	putTotalToday      int64 // msgPutTotalTodayNow; -1 when absent
	getTotalToday      int64 // msgGetTotalTodayNow; -1 when absent
	commitLogMaxOffset int64
}

// sampler reads every master's runtime info each interval and keeps the
// last samplesKept readings per broker for the throughput charts. One
// goroutine, owned by the Server.
type sampler struct {
	admin    *admin.Client
	interval time.Duration
	log      *slog.Logger
	warn     lograte.Limiter

	mu struct {
		sync.Mutex
		byBroker map[string][]sample // broker name -> oldest first
	}
	loop lifecycle.Loop
}

func newSampler(a *admin.Client, interval time.Duration, log *slog.Logger) *sampler {
	s := &sampler{admin: a, interval: interval, log: log}
	s.mu.byBroker = map[string][]sample{}
	return s
}

func (s *sampler) start() { s.loop.Start("console-sampler", s.run) }

func (s *sampler) close() { s.loop.Close() }

func (s *sampler) run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// round takes one sample of every master. The calls run without the lock;
// a round stops early when the sampler closes (ctx ends).
func (s *sampler) round(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.interval+admin.DefaultTimeout)
	defer cancel()
	masters, err := s.admin.Masters(ctx, "")
	if err != nil {
		s.warn.Log(s.log, slog.LevelWarn, "console: sampling: cluster info", "err", err)
		return
	}
	for _, b := range masters {
		if b.Addr == "" {
			continue
		}
		info, err := s.admin.BrokerRuntimeInfo(ctx, b.Addr)
		if err != nil {
			s.warn.Log(s.log, slog.LevelWarn, "console: sampling: runtime info", "broker", b.Name, "addr", b.Addr, "err", err)
			continue
		}
		s.add(b.Name, parseSample(time.Now(), info))
	}
}

func (s *sampler) add(broker string, smp sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := append(s.mu.byBroker[broker], smp)
	if len(h) > samplesKept {
		h = append(h[:0:0], h[len(h)-samplesKept:]...)
	}
	s.mu.byBroker[broker] = h
}

// parseSample reads the keys the charts use. putTps and getTransferedTps
// are Java's "10s 60s 600s" triples; the first is taken.
func parseSample(at time.Time, info map[string]string) sample {
	smp := sample{at: at, putTotalToday: -1, getTotalToday: -1}
	put, okPut := firstFloat(info["putTps"])
	get, okGet := firstFloat(info["getTransferedTps"])
	if okPut || okGet {
		smp.putTps, smp.getTps, smp.hasTps = put, get, true
	}
	if v, err := strconv.ParseInt(info["msgPutTotalTodayNow"], 10, 64); err == nil {
		smp.putTotalToday = v
	}
	if v, err := strconv.ParseInt(info["msgGetTotalTodayNow"], 10, 64); err == nil {
		smp.getTotalToday = v
	}
	smp.commitLogMaxOffset, _ = strconv.ParseInt(info["commitLogMaxOffset"], 10, 64)
	return smp
}

func firstFloat(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// point is one chart point: rates over the interval ending at T.
type point struct {
	T int64 `json:"t"` // ms since the epoch
	// Put and Get are messages/s: the broker's own putTps and
	// getTransferedTps when it reports them, else the deltas of
	// msgPutTotalTodayNow and msgGetTotalTodayNow; -1 when unknown (a
	// counter absent, reset at midnight, or stuck at 0 while the
	// CommitLog grows: a broker that does not count).
	Put float64 `json:"put"`
	Get float64 `json:"get"`
	// Bytes is CommitLog bytes written per second (delta of
	// commitLogMaxOffset): always available.
	Bytes float64 `json:"bytes"`
}

// series is a broker's chart data.
type series struct {
	Broker string  `json:"broker"`
	Source string  `json:"source"` // "tps" (broker counters) or "delta" (derived from offsets)
	Points []point `json:"points"`
}

// series returns the chart of every broker sampled, sorted by name.
func (s *sampler) series() []series {
	s.mu.Lock()
	hist := make(map[string][]sample, len(s.mu.byBroker))
	for k, v := range s.mu.byBroker {
		hist[k] = v // samples are never modified in place: add copies on trim
	}
	s.mu.Unlock()
	out := make([]series, 0, len(hist))
	for name, h := range hist {
		out = append(out, chart(name, h))
	}
	sortBy(out, func(s series) string { return s.Broker })
	return out
}

// chart turns consecutive samples into rates.
func chart(name string, h []sample) series {
	sr := series{Broker: name, Source: "delta", Points: []point{}}
	for i := 1; i < len(h); i++ {
		prev, cur := h[i-1], h[i]
		dt := cur.at.Sub(prev.at).Seconds()
		if dt <= 0 {
			continue
		}
		p := point{T: cur.at.UnixMilli(), Get: -1, Bytes: max(float64(cur.commitLogMaxOffset-prev.commitLogMaxOffset)/dt, 0)}
		switch {
		case cur.hasTps:
			sr.Source = "tps"
			p.Put, p.Get = cur.putTps, cur.getTps
		default:
			grew := cur.commitLogMaxOffset > prev.commitLogMaxOffset
			p.Put = counterRate(prev.putTotalToday, cur.putTotalToday, dt, grew)
			p.Get = counterRate(prev.getTotalToday, cur.getTotalToday, dt, false)
		}
		sr.Points = append(sr.Points, p)
	}
	return sr
}

// counterRate is the rate of a daily counter between two samples, -1 when
// it cannot be told: absent, reset (a new day), or still 0 although the
// CommitLog grew (stuck: the broker does not count).
func counterRate(prev, cur int64, dt float64, grew bool) float64 {
	if prev < 0 || cur < prev || grew && cur == 0 {
		return -1
	}
	return float64(cur-prev) / dt
}
