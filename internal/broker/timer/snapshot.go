package timer

import (
	"fmt"
	"sync/atomic"
)

// SnapshotBounds are the upper bounds, in seconds from now, of
// rocketmq_timer_message_snapshot's ranges (Java's TimerMetrics
// timerDist: 5 s, 1 min, 5 min, 15 min, 1 h, 4 h, 8 h, 24 h).
var SnapshotBounds = [...]int64{5, 60, 300, 900, 3600, 14400, 28800, 86400}

// snapshotHorizonS is the last bound: entries due later are not in the
// snapshot.
const snapshotHorizonS = 86400

// snapshotMarginS is how far the delivery goroutine may fall behind the
// clock before a scrape's range leaves the ring.
const snapshotMarginS = 3600

// dist counts the pending entries per delivery second over the next 24 h
// (and a bucket width and a margin more): the per-second slots Java's
// timer wheel keeps, for rocketmq_timer_message_snapshot.
//
// The goroutine owns the writes: it adds an entry when it files it into
// a bucket already scanned (below), scans each bucket file once when the
// bucket comes within 24 h of now (at start: every bucket already within
// it, one bucket a round), subtracts an entry when it leaves the heap
// (delivered, recalled or dropped), and moves base with the clock,
// clearing the slots of past seconds. An entry is counted iff its second
// was at or after base when it was counted, and subtracted iff its second
// is still at or after base, so a slot never keeps a delivered entry. A
// scrape reads the slots (atomics) from any goroutine.
type dist struct {
	n     int64                          // slots: the second s is in slot s mod n
	slots atomic.Pointer[[]atomic.Int32] // nil until the first entry
	base  atomic.Int64                   // the first second the slots hold
	// scannedUpTo: every bucket starting before it has been scanned (or
	// had no file); entries filed into such a bucket are added at once.
	scannedUpTo int64
	ready       atomic.Bool // the scan has reached the 24 h horizon
	buf         []entry     // scan buffer
}

func newDist(widthMs, nowMs int64) *dist {
	d := &dist{n: snapshotHorizonS + widthMs/1000 + 1 + snapshotMarginS}
	d.base.Store(nowMs / 1000)
	return d
}

// add counts delta entries due at deliverMs (the goroutine only).
func (d *dist) add(deliverMs int64, delta int32) {
	sec, base := deliverMs/1000, d.base.Load()
	if sec < base || sec >= base+d.n {
		return
	}
	p := d.slots.Load()
	if p == nil {
		if delta < 0 {
			return
		}
		s := make([]atomic.Int32, d.n)
		p = &s
		d.slots.Store(p)
	}
	(*p)[sec%d.n].Add(delta)
}

// advance moves base to nowMs's second, clearing the slots of the
// seconds before it (the goroutine only).
func (d *dist) advance(nowMs int64) {
	sec, base := nowMs/1000, d.base.Load()
	if sec <= base {
		return
	}
	if p := d.slots.Load(); p != nil {
		if sec-base >= d.n {
			for i := range *p {
				(*p)[i].Store(0)
			}
		} else {
			for s := base; s < sec; s++ {
				(*p)[s%d.n].Store(0)
			}
		}
	}
	d.base.Store(sec)
}

// Bound is the number of held messages due in (the previous bound,
// BoundS] seconds from now.
type Bound struct {
	BoundS int64
	Count  int64
}

// snapshot sums the slots over each range of SnapshotBounds from nowMs,
// as Java's DefaultStoreMetricsManager reads its wheel: range i covers
// the seconds [now + bound(i-1), now + bound(i)). ok is false until the
// bucket files within the horizon have been scanned.
func (d *dist) snapshot(nowMs int64) (out []Bound, ok bool) {
	if !d.ready.Load() {
		return nil, false
	}
	now := nowMs / 1000
	base := d.base.Load()
	p := d.slots.Load()
	out = make([]Bound, len(SnapshotBounds))
	from := now
	for i, b := range SnapshotBounds {
		out[i].BoundS = b
		if p == nil {
			continue
		}
		var n int64
		for s := max(from, base); s < now+b && s < base+d.n; s++ {
			n += int64((*p)[s%d.n].Load())
		}
		out[i].Count = max(n, 0)
		from = now + b
	}
	return out, true
}

// scanStep scans at most one bucket file within the horizon of nowMs not
// scanned yet, adding its entries; once none is left the snapshot is
// ready (the goroutine only).
func (s *Service) scanStep(nowMs int64) error {
	d := s.dist
	horizon := s.b.start(nowMs+snapshotHorizonS*1000) + s.b.width
	if d.scannedUpTo >= horizon {
		d.ready.Store(true)
		return nil
	}
	if err := s.b.writePending(); err != nil {
		return err
	}
	for _, start := range s.b.order {
		if start < d.scannedUpTo {
			continue
		}
		if start >= horizon {
			break
		}
		var err error
		d.buf, err = s.b.load(start, d.base.Load()*1000, d.buf[:0])
		if err != nil {
			return fmt.Errorf("timer: scan bucket %d for the snapshot: %w", start, err)
		}
		for _, e := range d.buf {
			d.add(e.deliverMs, 1)
		}
		if cap(d.buf) > 1<<16 {
			d.buf = nil // do not keep a large bucket's buffer
		}
		d.scannedUpTo = start + s.b.width
		return nil
	}
	d.scannedUpTo = horizon
	d.ready.Store(true)
	return nil
}

// Snapshot returns the held messages due within each range of
// SnapshotBounds from now (rocketmq_timer_message_snapshot); ok is false
// while the bucket files within 24 h are still being scanned after a
// start. Safe from any goroutine.
func (s *Service) Snapshot() (bounds []Bound, ok bool) {
	return s.dist.snapshot(s.cfg.Now().UnixMilli())
}
