package ha

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Sizes of the protocol units (doc.go). Do not change: Java peers use them.
const (
	// ReportSize is a slave's offset report.
	ReportSize = 8
	// HeaderSize is a transfer header: offset 8, size 4.
	HeaderSize = 12
)

// ErrBadHeader: a transfer header that cannot be right (negative offset or
// size, or a size above what the receiver accepts).
var ErrBadHeader = errors.New("ha: bad transfer header")

// Header is a transfer header: Size bytes of CommitLog data starting at
// Offset follow it (Size 0: heartbeat).
type Header struct {
	Offset int64
	Size   int32
}

// AppendTo appends the 12-byte encoding of h to dst.
func (h Header) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Offset))
	return binary.BigEndian.AppendUint32(dst, uint32(h.Size))
}

// DecodeHeader decodes a transfer header from the first HeaderSize bytes of
// b, rejecting sizes above maxSize before anything is allocated for them.
func DecodeHeader(b []byte, maxSize int) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes", ErrBadHeader, len(b))
	}
	h := Header{Offset: int64(binary.BigEndian.Uint64(b)), Size: int32(binary.BigEndian.Uint32(b[8:]))}
	if h.Offset < 0 || h.Size < 0 || int(h.Size) > maxSize {
		return Header{}, fmt.Errorf("%w: offset %d size %d (max %d)", ErrBadHeader, h.Offset, h.Size, maxSize)
	}
	return h, nil
}

// appendReport appends a slave's 8-byte offset report to dst.
func appendReport(dst []byte, offset int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(offset))
}

// decodeReport decodes an offset report; a negative offset is an error.
func decodeReport(b []byte) (int64, error) {
	off := int64(binary.BigEndian.Uint64(b))
	if off < 0 {
		return 0, fmt.Errorf("ha: negative offset report %d", off)
	}
	return off, nil
}
