package consumequeue

import (
	"sync"
	"sync/atomic"
)

// Read-ahead of a queue's units. A consumer reading a backlog pulls 32
// units (640 B) at a time, and the pread of those cost as much as a
// sixth of what reading the records' 32 KiB from the CommitLog did: the
// syscall, not the copy. A queue therefore reads up to readAheadBytes
// from where a sequential reader goes on and keeps them for the next
// pulls, which then copy their units from memory.
//
// Committed units never change while the queue's generation stays the
// same: Truncate, Recover and Destroy, the only writers of bytes below
// written, bump it before and after their work, so that an entry filled
// while one of them ran (or from bytes read before it) is never used.
//
// A queue keeps at most one block, and all queues together at most
// maxReadAheadBytes: past that, queues read what they are asked for, as
// before. Blocks go with Destroy and when the queue's files are closed.

const (
	// readAheadBytes is the most a queue keeps: 256 units, 8 pulls of 32.
	readAheadBytes = 256 * UnitSize
	// maxReadAheadBytes bounds the blocks of all queues (1,600 queues).
	maxReadAheadBytes = 8 << 20
)

// readAheadTotal is the bytes of the blocks all queues hold.
var readAheadTotal atomic.Int64

// readAhead is a queue's block of read-ahead units.
type readAhead struct {
	mu  sync.Mutex
	gen uint64 // the queue's generation the block was read in
	pos int64  // logical byte position of buf[0]
	buf []byte // the units; nil until the queue first reads ahead
	n   int    // valid bytes of buf
	off bool   // dropped for good: the queue's files are closed
}

// bumpGen starts or ends a change of committed units (see readAhead).
func (q *Queue) bumpGen() { q.gen.Add(1) }

// readAheadHit copies the units at [pos, pos+len(b)) into b when the block
// holds them in generation gen.
func (q *Queue) readAheadHit(b []byte, pos int64, gen uint64) bool {
	ra := &q.ra
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.n == 0 || ra.gen != gen || pos < ra.pos || pos+int64(len(b)) > ra.pos+int64(ra.n) {
		return false
	}
	copy(b, ra.buf[pos-ra.pos:])
	return true
}

// readAheadFrom reports whether a miss at pos should refill the block:
// the block is empty, stale, or the reader goes on where it ends (or
// inside it). A reader elsewhere (another consumer group far behind or
// ahead) reads only its units and leaves the block to the sequential one.
func (q *Queue) readAheadFrom(pos int64, gen uint64) bool {
	ra := &q.ra
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return ra.n == 0 || ra.gen != gen || (pos >= ra.pos && pos <= ra.pos+int64(ra.n))
}

// fillReadAhead stores data, the units at pos read in generation gen, as
// the block, unless the generation moved meanwhile or the global bound
// leaves no room for a first block. data is copied.
func (q *Queue) fillReadAhead(data []byte, pos int64, gen uint64) {
	ra := &q.ra
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if q.gen.Load() != gen || ra.off {
		return
	}
	if ra.buf == nil {
		if readAheadTotal.Add(readAheadBytes) > maxReadAheadBytes {
			readAheadTotal.Add(-readAheadBytes)
			return
		}
		ra.buf = make([]byte, readAheadBytes)
	}
	ra.gen, ra.pos, ra.n = gen, pos, copy(ra.buf, data)
}

// dropReadAhead lets go of the block for good.
func (q *Queue) dropReadAhead() {
	ra := &q.ra
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.buf != nil {
		readAheadTotal.Add(-readAheadBytes)
	}
	ra.buf, ra.n, ra.off = nil, 0, true
}
