package protocol

import (
	"encoding/binary"
	"strconv"
)

// ExtEncoder is a typed custom header that a frame encoder writes straight
// into the frame, without the map Ext builds: remoting.Command.Header takes
// one. Both Append methods write exactly the entries AppendExt would put in
// the map, in ascending byte order of their keys, which is the order the
// remoting encoders give a map's entries: the frame is byte for byte the
// one the map would give.
type ExtEncoder interface {
	// AppendExt adds the fields to a map (for callers that want the map
	// after all, Command.Ext).
	AppendExt(ext map[string]string)
	// AppendExtJSON appends the members of the JSON extFields object,
	// "key":"value" separated by commas, without the braces.
	AppendExtJSON(dst []byte) []byte
	// AppendExtBinary appends the ROCKETMQ ext-field entries (keyLen
	// int16, key, valLen int32, value), without the total length.
	AppendExtBinary(dst []byte) []byte
}

// ExtWriter appends a header's entries in one of the two serializations
// (see ExtEncoder). The caller writes the keys in ascending byte order and
// only keys of at most 32767 bytes (Go constants in practice). Values are
// written as the map writers would: numbers in decimal, booleans as
// "true"/"false", every value a JSON string in the JSON form.
type ExtWriter struct {
	buf    []byte
	binary bool
	n      int // entries written
}

// NewExtWriter returns a writer appending to dst, in the ROCKETMQ binary
// form when binary is set, else as JSON object members.
func NewExtWriter(dst []byte, binary bool) ExtWriter { return ExtWriter{buf: dst, binary: binary} }

// Bytes returns dst with the entries written so far appended.
func (w *ExtWriter) Bytes() []byte { return w.buf }

func (w *ExtWriter) key(k string) {
	if w.binary {
		w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(len(k)))
		w.buf = append(w.buf, k...)
	} else {
		if w.n > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = AppendJSONString(w.buf, k)
		w.buf = append(w.buf, ':')
	}
	w.n++
}

// String writes a string entry (a required field: also when empty).
func (w *ExtWriter) String(key, v string) {
	w.key(key)
	if w.binary {
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(v)))
		w.buf = append(w.buf, v...)
		return
	}
	w.buf = AppendJSONString(w.buf, v)
}

// OptString writes a string entry unless v is empty (Java omits nulls).
func (w *ExtWriter) OptString(key, v string) {
	if v != "" {
		w.String(key, v)
	}
}

// Int64 writes a number entry.
func (w *ExtWriter) Int64(key string, v int64) {
	w.key(key)
	if w.binary {
		at := len(w.buf)
		w.buf = append(w.buf, 0, 0, 0, 0)
		w.buf = strconv.AppendInt(w.buf, v, 10)
		binary.BigEndian.PutUint32(w.buf[at:], uint32(len(w.buf)-at-4))
		return
	}
	w.buf = append(w.buf, '"')
	w.buf = strconv.AppendInt(w.buf, v, 10)
	w.buf = append(w.buf, '"')
}

// Int32 writes a number entry.
func (w *ExtWriter) Int32(key string, v int32) { w.Int64(key, int64(v)) }

// OptInt32 writes a number entry when v is set.
func (w *ExtWriter) OptInt32(key string, v Optional[int32]) {
	if v.Set {
		w.Int64(key, int64(v.Value))
	}
}

// Bool writes a boolean entry.
func (w *ExtWriter) Bool(key string, v bool) { w.String(key, strconv.FormatBool(v)) }

// OptBool writes a boolean entry when v is set.
func (w *ExtWriter) OptBool(key string, v Optional[bool]) {
	if v.Set {
		w.Bool(key, v.Value)
	}
}

const jsonHex = "0123456789abcdef"

// AppendJSONString appends s as a quoted JSON string the way remoting
// headers are written: quote, backslash and control characters escaped
// (\n \r \t \b \f, else \u00XX), every other byte, non-ASCII and invalid
// UTF-8 included, as is, so a string survives a round trip byte for byte.
// (Not fastjson's body form: see appendFastJSONString.)
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', jsonHex[b>>4], jsonHex[b&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
