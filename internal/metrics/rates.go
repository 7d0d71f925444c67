package metrics

import (
	"sync"
	"time"
)

// DefaultRateWindow is the shortest time between two samples of the
// cumulative counts a rate is computed from: the exporter's TPS families
// are per-second rates over the last window, as Java's per-minute stats.
const DefaultRateWindow = 10 * time.Second

// rateKey names one cumulative count.
type rateKey struct {
	kind rateKind
	a, b string // topic; or group and topic
}

type rateKind uint8

const (
	topicPutMsgs rateKind = iota
	topicPutBytes
	groupGetMsgs
	groupGetBytes
)

// rates turns cumulative counts into per-second rates at scrape time. The
// counts are sampled at most once per window, whatever the number of
// scrapers: a scrape in between gets the rates of the last full window.
type rates struct {
	mu     sync.Mutex
	window time.Duration
	at     time.Time
	prev   map[rateKey]uint64
	cur    map[rateKey]float64
}

// update offers a sample taken at now and returns the current rates (empty
// until two samples a window apart exist). The returned map must not be
// changed.
func (r *rates) update(now time.Time, sample map[rateKey]uint64) map[rateKey]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prev == nil {
		r.prev, r.at = sample, now
		return r.cur
	}
	elapsed := now.Sub(r.at)
	if elapsed < r.window {
		return r.cur
	}
	cur := make(map[rateKey]float64, len(sample))
	for k, v := range sample {
		p := r.prev[k]
		if v < p { // restarted counts: count from zero
			p = 0
		}
		cur[k] = float64(v-p) / elapsed.Seconds()
	}
	r.prev, r.at, r.cur = sample, now, cur
	return cur
}
