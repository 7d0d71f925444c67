package commitlog

import (
	"net/netip"
	"sync"
	"unsafe"

	"github.com/rocketd/rocketd/internal/message"
)

// msgIDFormatter builds offset message ids (spec §5.8) for one store host.
// The host and port part is the same for every record of a log, so it is
// encoded once; a put only hex-encodes its 8-byte offset (the id string is
// carved from a shared chunk, see format; a batch builds its id list in one
// buffer).
type msgIDFormatter struct {
	buf [message.OffsetMsgIDLenV6]byte // host hex, then room for the offset
	n   int                            // length of the host part
}

func newMsgIDFormatter(store netip.AddrPort) msgIDFormatter {
	var f msgIDFormatter
	id := message.AppendOffsetMsgID(f.buf[:0], store, 0)
	f.n = len(id) - 16
	return f
}

const hexDigits = "0123456789ABCDEF"

// format returns the offset message id of the record at offset; it equals
// message.OffsetMsgID(store, offset).
//
// The string is carved from a small shared chunk (idsPerChunk ids, taken
// per P from idChunks) instead of allocated alone: a put's one allocation
// becomes one per idsPerChunk puts. The cost is retention: an id kept
// alive keeps its whole chunk (at most idsPerChunk ids' bytes) alive.
func (f *msgIDFormatter) format(offset int64) string {
	n := f.len()
	c := idChunks.Get().(*idChunk)
	if len(c.free) < n {
		c.free = make([]byte, idsPerChunk*message.OffsetMsgIDLenV6)
	}
	id := c.free[:n:n]
	c.free = c.free[n:]
	copy(id, f.buf[:f.n])
	putHex(id[f.n:], uint64(offset))
	idChunks.Put(c)
	// id's bytes are written once, here, and never again: the chunk only
	// hands out the bytes after it.
	return unsafe.String(&id[0], n)
}

// idsPerChunk is how many IPv6-length ids one chunk holds.
const idsPerChunk = 8

// idChunk is the unused tail of a chunk of id bytes.
type idChunk struct{ free []byte }

var idChunks = sync.Pool{New: func() any { return new(idChunk) }}

// putHex writes u as 16 uppercase hex digits.
func putHex(dst []byte, u uint64) {
	_ = dst[15]
	for i := 15; i >= 0; i-- {
		dst[i] = hexDigits[u&0xF]
		u >>= 4
	}
}

// len is the length of an id: 32 (IPv4) or 56 (IPv6).
func (f *msgIDFormatter) len() int { return f.n + 16 }

// fill returns a copy of the buffer holding the id of offset in its first
// len() bytes (a copy: puts format concurrently).
func (f *msgIDFormatter) fill(offset int64) [message.OffsetMsgIDLenV6]byte {
	buf := f.buf
	putHex(buf[f.n:f.n+16], uint64(offset))
	return buf
}
