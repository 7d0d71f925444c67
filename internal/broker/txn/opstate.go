package txn

// maxDoneSpan bounds the settled-half bitset (16 MiB): an op record naming
// a half offset further ahead than this is not from this broker's half
// queue and is ignored.
const maxDoneSpan = 1 << 27

// opState is what the check goroutine knows of the op queue between
// rounds, kept compact: a busy broker has millions of op records between
// the op progress and the queue's end (every transaction of the last
// Timeout + CheckInterval).
//
//	maxHalf[i]  the largest half offset op record base+i names (-1: none);
//	            the op progress moves past it once the half progress has
//	done        bitset of the half offsets the op records settle, bit 0 =
//	            half offset doneBase (a multiple of 64)
type opState struct {
	base     int64
	maxHalf  []int64
	doneBase int64
	done     []uint64
}

// next is the op queue offset of the next op record to read.
func (o *opState) next() int64 { return o.base + int64(len(o.maxHalf)) }

// reset forgets everything; reading resumes at op queue offset base.
func (o *opState) reset(base int64) {
	o.base = base
	o.maxHalf = o.maxHalf[:0]
	o.doneBase = 0
	o.done = o.done[:0]
}

// addOp records the op record at next() settling halves.
func (o *opState) addOp(halves []int64) {
	top := int64(-1)
	for _, h := range halves {
		if h-o.doneBase >= maxDoneSpan {
			continue // not a half offset of this queue: must not hold up the op progress
		}
		top = max(top, h)
		o.markDone(h)
	}
	o.maxHalf = append(o.maxHalf, top)
}

func (o *opState) markDone(h int64) {
	if h < o.doneBase || h-o.doneBase >= maxDoneSpan {
		return
	}
	idx := h - o.doneBase
	w := int(idx / 64)
	for len(o.done) <= w {
		o.done = append(o.done, 0)
	}
	o.done[w] |= 1 << (idx % 64)
}

// isDone reports whether an op record settles half offset h.
func (o *opState) isDone(h int64) bool {
	if h < o.doneBase {
		return false
	}
	idx := h - o.doneBase
	w := idx / 64
	return w < int64(len(o.done)) && o.done[w]&(1<<(idx%64)) != 0
}

// trimDone forgets the settled halves below progress (the walk never goes
// back).
func (o *opState) trimDone(progress int64) {
	newBase := progress &^ 63
	if newBase <= o.doneBase {
		return
	}
	k := (newBase - o.doneBase) / 64
	if k >= int64(len(o.done)) {
		o.done = o.done[:0]
	} else {
		o.done = o.done[:copy(o.done, o.done[k:])]
	}
	o.doneBase = newBase
}

// advance moves past every op record whose half offsets are all below
// halfProgress and returns the new op progress.
func (o *opState) advance(halfProgress int64) int64 {
	i := 0
	for i < len(o.maxHalf) && o.maxHalf[i] < halfProgress {
		i++
	}
	if i > 0 {
		o.maxHalf = o.maxHalf[:copy(o.maxHalf, o.maxHalf[i:])]
		o.base += int64(i)
	}
	return o.base
}
