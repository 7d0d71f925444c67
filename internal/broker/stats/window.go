package stats

// point is one sample of an entry's counters (Java's CallSnapshot, with
// every field at once).
type point struct {
	at int64 // unix ms
	v  [nFields]uint64
}

// window is a bounded list of samples taken every period (Java's
// csListMinute, csListHour, csListDay).
type window struct {
	pts    []point
	max    int   // samples kept
	period int64 // ms between samples
}

// Windows of StatsItem: every 10 s keeping 7 (one minute), every 10 min
// keeping 7 (one hour), every hour keeping 25 (one day).
const (
	minutePeriod = 10 * 1000
	hourPeriod   = 10 * 60 * 1000
	dayPeriod    = 60 * 60 * 1000
	minuteKeep   = 7
	hourKeep     = 7
	dayKeep      = 25
)

func newWindow(period int64, keep int) window {
	return window{pts: make([]point, 0, keep+1), max: keep, period: period}
}

// add appends a sample. As Java's samplingIn*, the first sample is preceded
// by a zero one a period earlier, so what was counted before the first
// sample shows as that period's traffic.
func (w *window) add(p point) {
	if len(w.pts) == 0 {
		w.pts = append(w.pts, point{at: p.at - w.period})
	}
	w.pts = append(w.pts, p)
	if len(w.pts) > w.max {
		copy(w.pts, w.pts[1:])
		w.pts = w.pts[:len(w.pts)-1]
	}
}

// Snapshot is Java's StatsSnapshot over one window: Sum is the value added
// between the first and last sample, TPS that per second, Times the calls
// in between and AvgPT Sum per call (0 without calls).
type Snapshot struct {
	Sum   int64
	TPS   float64
	Times int64
	AvgPT float64
}

// snapshot computes Java's StatsItem.computeStatsData for value field vf
// and times field tf (tf < 0: the item counts no times, as BROKER_PUT_NUMS).
func (w *window) snapshot(vf, tf int) Snapshot {
	var s Snapshot
	if len(w.pts) == 0 {
		return s
	}
	first, last := w.pts[0], w.pts[len(w.pts)-1]
	s.Sum = int64(last.v[vf] - first.v[vf])
	if d := last.at - first.at; d != 0 {
		s.TPS = float64(s.Sum) * 1000 / float64(d)
	}
	if tf >= 0 {
		s.Times = int64(last.v[tf] - first.v[tf])
	}
	if s.Times > 0 {
		s.AvgPT = float64(s.Sum) / float64(s.Times)
	}
	return s
}
