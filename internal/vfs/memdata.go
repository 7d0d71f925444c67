package vfs

// memChunk is the page size of MemFS file contents: the unit of sparse
// storage, of dirty tracking and of torn writes in CrashOptions.
const memChunk = 4096

// memData is a sparse file content: a size and the non-zero pages. A missing
// page reads as zeros, so a preallocated 1 GiB segment costs nothing until it
// is written.
//
// Invariant: every byte at or beyond size in a stored page is zero, so growing
// the size never exposes old bytes.
type memData struct {
	size   int64
	chunks map[int64]*[memChunk]byte
}

func newMemData() memData { return memData{chunks: map[int64]*[memChunk]byte{}} }

func (d *memData) clone() memData {
	c := memData{size: d.size, chunks: make(map[int64]*[memChunk]byte, len(d.chunks))}
	for i, p := range d.chunks {
		cp := *p
		c.chunks[i] = &cp
	}
	return c
}

// readAt copies the bytes of [off, off+len(p)) that lie below size and returns
// how many it copied.
func (d *memData) readAt(p []byte, off int64) int {
	if off >= d.size {
		return 0
	}
	if rest := d.size - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		idx, in := pos/memChunk, int(pos%memChunk)
		span := min(memChunk-in, len(p)-n)
		if c := d.chunks[idx]; c != nil {
			copy(p[n:n+span], c[in:in+span])
		} else {
			clear(p[n : n+span])
		}
		n += span
	}
	return n
}

// writeAt stores p at off and records the touched pages in dirty. The caller
// has grown size to cover off+len(p).
func (d *memData) writeAt(p []byte, off int64, dirty map[int64]struct{}) {
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		idx, in := pos/memChunk, int(pos%memChunk)
		span := min(memChunk-in, len(p)-n)
		c := d.chunks[idx]
		if c == nil {
			c = new([memChunk]byte)
			d.chunks[idx] = c
		}
		copy(c[in:in+span], p[n:n+span])
		dirty[idx] = struct{}{}
		n += span
	}
}

// truncate sets the size. Shrinking zeroes the cut part of the last page and
// drops later pages (marking them dirty, so that Sync drops them too).
func (d *memData) truncate(size int64, dirty map[int64]struct{}) {
	if size < d.size {
		for i, c := range d.chunks {
			start := i * memChunk
			switch {
			case start >= size:
				delete(d.chunks, i)
				dirty[i] = struct{}{}
			case start+memChunk > size:
				clear(c[size-start:])
				dirty[i] = struct{}{}
			}
		}
	}
	d.size = size
}

// zeroBeyondSize restores the invariant after pages were copied in wholesale.
func (d *memData) zeroBeyondSize() {
	for i, c := range d.chunks {
		start := i * memChunk
		switch {
		case start >= d.size:
			delete(d.chunks, i)
		case start+memChunk > d.size:
			clear(c[d.size-start:])
		}
	}
}
