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

// HA authentication (doc.go, "Authentication"). The marks fill the top
// 16 bits of an offset field, making it negative: never a real offset.
const (
	// challengeMark: a master's challenge is a heartbeat header (size 0)
	// whose offset is challengeMark | a 48-bit random nonce.
	challengeMark uint64 = 0xFFA5 << 48
	// answerMark: a slave's answer starts with this 8-byte unit, then
	// int16 key length, the AccessKey, and the 20-byte signature.
	answerMark uint64 = 0xFFA6_7263_6b64_6861 // 0xFFA6 "rckdha"
	markMask   uint64 = 0xFFFF << 48
	// maxAnswerKey bounds the AccessKey of an answer.
	maxAnswerKey = 1024
	// sigSize is an HmacSHA1.
	sigSize = 20
)

// isChallenge reports whether a transfer header is a master's challenge;
// the challenge is the header's first 8 bytes.
func isChallenge(hb []byte) bool {
	return binary.BigEndian.Uint64(hb)&markMask == challengeMark && binary.BigEndian.Uint32(hb[8:]) == 0
}

// appendAnswer appends a slave's answer to dst.
func appendAnswer(dst []byte, accessKey string, sig []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, answerMark)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(accessKey)))
	dst = append(dst, accessKey...)
	return append(dst, sig...)
}
