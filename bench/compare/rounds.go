package main

import (
	"errors"
	"slices"
	"time"
)

// mergeRounds folds the results of --rounds runs of the same targets (the
// targets alternate within each round) into one result per target: the
// median of each figure over the rounds (the mean of the middle two for an
// even count), failures summed, the smallest backlog, every round's error.
func mergeRounds(rounds [][]*targetResult) []*targetResult {
	if len(rounds) == 1 {
		return rounds[0]
	}
	var out []*targetResult
	for i, first := range rounds[0] {
		all := make([]*targetResult, 0, len(rounds))
		for _, round := range rounds {
			if i < len(round) {
				all = append(all, round[i])
			}
		}
		m := &targetResult{name: first.name, metrics: map[string]metric{}, backlog: first.backlog}
		dur := func(f func(*targetResult) time.Duration) time.Duration {
			return time.Duration(median(all, func(r *targetResult) float64 { return float64(f(r)) }))
		}
		m.startup = dur(func(r *targetResult) time.Duration { return r.startup })
		m.routed = dur(func(r *targetResult) time.Duration { return r.routed })
		m.idleRSS = int64(median(all, func(r *targetResult) float64 { return float64(r.idleRSS) }))
		m.peakRSS = int64(median(all, func(r *targetResult) float64 { return float64(r.peakRSS) }))
		m.fsync = dur(func(r *targetResult) time.Duration { return r.fsync })
		m.pageCache.grow = dur(func(r *targetResult) time.Duration { return r.pageCache.grow })
		m.pageCache.overwrite = dur(func(r *targetResult) time.Duration { return r.pageCache.overwrite })
		var errs []error
		for _, r := range all {
			errs = append(errs, r.err)
			m.notes = append(m.notes, r.notes...)
			m.duration += r.duration
			m.backlog = min(m.backlog, r.backlog)
			for code, n := range r.fillFailures {
				if m.fillFailures == nil {
					m.fillFailures = map[string]int64{}
				}
				m.fillFailures[code] += n
			}
		}
		m.err = errors.Join(errs...)
		ids := map[string]bool{}
		for _, r := range all {
			for id := range r.metrics {
				ids[id] = true
			}
		}
		for id := range ids {
			var have []*targetResult
			for _, r := range all {
				if _, ok := r.metrics[id]; ok {
					have = append(have, r)
				}
			}
			mm := metric{
				TPS: median(have, func(r *targetResult) float64 { return r.metrics[id].TPS }),
				P99: median(have, func(r *targetResult) float64 { return r.metrics[id].P99 }),
				Max: median(have, func(r *targetResult) float64 { return r.metrics[id].Max }),
				ServerCPU: time.Duration(median(have, func(r *targetResult) float64 {
					return float64(r.metrics[id].ServerCPU)
				})),
				ClientCPU: time.Duration(median(have, func(r *targetResult) float64 {
					return float64(r.metrics[id].ClientCPU)
				})),
			}
			for _, r := range have {
				mm.Failures += r.metrics[id].Failures
				mm.Messages += r.metrics[id].Messages
				for code, n := range r.metrics[id].FailedBy {
					if mm.FailedBy == nil {
						mm.FailedBy = map[string]int64{}
					}
					mm.FailedBy[code] += n
				}
			}
			m.metrics[id] = mm
		}
		out = append(out, m)
	}
	return out
}

// median of f over rs, skipping zeros (a figure a failed round lacks).
func median(rs []*targetResult, f func(*targetResult) float64) float64 {
	var vs []float64
	for _, r := range rs {
		if v := f(r); v != 0 {
			vs = append(vs, v)
		}
	}
	return medianOf(vs)
}

// medianOf is the median of vs (0 when empty); it sorts vs.
func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}
