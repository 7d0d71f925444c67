package commitlog

import (
	"net/netip"

	"github.com/rocketd/rocketd/internal/message"
)

// msgIDFormatter builds offset message ids (spec §5.8) for one store host.
// The host and port part is the same for every record of a log, so it is
// encoded once; a put only hex-encodes its 8-byte offset (the id string is
// still the put's one allocation).
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
	buf := f.buf // a copy: format runs concurrently
	tail := buf[f.n : f.n+16]
	u := uint64(offset)
	for i := 15; i >= 0; i-- {
		tail[i] = hexDigits[u&0xF]
		u >>= 4
	}
	return string(buf[:f.n+16])
}
