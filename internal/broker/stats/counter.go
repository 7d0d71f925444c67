package stats

import (
	"math/rand/v2"
	"sync/atomic"
)

// Field indexes of a counter. Each kind of entry uses a few of them:
//
//	topic entry:       fTimes, fMsgs, fBytes
//	group@topic entry: fTimes, fMsgs, fBytes, fLatency, fSendBack
//	broker entry:      fPut, fPutNoSys, fGet, fGetNoSys, fStorePut,
//	                   fGetFound, fGetMiss, fTransferred
const (
	fTimes    = iota // requests (StatsItem.times of *_NUMS and *_SIZE)
	fMsgs            // messages (TOPIC_PUT_NUMS, GROUP_GET_NUMS)
	fBytes           // bytes (TOPIC_PUT_SIZE, GROUP_GET_SIZE)
	fLatency         // pull latency sum in ms (GROUP_GET_LATENCY value)
	fSendBack        // SNDBCK_PUT_NUMS
	nFields   = 8
)

// Broker entry fields (the same slots, other meanings).
const (
	fPut         = 0 // BROKER_PUT_NUMS
	fPutNoSys    = 1 // BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC
	fGet         = 2 // BROKER_GET_NUMS
	fGetNoSys    = 3 // BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC
	fStorePut    = 4 // every message stored (StoreStatsService putTps)
	fGetFound    = 5 // pulls that found messages (getFoundTps)
	fGetMiss     = 6 // pulls that found none (getMissTps)
	fTransferred = 7 // messages pulled (getTransferredTps)
)

// stripes is the number of cells a counter spreads its adds over, so that
// concurrent senders on different Ps rarely write the same cache line.
const stripes = 8

// cell is one stripe: exactly one 64-byte cache line.
type cell struct {
	v [nFields]atomic.Uint64
}

// counter is a striped set of nFields monotonic counters (Java's LongAdder).
type counter struct {
	cells [stripes]cell
}

// stripe picks a stripe with the runtime's per-P generator: no lock, no
// allocation, and two Ps rarely pick the same line. One pick serves every
// counter a count touches.
func stripe() uint32 { return rand.Uint32() & (stripes - 1) }

// load sums the stripes into v.
func (c *counter) load() (v [nFields]uint64) {
	for i := range c.cells {
		for f := range v {
			v[f] += c.cells[i].v[f].Load()
		}
	}
	return v
}

// sum is field f summed over the stripes.
func (c *counter) sum(f int) uint64 {
	var s uint64
	for i := range c.cells {
		s += c.cells[i].v[f].Load()
	}
	return s
}
