package segment

import (
	"sync/atomic"
	"time"
)

// RollStats is how long rolls waited for their file: the cost of segment
// preparation seen by the writer (0 when the allocator had it ready).
type RollStats struct {
	Rolls     int64         // successful and failed rolls
	MaxWait   time.Duration // the longest wait of one roll
	TotalWait time.Duration
}

// rollStats accumulates RollStats without a lock.
type rollStats struct {
	rolls, maxNs, totalNs atomic.Int64
}

func (s *rollStats) note(d time.Duration) {
	s.rolls.Add(1)
	s.totalNs.Add(int64(d))
	for {
		m := s.maxNs.Load()
		if int64(d) <= m || s.maxNs.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// RollStats returns the waits of the rolls since Open.
func (q *Queue) RollStats() RollStats {
	return RollStats{
		Rolls:     q.stats.rolls.Load(),
		MaxWait:   time.Duration(q.stats.maxNs.Load()),
		TotalWait: time.Duration(q.stats.totalNs.Load()),
	}
}
