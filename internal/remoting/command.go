package remoting

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/rocketd/rocketd/internal/protocol"
)

// SerializeType says how a command header is encoded on the wire: the high
// byte of the frame's header-length word (rocketmq-spec.md §1.1).
type SerializeType uint8

// Header serializations. Java peers and the Go client send JSON by default.
const (
	JSON     SerializeType = 0
	RocketMQ SerializeType = 1
)

// String returns the name Java uses for the type ("JSON", "ROCKETMQ").
func (t SerializeType) String() string {
	switch t {
	case JSON:
		return "JSON"
	case RocketMQ:
		return "ROCKETMQ"
	}
	return "SerializeType(" + strconv.Itoa(int(t)) + ")"
}

// Flag bits of a command (spec §1.6).
const (
	flagResponse int32 = 1 << 0
	flagOneway   int32 = 1 << 1
)

// Values this side puts in the language and version fields of the commands
// it creates. rocketd answers as a 4.9.8 Java peer would: a few behaviours
// on the other side depend on the version ordinal (spec §1.8), and 409
// (V4_9_8) selects the modern ones.
const (
	DefaultLanguage = JAVA
	DefaultVersion  = 409
)

// Command is one remoting request or response (spec §1.2).
//
// A Command returned by DecodeFrame or handed to a handler owns its map and
// may be kept. Body aliases the frame buffer it was read from, which is
// never reused. Remark and extFields values share one string copy of the
// header: strings.Clone one before keeping it in a long-lived table.
//
// The custom header has three forms. ExtFields is the map, and wins when
// set. Header is a typed header the encoders write straight into the
// frame, without a map (protocol.ExtEncoder). A received command whose
// handler was registered with Server.HandleLazyExt (or a response to a
// Client with LazyResponseExt) arrives with neither: its fields are kept
// as they came, read by typed decoders through LookupExt
// (protocol.SendMessageRequestHeader.DecodeFrom) in one pass. Ext,
// ExtField and SetExtField work on every form; Ext turns the command's
// header into the map for good.
type Command struct {
	Code      int32 // request code in requests, response code in responses
	Language  LanguageCode
	Version   int32
	Opaque    int32 // request id; echoed by the response
	Flag      int32 // bit 0 response, bit 1 oneway
	Remark    string
	ExtFields map[string]string // the custom header; nil = none (or another form)
	Body      []byte            // nil = none

	// BodyParts, when Body is nil, is the body as consecutive slices: a
	// pull response's records as the store read them, encoded into the
	// frame without being joined into one buffer first. Only for commands
	// this side sends. With a Release, a large body (16 KiB or more) on a
	// plain socket is written from the parts themselves (writev): they
	// must stay unchanged until Release is called, which may be after the
	// send call returned.
	BodyParts [][]byte
	// Release, when set, is called once the transport no longer reads Body
	// or BodyParts: after the frame was encoded (whether or not it reached
	// the peer), after the write of parts written from where they are
	// returned (or when the connection closed before it), when the send
	// failed before that, or when a handler's
	// result is not sent (the request was oneway). A command dropped
	// elsewhere is never released; whatever Release would return to a pool
	// is then left to the GC.
	Release func()

	// Header is the custom header to encode when ExtFields is nil.
	Header protocol.ExtEncoder

	// SerializeType is how the header was decoded, or how it will be
	// encoded. A response travels in the serialization of its request.
	SerializeType SerializeType

	// ext is a received custom header not made into a map (see
	// compactExt); only when ExtFields is nil.
	ext compactExt
	// pooledBody holds Body's buffer when it is a pooled read buffer (see
	// ReleaseBody).
	pooledBody *[]byte
}

// ReleaseBody gives a received response's Body back to the pool it came
// from (ClientConfig.PooledResponseBodies), or a request's whose route
// lends it (LentBody; the server calls it once the handler returned), and
// clears Body; neither Body nor anything sliced from it may be used
// afterwards. It does nothing for other commands, and the second time.
func (c *Command) ReleaseBody() {
	if p := c.pooledBody; p != nil {
		c.pooledBody, c.Body = nil, nil
		putReadBuffer(p)
	}
}

// Pooled response bodies share the read buffers' pool (*[]byte of
// readBufferSize): a body kept by keepBody fits a read buffer, and a
// response that fills the read buffer is handed over in it, the reader
// taking another (readBuffer.handOff).

// minPooledBody is the smallest body keepBody pools: a small
// one costs little to allocate, and would hold a 64 KiB buffer when not
// given back.
const minPooledBody = 4 << 10

// minLentBody is the smallest request body a LentBody route receives in a
// pooled read buffer: every request queued for a worker holds its body's
// buffer, so a body below a quarter of one would hold more than 4x its
// size (a pipelining producer of 4 KiB messages, thousands in flight).
const minLentBody = readBufferSize / 4

// keepBody copies a received command's Body out of the read buffer it
// aliases: into a pooled buffer when pooledBody says so, else into a
// fresh slice.
func keepBody(cmd *Command, pol *extPolicy) {
	if pooledBody(cmd, pol) {
		p := getReadBuffer()
		cmd.Body = append((*p)[:0], cmd.Body...)
		cmd.pooledBody = p
		return
	}
	cmd.Body = bytes.Clone(cmd.Body)
}

// pooledBody reports whether cmd's body goes into a pooled buffer: a
// response's on a Client with PooledResponseBodies, a request's whose
// route lends it (LentBody).
func pooledBody(cmd *Command, pol *extPolicy) bool {
	if pol == nil || len(cmd.Body) < minPooledBody || len(cmd.Body) > readBufferSize {
		return false
	}
	if cmd.Flag&flagResponse != 0 {
		return pol.pooledBodies
	}
	return len(cmd.Body) >= minLentBody && slices.Contains(pol.lentBodies, cmd.Code)
}

