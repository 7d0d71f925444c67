package remoting

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// binaryFixed is the fixed part of a ROCKETMQ header up to and including
// remarkLength (spec §1.4).
const binaryFixed = 17

// appendBinaryHeader appends c's header in the ROCKETMQ binary form. Map
// entries are written in key order so equal commands encode to equal bytes.
func appendBinaryHeader(dst []byte, c *Command) ([]byte, error) {
	if c.Code < math.MinInt16 || c.Code > math.MaxInt16 {
		return dst, fmt.Errorf("%w: code %d does not fit the ROCKETMQ header", ErrNotEncodable, c.Code)
	}
	if c.Version < math.MinInt16 || c.Version > math.MaxInt16 {
		return dst, fmt.Errorf("%w: version %d does not fit the ROCKETMQ header", ErrNotEncodable, c.Version)
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Code)))
	dst = append(dst, byte(c.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Version)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)

	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	switch {
	case c.ExtFields != nil:
		dst, err = appendBinaryExtMap(dst, c.ExtFields)
	case c.Header != nil:
		dst = c.Header.AppendExtBinary(dst)
	case c.ext.ok:
		dst, err = appendBinaryExtMap(dst, c.ext.toMap()) // rare: see appendJSONHeader
	}
	if err != nil {
		return dst[:lenAt], err
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst, nil
}

