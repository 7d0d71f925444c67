package commitlog

import (
	"sync/atomic"
	"time"
)

// reanchorEvery bounds how long the store clock follows the monotonic
// clock before it reads the wall clock again: a wall-clock step (settimeofday,
// an NTP step) shows in store timestamps within this time.
const reanchorEvery = time.Second

// putClock is the put path's clock: one monotonic reading per put serves
// both the store timestamp and the OS_PAGECACHE_BUSY lock-hold time.
//
// Why not time.Now: it reads the wall and the monotonic clock (two vDSO
// calls, ~60 ns here, a third of a small put's CPU). The wall time in ms is
// instead derived from the monotonic reading and an anchor (a wall and a
// monotonic reading taken together), refreshed every reanchorEvery. Both
// clocks advance at the same (NTP-slewed) rate, so between anchors they
// differ only by a step of the wall clock; store timestamps are clamped to
// never decrease along the log anyway (storeTimeLocked).
type putClock struct {
	epoch  time.Time // carries the monotonic reading all mono values count from
	now    func() time.Time
	real   bool // now is time.Now: derive ms from the anchor
	anchor atomic.Pointer[clockAnchor]
}

type clockAnchor struct {
	mono   int64 // mono() when wallNs was read
	wallNs int64
}

// clockReading is one reading: mono for lock-hold times, ms for the store
// timestamp.
type clockReading struct {
	mono int64 // ns since epoch, >= 1 (0 means "lock free" in lockedSince)
	ms   int64 // wall clock, ms since 1970
}

func newPutClock(now func() time.Time, real bool) *putClock {
	c := &putClock{epoch: time.Now(), now: now, real: real}
	c.reanchor()
	return c
}

// mono reads the monotonic clock only (one vDSO call: time.Since uses the
// runtime's nanotime when epoch carries a monotonic reading).
func (c *putClock) mono() int64 { return int64(time.Since(c.epoch)) + 1 }

func (c *putClock) reanchor() *clockAnchor {
	t := time.Now()
	a := &clockAnchor{mono: int64(t.Sub(c.epoch)) + 1, wallNs: t.UnixNano()}
	c.anchor.Store(a)
	return a
}

// read returns a reading: one monotonic clock read, plus a wall clock read
// once per reanchorEvery (or Config.Now's value with an injected clock).
func (c *putClock) read() clockReading {
	mono := c.mono()
	if !c.real {
		return clockReading{mono: mono, ms: c.now().UnixMilli()}
	}
	a := c.anchor.Load()
	if mono-a.mono >= int64(reanchorEvery) {
		// Concurrent puts may both re-anchor: either anchor is right.
		a = c.reanchor()
	}
	return clockReading{mono: mono, ms: (a.wallNs + mono - a.mono) / int64(time.Millisecond)}
}
