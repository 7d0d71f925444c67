package remoting

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/rocketd/rocketd/internal/protocol"
)

// appendJSONHeader appends c's header in the JSON form fastjson writes:
// properties in alphabetical order, remark and extFields omitted when
// absent, every extFields value a JSON string (spec §1.3). extFields keys
// are written sorted so equal commands encode to equal bytes.
func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	switch {
	case c.ExtFields != nil:
		dst = appendJSONExtMap(dst, c.ExtFields)
	case c.Header != nil:
		dst = append(dst, `,"extFields":{`...)
		dst = c.Header.AppendExtJSON(dst)
		dst = append(dst, '}')
	case c.ext.ok:
		// A received command sent on as it is: rare, so via the map.
		dst = appendJSONExtMap(dst, c.ext.toMap())
	}
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	dst = append(dst, `,"language":"`...)
	dst = append(dst, c.Language.String()...)
	dst = append(dst, `","opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = appendJSONString(dst, c.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}')
}

// appendJSONExtMap appends the extFields property holding m, keys sorted.
func appendJSONExtMap(dst []byte, m map[string]string) []byte {
	dst = append(dst, `,"extFields":{`...)
	if len(m) > maxOrderedFields {
		for i, f := range sortedFields(m) {
			dst = appendJSONField(dst, i, f.k, f.v)
		}
	} else {
		// See fieldOrder: filled here, in this function's own stack
		// variable, so the stores need no write barrier.
		var fo fieldOrder
		for k, v := range m {
			if fo.n == maxOrderedFields {
				break // only if the map grew under us: a data race
			}
			fo.keys[fo.n], fo.vals[fo.n] = k, v
			fo.n++
		}
		fo.sort()
		for i, x := range fo.order[:fo.n] {
			dst = appendJSONField(dst, i, fo.keys[x], fo.vals[x])
		}
	}
	return append(dst, '}')
}

// appendJSONField appends the i-th extFields entry, "k":"v".
func appendJSONField(dst []byte, i int, k, v string) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	dst = appendJSONString(dst, k)
	dst = append(dst, ':')
	return appendJSONString(dst, v)
}

// appendJSONString appends s as a quoted JSON string (see
// protocol.AppendJSONString, shared with the typed header encoders so both
// escape alike): a string survives a round trip byte for byte.
func appendJSONString(dst []byte, s string) []byte { return protocol.AppendJSONString(dst, s) }

// maxJSONDepth bounds the nesting of unknown values the scanner skips, so a
// hostile header cannot exhaust the stack.
const maxJSONDepth = 32

// jsonScanner walks a JSON header in place. It is lenient where spec §1.3
// asks (property order, unknown properties, numbers or strings for
// language, non-string extFields values) and strict about syntax.
type jsonScanner struct {
	b []byte
	i int
	// hb is a copy of b, made on first use, and hs the same bytes as a
	// string: values are cut from hs, and an escaped string is unescaped
	// into hb in place of its own escaped text (see unescapeBuffer).
	hb []byte
	hs string
}

// copyHeader makes hb and hs once per header.
func (s *jsonScanner) copyHeader() {
	if s.hb == nil {
		s.hb = append([]byte(nil), s.b...)
		s.hs = unsafe.String(unsafe.SliceData(s.hb), len(s.hb))
	}
}

// lastString returns the string str just returned as v without allocating:
// an unescaped one is cut from the one copy of the whole header, made once
// per header, and an escaped one already lies in that copy, so a header
// with 14 values costs one allocation instead of 14.
func (s *jsonScanner) lastString(v []byte, escaped bool) string {
	if len(v) == 0 {
		return ""
	}
	if escaped {
		// v lies in hb where no other string points, and nothing writes
		// there again: it can become the string itself.
		return unsafe.String(&v[0], len(v))
	}
	s.copyHeader()
	end := s.i - 1 // the closing quote
	return s.hs[end-len(v) : end]
}

// unescapeBuffer returns where strEscaped writes the string whose escaped
// text is b[start:end]: the same bytes of the header copy. Unescaping never
// lengthens a string, so the result fits there, and no other value is cut
// from those bytes (each string's text is its own); the capacity stops at
// end all the same, so an overlong result would be copied, not spill over.
func (s *jsonScanner) unescapeBuffer(start, end int) []byte {
	s.copyHeader()
	return s.hb[start:start:end]
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: JSON header at byte %d: %s", ErrMalformed, s.i, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end of input.
func (s *jsonScanner) peek() byte {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return s.b[s.i] // the usual case: compact JSON has no spaces
	}
	s.skipSpace()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScanner) expect(c byte) error {
	if s.peek() != c {
		return s.errorf("want %q", c)
	}
	s.i++
	return nil
}

// literal consumes one of true, false, null.
func (s *jsonScanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// str consumes a JSON string and returns its content. Without escapes the
// result aliases the input; with escapes it is a new slice. Either way the
// caller copies before keeping it.
func (s *jsonScanner) str() ([]byte, error) {
	v, _, err := s.strEsc()
	return v, err
}

// strEsc is str that also reports whether the string had escapes (then v
// does not alias the input).
func (s *jsonScanner) strEsc() (v []byte, escaped bool, err error) {
	if s.peek() != '"' {
		return nil, false, s.errorf("want a string")
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			v := s.b[start:s.i]
			s.i++
			return v, false, nil
		case '\\':
			v, err := s.strEscaped(start)
			return v, true, err
		}
		s.i++
	}
	return nil, false, s.errorf("unterminated string")
}

// strEscaped continues str from the first backslash.
func (s *jsonScanner) strEscaped(start int) ([]byte, error) {
	// Unescaping never lengthens a string (\uXXXX is 6 bytes for at most 3,
	// a surrogate pair 12 for 4), so the escaped length is enough room.
	end := s.i
	for end < len(s.b) && s.b[end] != '"' {
		if s.b[end] == '\\' {
			end++
		}
		end++
	}
	out := s.unescapeBuffer(start, min(end, len(s.b)))
	out = append(out, s.b[start:s.i]...)
	return s.unescapeRest(out)
}

// appendStr consumes a JSON string like str and appends its content to
// dst: unescaped text is copied once, escaped text is unescaped straight
// into dst.
func (s *jsonScanner) appendStr(dst []byte) ([]byte, error) {
	if s.peek() != '"' {
		return dst, s.errorf("want a string")
	}
	b, start := s.b, s.i+1
	i := start
	for i < len(b) && b[i] != '"' && b[i] != '\\' {
		i++
	}
	dst = append(dst, b[start:i]...)
	s.i = i
	if i == len(b) {
		return dst, s.errorf("unterminated string")
	}
	if b[i] == '"' {
		s.i++
		return dst, nil
	}
	return s.unescapeRest(dst)
}

// unescapeRest appends the rest of a string, from s.i (a backslash or
// plain text) to the closing quote (consumed), to out, resolving the
// escapes. Plain runs are copied whole.
func (s *jsonScanner) unescapeRest(out []byte) ([]byte, error) {
	b := s.b
	for s.i < len(b) {
		j := s.i
		for j < len(b) && b[j] != '"' && b[j] != '\\' {
			j++
		}
		out = append(out, b[s.i:j]...)
		s.i = j
		if j == len(b) {
			break
		}
		if b[j] == '"' {
			s.i++
			return out, nil
		}
		if s.i+1 >= len(b) {
			break
		}
		e := b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A high surrogate pairs with a following \uDCxx; a lone
				// one becomes U+FFFD as in encoding/json.
				save := s.i
				if s.i+1 < len(b) && b[s.i] == '\\' && b[s.i+1] == 'u' {
					s.i += 2
					if r2, ok := s.hex4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, s.errorf("bad escape \\%c", e)
		}
	}
	return nil, s.errorf("unterminated string")
}

func (s *jsonScanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r, true
}

// number consumes a JSON number and returns its text.
func (s *jsonScanner) number() ([]byte, error) {
	s.skipSpace()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	if s.i == start {
		return nil, s.errorf("want a number")
	}
	return s.b[start:s.i], nil
}

// parseInt32 parses a decimal integer without allocating.
func parseInt32(b []byte) (int32, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	if v < -1<<31 || v > 1<<31-1 {
		return 0, false
	}
	return int32(v), true
}

// int32Value reads an integer property: a number, a string holding one
// (lenient), or null (zero).
func (s *jsonScanner) int32Value(name string) (int32, error) {
	var text []byte
	var err error
	switch s.peek() {
	case 'n':
		if s.literal("null") {
			return 0, nil
		}
		return 0, s.errorf("bad literal")
	case '"':
		text, err = s.str()
	default:
		text, err = s.number()
	}
	if err != nil {
		return 0, err
	}
	v, ok := parseInt32(text)
	if !ok {
		return 0, s.errorf("%s: %q is not an int32", name, text)
	}
	return v, nil
}

// skipValue consumes any JSON value.
func (s *jsonScanner) skipValue(depth int) error {
	if depth > maxJSONDepth {
		return s.errorf("nesting deeper than %d", maxJSONDepth)
	}
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case '{', '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		s.i++
		if s.peek() == closing {
			s.i++
			return nil
		}
		for {
			if c == '{' {
				if _, err := s.str(); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.i++
			case closing:
				s.i++
				return nil
			default:
				return s.errorf("want ',' or %q", closing)
			}
		}
	case 't', 'f', 'n':
		if s.literal("true") || s.literal("false") || s.literal("null") {
			return nil
		}
		return s.errorf("bad literal")
	default:
		_, err := s.number()
		return err
	}
}

// extFields reads the extFields object (or null). Values that are not
// strings are kept as their JSON text: numbers and booleans as written,
// objects and arrays verbatim; null values are dropped.
func (s *jsonScanner) extFields() (map[string]string, error) {
	if s.peek() == 'n' {
		if s.literal("null") {
			return nil, nil
		}
		return nil, s.errorf("bad literal")
	}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	// Size the map from the header length (about 40 bytes an entry in
	// practice) so a SEND header does not grow it twice.
	m := make(map[string]string, min(max((len(s.b)-s.i)/40, 4), 32))
	if s.peek() == '}' {
		s.i++
		return m, nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		key := internKey(k)
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		switch s.peek() {
		case '"':
			v, esc, err := s.strEsc()
			if err != nil {
				return nil, err
			}
			m[key] = s.lastString(v, esc)
		case 'n':
			if !s.literal("null") {
				return nil, s.errorf("bad literal")
			}
		default:
			start := s.i
			if err := s.skipValue(1); err != nil {
				return nil, err
			}
			m[key] = string(s.b[start:s.i])
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return m, nil
		default:
			return nil, s.errorf("want ',' or '}' in extFields")
		}
	}
}

// decodeJSONHeader fills c from a JSON header.
func decodeJSONHeader(h []byte, c *Command) error { return decodeJSONHeaderWith(h, c, nil) }

// decodeJSONHeaderWith is decodeJSONHeader keeping the ext fields in the
// compact form when pol says so (see extPolicy.guess and settle for the
// decision, which fastjson's property order makes before the flag is
// known).
func decodeJSONHeaderWith(h []byte, c *Command, pol *extPolicy) error {
	s := jsonScanner{b: h}
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return s.end()
	}
	var codeSeen, flagSeen bool
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		switch string(key) {
		case "code":
			c.Code, err = s.int32Value("code")
			codeSeen = true
		case "flag":
			c.Flag, err = s.int32Value("flag")
			flagSeen = true
		case "opaque":
			c.Opaque, err = s.int32Value("opaque")
		case "version":
			c.Version, err = s.int32Value("version")
		case "language":
			c.Language, err = s.language()
		case "remark":
			c.Remark, err = s.optString()
		case "extFields":
			// A repeated property replaces the earlier one, in either form.
			c.ExtFields, c.ext = nil, compactExt{}
			if pol.guess(c.Code, codeSeen, c.Flag, flagSeen) {
				err = s.compactExtFields(c)
			} else {
				c.ExtFields, err = s.extFields()
			}
		default:
			err = s.skipValue(1)
		}
		if err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			if err := s.end(); err != nil {
				return err
			}
			pol.settle(c)
			return nil
		default:
			return s.errorf("want ',' or '}'")
		}
	}
}

// compactExtFields reads the extFields object (or null) like extFields,
// accepting and rejecting exactly what it does, but transcodes the entries
// into c's compact form instead of a map. A key too long for that form
// (over 32 KiB, never seen in practice) makes it read the object again into
// a map.
func (s *jsonScanner) compactExtFields(c *Command) error {
	if s.peek() == 'n' {
		if s.literal("null") {
			return nil
		}
		return s.errorf("bad literal")
	}
	objStart := s.i
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		c.ext = compactExt{ok: true}
		return nil
	}
	// The entries take about the room of their JSON text (8 bytes of
	// lengths against 5 or 6 of quotes, colon and comma), which the rest
	// of the header bounds with some slack. That bound is loose (the
	// header's other properties, escapes such as a property string's
	// \u0001 taking 6 bytes for 1: a SEND_MESSAGE_V2 request's 260 bytes
	// of entries would occupy a 480-byte allocation), so a header within
	// compactScratch is transcoded on the stack and copied into a string
	// of the entries' exact size. A larger one is transcoded into one
	// allocation of the bound, kept as it is. The two stay apart: were
	// the stack buffer ever to flow into the kept string (unsafe.String),
	// escape analysis would move it to the heap on every call.
	var (
		long bool
		err  error
	)
	if bound := len(s.b) - s.i + 64; bound > compactScratch {
		var eb []byte
		eb, long, err = s.appendExtEntries(make([]byte, 0, bound))
		if err == nil && !long {
			c.ext = compactExt{s: unsafe.String(unsafe.SliceData(eb), len(eb)), ok: true}
		}
	} else {
		var scratch [compactScratch]byte
		var eb []byte
		eb, long, err = s.appendExtEntries(scratch[:0])
		if err == nil && !long {
			c.ext = compactExt{s: string(eb), ok: true}
		}
	}
	if err == nil && long {
		s.i = objStart
		c.ExtFields, err = s.extFields()
	}
	return err
}

// compactScratch is the largest extFields bound compactExtFields
// transcodes on its stack (a typical SEND_MESSAGE_V2 request header is
// about 420 bytes).
const compactScratch = 1024

// appendExtEntries transcodes the entries of the extFields object whose
// '{' has been read, up to and including its '}', appending them to dst in
// the compact layout. long reports a key too long for the layout (dst is
// then unusable and the scanner in the middle of the object).
func (s *jsonScanner) appendExtEntries(eb []byte) (_ []byte, long bool, err error) {
	for {
		at := len(eb)
		eb = append(eb, 0, 0)
		if eb, err = s.appendStr(eb); err != nil {
			return eb, false, err
		}
		kl := len(eb) - at - 2
		if kl > compactKeyMax {
			return eb, true, nil
		}
		binary.BigEndian.PutUint16(eb[at:], uint16(kl))
		if err := s.expect(':'); err != nil {
			return eb, false, err
		}
		switch s.peek() {
		case '"':
			vat := len(eb)
			eb = append(eb, 0, 0, 0, 0)
			if eb, err = s.appendStr(eb); err != nil {
				return eb, false, err
			}
			binary.BigEndian.PutUint32(eb[vat:], uint32(len(eb)-vat-4))
		case 'n':
			if !s.literal("null") {
				return eb, false, s.errorf("bad literal")
			}
			eb = eb[:at] // a null value is dropped, as from the map
		default:
			start := s.i
			if err := s.skipValue(1); err != nil {
				return eb, false, err
			}
			v := s.b[start:s.i]
			eb = binary.BigEndian.AppendUint32(eb, uint32(len(v)))
			eb = append(eb, v...)
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return eb, false, nil
		default:
			return eb, false, s.errorf("want ',' or '}' in extFields")
		}
	}
}

// end checks nothing but whitespace follows the header object.
func (s *jsonScanner) end() error {
	if s.peek() != 0 || s.i != len(s.b) {
		return s.errorf("trailing data after header")
	}
	return nil
}

// language reads the language property: the enum name, or (defensively) its
// number; null leaves the zero value.
func (s *jsonScanner) language() (LanguageCode, error) {
	switch s.peek() {
	case '"':
		name, err := s.str()
		if err != nil {
			return 0, err
		}
		return languageByName(name), nil
	case 'n':
		if s.literal("null") {
			return 0, nil
		}
		return 0, s.errorf("bad literal")
	}
	text, err := s.number()
	if err != nil {
		return 0, err
	}
	v, ok := parseInt32(text)
	if !ok || v < 0 || v > 255 {
		return OTHER, nil
	}
	return languageOf(uint8(v)), nil
}

// optString reads a string or null ("").
func (s *jsonScanner) optString() (string, error) {
	if s.peek() == 'n' {
		if s.literal("null") {
			return "", nil
		}
		return "", s.errorf("bad literal")
	}
	v, esc, err := s.strEsc()
	if err != nil {
		return "", err
	}
	return s.lastString(v, esc), nil
}