// appendBinaryExtMap appends m's entries in key order.
func appendBinaryExtMap(dst []byte, m map[string]string) ([]byte, error) {
	var err error
	if len(m) > maxOrderedFields {
		for _, f := range sortedFields(m) {
			if dst, err = appendBinaryField(dst, f.k, f.v); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	var fo fieldOrder
	for k, v := range m {
		if fo.n == maxOrderedFields {
			break // only if the map grew under us: a data race
		}
		fo.keys[fo.n], fo.vals[fo.n] = k, v
		fo.n++
	}
	fo.sort()
	for _, x := range fo.order[:fo.n] {
		if dst, err = appendBinaryField(dst, fo.keys[x], fo.vals[x]); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendBinaryField appends one ext-field entry: keyLen int16, key,
// valLen int32, value.
func appendBinaryField(dst []byte, k, v string) ([]byte, error) {
	if len(k) > math.MaxInt16 {
		return dst, fmt.Errorf("%w: ext field key of %d bytes", ErrNotEncodable, len(k))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
	dst = append(dst, k...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...), nil
}

// field is one ext-field entry.
type field struct{ k, v string }

// maxOrderedFields is how many ext fields the encoders sort on the stack;
// bigger maps (never seen in practice) take the allocating path.
const maxOrderedFields = 32

// fieldOrder puts a command's ext fields in key order for the encoders,
// without allocating and without pointer writes through pointers: the
// encoder fills keys and vals itself (stores into its own stack variable
// need no GC write barrier, which otherwise costs more than the sorting
// during the frequent GC cycles of a busy server), and sort only permutes
// byte indices.
type fieldOrder struct {
	keys, vals [maxOrderedFields]string
	order      [maxOrderedFields]uint8
	n          int
}

// sort fills order with the indices of keys[:n] in ascending key order:
// insertion sort, which beats pdqsort's set-up for a handful of keys, with
// a first-byte test that settles most letter keys at once.
func (o *fieldOrder) sort() {
	for i := range o.n {
		o.order[i] = uint8(i)
	}
	for i := 1; i < o.n; i++ {
		x := o.order[i]
		j := i
		for ; j > 0 && keyLess(o.keys[x], o.keys[o.order[j-1]]); j-- {
			o.order[j] = o.order[j-1]
		}
		o.order[j] = x
	}
}

// sortedFields returns m's entries in ascending key order; for maps too big
// for fieldOrder.
func sortedFields(m map[string]string) []field {
	fs := make([]field, 0, len(m))
	for k, v := range m {
		fs = append(fs, field{k, v})
	}
	slices.SortFunc(fs, func(a, b field) int { return strings.Compare(a.k, b.k) })
	return fs
}

func keyLess(a, b string) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return a < b
}

// binaryReader reads big-endian fields from a header with a sticky error:
// after the first short read every further read returns zero values and the
// caller checks err once at the end (franz-go kbin.Reader style). Strings
// are cut from one string copy of the whole header, made on first use, so a
// header costs one allocation for all its strings.
type binaryReader struct {
	b   []byte // the whole header
	pos int    // next byte to read
	end int    // reads stop here
	hs  string // b as a string, made on first use
	err error
}

func (r *binaryReader) need(n int, what string) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > r.end-r.pos {
		r.err = fmt.Errorf("%w: ROCKETMQ header: %s needs %d bytes, %d left", ErrMalformed, what, n, r.end-r.pos)
		return false
	}
	return true
}

func (r *binaryReader) u8(what string) uint8 {
	if !r.need(1, what) {
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

func (r *binaryReader) u16(what string) uint16 {
	if !r.need(2, what) {
		return 0
	}
	v := binary.BigEndian.Uint16(r.b[r.pos:])
	r.pos += 2
	return v
}

func (r *binaryReader) u32(what string) uint32 {
	if !r.need(4, what) {
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.pos:])
	r.pos += 4
	return v
}

func (r *binaryReader) str(n int, what string) string {
	if !r.need(n, what) || n == 0 {
		return ""
	}
	if r.hs == "" {
		r.hs = string(r.b)
	}
	v := r.hs[r.pos : r.pos+n]
	r.pos += n
	return v
}

// skip passes over n bytes, with str's checks.
func (r *binaryReader) skip(n int, what string) {
	if r.need(n, what) {
		r.pos += n
	}
}

// key reads n bytes as an ext-field key, sharing the common ones.
func (r *binaryReader) key(n int) string {
	if !r.need(n, "key") {
		return ""
	}
	v := internKey(r.b[r.pos : r.pos+n])
	r.pos += n
	return v
}

// decodeBinaryHeader fills c from a ROCKETMQ binary header. Lengths that run
// past the header are errors (Java rejects a remark or map length larger
// than the header); trailing bytes after the map are ignored as Java does.
func decodeBinaryHeader(h []byte, c *Command) error { return decodeBinaryHeaderWith(h, c, nil) }

// decodeBinaryHeaderWith is decodeBinaryHeader keeping the ext fields in
// the compact form when pol says so: the entries are checked as the map
// decoder checks them and then used where they lie in the header copy.
func decodeBinaryHeaderWith(h []byte, c *Command, pol *extPolicy) error {
	r := binaryReader{b: h, end: len(h)}
	c.Code = int32(int16(r.u16("code")))
	c.Language = languageOf(r.u8("language"))
	c.Version = int32(int16(r.u16("version")))
	c.Opaque = int32(r.u32("opaque"))
	c.Flag = int32(r.u32("flag"))
	remarkLen := int32(r.u32("remark length"))
	if remarkLen < 0 && r.err == nil {
		r.err = fmt.Errorf("%w: ROCKETMQ header: remark length %d", ErrMalformed, remarkLen)
	}
	c.Remark = r.str(int(remarkLen), "remark")
	mapLen := int32(r.u32("ext fields length"))
	if mapLen < 0 && r.err == nil {
		r.err = fmt.Errorf("%w: ROCKETMQ header: ext fields length %d", ErrMalformed, mapLen)
	}
	if r.err != nil || mapLen == 0 {
		return r.err
	}
	if !r.need(int(mapLen), "ext fields") {
		return r.err
	}
	r.end = r.pos + int(mapLen)
	if pol.compact(c.Code, c.Flag) {
		start := r.pos
		for r.pos < r.end && r.err == nil {
			r.skip(int(int16(r.u16("key length"))), "key")
			r.skip(int(int32(r.u32("value length"))), "value")
		}
		if r.err == nil {
			if r.hs == "" {
				r.hs = string(r.b)
			}
			c.ext = compactExt{s: r.hs[start:r.end], ok: true}
		}
		return r.err
	}
	// About 25 bytes an entry in practice.
	c.ExtFields = make(map[string]string, min(max(int(mapLen)/25, 4), 32))
	for r.pos < r.end && r.err == nil {
		kl := int16(r.u16("key length"))
		k := r.key(int(kl))
		vl := int32(r.u32("value length"))
		v := r.str(int(vl), "value")
		if r.err == nil {
			c.ExtFields[k] = v
		}
	}
	return r.err
}
