package remoting

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Frame limits (spec §1.1).
const (
	// DefaultMaxFrameSize is Java's com.rocketmq.remoting.frameMaxLength
	// default; the limit counts the whole frame including the length field.
	DefaultMaxFrameSize = 16 << 20
	// maxHeaderLength is what the 24 low bits of the header-length word hold.
	maxHeaderLength = 1<<24 - 1
	// frameFixed is the length field plus the header-length word.
	frameFixed = 8
)

// Errors of the codec. Decoders wrap ErrMalformed, so callers can test with
// errors.Is whatever detail the message carries.
var (
	ErrMalformed     = errors.New("remoting: malformed frame")
	ErrFrameTooLarge = errors.New("remoting: frame too large")
	// ErrNotEncodable means a command cannot be written in the requested
	// serialization (a code or version out of int16 range for ROCKETMQ, a
	// header over 16 MiB, an unknown serialize type).
	ErrNotEncodable = errors.New("remoting: command not encodable")
)

// AppendFrame appends the whole frame of c (4-byte length, header-length
// word, header in c.SerializeType, body: Body, or BodyParts joined) to dst
// and returns the extended slice. On error dst is returned unchanged in
// length. It does not call c.Release (the sending Conn does).
func (c *Command) AppendFrame(dst []byte) ([]byte, error) {
	return c.appendFrame(dst, true)
}

// appendFrameHead appends the frame of c up to its body (the length field
// counting the body, the header-length word, the header): the body follows
// on the wire from elsewhere (a vectored write of BodyParts).
func (c *Command) appendFrameHead(dst []byte) ([]byte, error) {
	return c.appendFrame(dst, false)
}

// appendFrame is AppendFrame; without withBody the body is counted in the
// length field but not appended.
func (c *Command) appendFrame(dst []byte, withBody bool) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	var err error
	switch c.SerializeType {
	case JSON:
		dst = appendJSONHeader(dst, c)
	case RocketMQ:
		dst, err = appendBinaryHeader(dst, c)
	default:
		err = fmt.Errorf("%w: serialize type %d", ErrNotEncodable, c.SerializeType)
	}
	if err != nil {
		return dst[:start], err
	}
	headerLen := len(dst) - start - frameFixed
	if headerLen > maxHeaderLength {
		return dst[:start], fmt.Errorf("%w: header of %d bytes", ErrNotEncodable, headerLen)
	}
	total := len(dst) - start - 4
	if withBody {
		dst = c.appendBody(dst)
		total = len(dst) - start - 4
	} else {
		total += c.bodyLen()
	}
	if uint64(total) > 1<<31-1 {
		return dst[:start], fmt.Errorf("%w: frame of %d bytes", ErrNotEncodable, total)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(total))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(c.SerializeType)<<24|uint32(headerLen))
	return dst, nil
}

// DecodeFrame decodes one frame given WITHOUT its 4-byte length prefix. The
// returned command's Body aliases frame (nil when the frame has no body);
// everything else is copied. Any malformed input yields an error wrapping
// ErrMalformed, never a panic.
func DecodeFrame(frame []byte) (*Command, error) { return decodeFrame(frame, nil) }

// DecodeFrameLazy is DecodeFrame keeping the custom header in the compact
// form, as a Server does for requests to handlers registered with
// HandleLazyExt: for benchmarks and fuzzers of packages that read headers
// (authentication) and must see that form too.
func DecodeFrameLazy(frame []byte) (*Command, error) {
	return decodeFrame(frame, &extPolicy{all: true})
}

// decodeFrame is DecodeFrame leaving the custom header of the commands pol
// names in the compact form (see compactExt).
func decodeFrame(frame []byte, pol *extPolicy) (*Command, error) {
	if len(frame) < 4 {
		return nil, fmt.Errorf("%w: %d bytes, want at least 4", ErrMalformed, len(frame))
	}
	word := binary.BigEndian.Uint32(frame)
	st := SerializeType(word >> 24)
	headerLen := int(word & maxHeaderLength)
	if headerLen > len(frame)-4 {
		return nil, fmt.Errorf("%w: header length %d exceeds frame of %d", ErrMalformed, headerLen, len(frame))
	}
	header := frame[4 : 4+headerLen]
	c := &Command{SerializeType: st}
	var err error
	switch st {
	case JSON:
		err = decodeJSONHeaderWith(header, c, pol)
	case RocketMQ:
		err = decodeBinaryHeaderWith(header, c, pol)
	default:
		err = fmt.Errorf("%w: serialize type %d", ErrMalformed, st)
	}
	if err != nil {
		return nil, err
	}
	if body := frame[4+headerLen:]; len(body) > 0 {
		c.Body = body
	}
	return c, nil
}
