package ha

import (
	"sync/atomic"
	"time"
)

// flow counts the bytes of one transfer direction per wall-clock second,
// for the HA status (Java's FlowMonitor: transferredByteInSecond). One
// goroutine adds; any goroutine reads the last whole second. It needs no
// timer: add rolls the window over when the second changes.
type flow struct {
	sec  atomic.Int64 // unix second cur counts
	cur  atomic.Int64 // bytes in second sec
	last atomic.Int64 // bytes in second sec-1
}

func (f *flow) add(n int, now time.Time) {
	s := now.Unix()
	if old := f.sec.Load(); old != s {
		prev := int64(0)
		if old == s-1 {
			prev = f.cur.Load()
		}
		f.last.Store(prev)
		f.cur.Store(0)
		f.sec.Store(s)
	}
	f.cur.Add(int64(n))
}

// perSecond returns the bytes of the last whole second before now.
func (f *flow) perSecond(now time.Time) int64 {
	s := now.Unix()
	switch f.sec.Load() {
	case s:
		return f.last.Load()
	case s - 1:
		return f.cur.Load()
	}
	return 0
}
