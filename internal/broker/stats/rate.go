package stats

import "sync"

// Rate is the per-second rate of a monotonic counter the broker keeps
// elsewhere (the timer's enqueued and delivered messages), read by the
// sampler every second with the store figures.
type Rate struct {
	read func() uint64
	mu   sync.Mutex
	pts  []point // v[0] only; the last rateKeep+1 samples
}

// rateKeep is the seconds a Rate looks back.
const rateKeep = 10

// NewRate returns a Rate of read, sampled from the next second on.
func (s *Stats) NewRate(read func() uint64) *Rate {
	r := &Rate{read: read, pts: make([]point, 0, rateKeep+2)}
	if s == nil {
		return r
	}
	s.mu.Lock()
	s.rates = append(s.rates, r)
	s.mu.Unlock()
	return r
}

func (r *Rate) sample(ms int64) {
	var p point
	p.at, p.v[0] = ms, r.read()
	r.mu.Lock()
	r.pts = append(r.pts, p)
	if len(r.pts) > rateKeep+1 {
		copy(r.pts, r.pts[1:])
		r.pts = r.pts[:len(r.pts)-1]
	}
	r.mu.Unlock()
}

// PerSecond is the rate over the last ten seconds (or the seconds sampled
// so far; 0 before two samples).
func (r *Rate) PerSecond() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pts) < 2 {
		return 0
	}
	first, last := r.pts[0], r.pts[len(r.pts)-1]
	if last.at <= first.at {
		return 0
	}
	return float64(last.v[0]-first.v[0]) * 1000 / float64(last.at-first.at)
}