// NewRequestHeader returns a request carrying the typed header h (encoded
// without a map) and body, neither copied.
func NewRequestHeader(code int32, h protocol.ExtEncoder, body []byte) *Command {
	return &Command{Code: code, Language: DefaultLanguage, Version: DefaultVersion, Header: h, Body: body}
}

// NewRequest returns a request with the default language and version. ext
// and body are not copied.
func NewRequest(code int32, ext map[string]string, body []byte) *Command {
	return &Command{Code: code, Language: DefaultLanguage, Version: DefaultVersion, ExtFields: ext, Body: body}
}

// NewResponse returns a response with the given code and remark. The
// transport fills in the opaque and the serialization of the request when it
// sends the response a handler returned.
func NewResponse(code int32, remark string) *Command {
	return &Command{Code: code, Language: DefaultLanguage, Version: DefaultVersion, Flag: flagResponse, Remark: remark}
}

// NewResponseTo returns a response to req: its opaque and serialization are
// copied. Use it for deferred replies sent later with Conn.WriteResponse.
func NewResponseTo(req *Command, code int32, remark string) *Command {
	r := NewResponse(code, remark)
	r.Opaque = req.Opaque
	r.SerializeType = req.SerializeType
	return r
}

// bodyLen is the length of the body the frame carries: Body, or BodyParts
// when Body is nil.
func (c *Command) bodyLen() int {
	if c.Body != nil {
		return len(c.Body)
	}
	n := 0
	for _, p := range c.BodyParts {
		n += len(p)
	}
	return n
}

// appendBody appends the body (Body, or BodyParts when Body is nil) to dst.
func (c *Command) appendBody(dst []byte) []byte {
	if c.Body != nil {
		return append(dst, c.Body...)
	}
	if len(c.BodyParts) > 0 {
		dst = slices.Grow(dst, c.bodyLen())
		for _, p := range c.BodyParts {
			dst = append(dst, p...)
		}
	}
	return dst
}

// release calls Release once; the transport calls it when done with the
// body (see Release).
func (c *Command) release() {
	if f := c.Release; f != nil {
		c.Release = nil
		f()
	}
}

// IsResponse reports whether the response bit is set.
func (c *Command) IsResponse() bool { return c.Flag&flagResponse != 0 }

// IsOneway reports whether the oneway bit is set: the receiver must not
// answer.
func (c *Command) IsOneway() bool { return c.Flag&flagOneway != 0 }

// MarkOneway sets the oneway bit.
func (c *Command) MarkOneway() { c.Flag |= flagOneway }

// MarkResponse sets the response bit.
func (c *Command) MarkResponse() { c.Flag |= flagResponse }

// Ext returns the custom header as a map, whatever form the command holds
// it in: the first call on a received compact header or a typed Header
// builds the map, which from then on is the command's header (ExtFields
// set, Header cleared). nil when the command has no custom header.
func (c *Command) Ext() map[string]string {
	if c.ExtFields == nil {
		switch {
		case c.ext.ok:
			c.ExtFields = c.ext.toMap()
		case c.Header != nil:
			c.ExtFields = protocol.Ext(c.Header)
		}
		c.ext, c.Header = compactExt{}, nil
	}
	return c.ExtFields
}

// LookupExt returns the values of keys in one pass over the custom header
// without building a map (protocol.ExtSource), whatever its form.
func (c *Command) LookupExt(keys []string) protocol.ExtValues {
	switch {
	case c.ExtFields != nil:
		return protocol.MapExt(c.ExtFields).LookupExt(keys)
	case c.ext.ok:
		return c.ext.lookup(keys)
	case c.Header != nil:
		return protocol.MapExt(protocol.Ext(c.Header)).LookupExt(keys)
	}
	return protocol.ExtValues{}
}

// ExtField returns the named custom-header value, or "" when absent.
func (c *Command) ExtField(key string) string {
	switch {
	case c.ExtFields != nil:
		return c.ExtFields[key]
	case c.ext.ok:
		v, _ := c.ext.get(key)
		return v
	case c.Header != nil:
		return protocol.Ext(c.Header)[key]
	}
	return ""
}

// SetExtField sets a custom-header value, creating the map when needed
// (a compact or typed header becomes the map first).
func (c *Command) SetExtField(key, val string) {
	if c.Ext() == nil {
		c.ExtFields = make(map[string]string, 8)
	}
	c.ExtFields[key] = val
}

// ExtEntry is one custom-header field.
type ExtEntry struct{ Key, Value string }

// AppendExt appends the custom header's fields to dst, whatever form the
// header is in, without building a map: in map order for ExtFields, as
// received for the compact form (where a repeated key appears once per
// entry, the last being the one lookups return). Signature checks use it
// with a stack array as dst.
func (c *Command) AppendExt(dst []ExtEntry) []ExtEntry {
	switch {
	case c.ExtFields != nil:
		for k, v := range c.ExtFields {
			dst = append(dst, ExtEntry{k, v})
		}
	case c.ext.ok:
		for p := 0; ; {
			k, v, after, ok := c.ext.next(p)
			if !ok {
				break
			}
			p = after
			dst = append(dst, ExtEntry{k, v})
		}
	case c.Header != nil:
		for k, v := range protocol.Ext(c.Header) {
			dst = append(dst, ExtEntry{k, v})
		}
	}
	return dst
}
