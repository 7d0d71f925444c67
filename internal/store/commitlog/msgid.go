package commitlog

import (
	"net/netip"

	"github.com/rocketd/rocketd/internal/message"
)

// msgIDFormatter builds offset message ids (spec §5.8) for one store host.
// The host and port part is the same for every record of a log, so it is
// encoded once; a put only hex-encodes its 8-byte offset (the id string is
// still a put's one allocation; a batch builds its id list in one buffer).
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
func (f *msgIDFormatter) format(offset int64) string {
	id := f.fill(offset)
	return string(id[:f.len()])
}

// len is the length of an id: 32 (IPv4) or 56 (IPv6).
func (f *msgIDFormatter) len() int { return f.n + 16 }

// fill returns a copy of the buffer holding the id of offset in its first
// len() bytes (a copy: puts format concurrently).
func (f *msgIDFormatter) fill(offset int64) [message.OffsetMsgIDLenV6]byte {
	buf := f.buf
	tail := buf[f.n : f.n+16]
	u := uint64(offset)
	for i := 15; i >= 0; i-- {
		tail[i] = hexDigits[u&0xF]
		u >>= 4
	}
	return buf
}
