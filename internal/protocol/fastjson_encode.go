package protocol

import (
	"cmp"
	"encoding"
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// JSONStyle selects which of fastjson's outputs the writer imitates.
type JSONStyle uint8

const (
	// JSONLegacy is fastjson's default output: integer map keys unquoted
	// ({0:"a"}), object keys as nested objects, strings escaped minimally.
	JSONLegacy JSONStyle = iota
	// JSONStandard is fastjson with BrowserCompatible (the route answer to
	// version >= V4_9_4): every key quoted, chars >= 127 as \uXXXX, '/' as
	// "\/", longs beyond ±(2^53-1) quoted.
	JSONStandard
)

// MarshalFastJSON writes v compactly as fastjson does with its default
// features: properties sorted by name, nulls omitted, integer map keys
// unquoted. Struct properties come from `json` tags; ",omitempty" omits a
// zero value, and nil pointers are always omitted (Java null). A nil slice or
// map without omitempty is written empty ([] / {}), because the bodies that
// have such fields are read by clients that reject null there.
func MarshalFastJSON(v any) ([]byte, error) { return marshalFastJSON(v, JSONLegacy, false) }

// MarshalFastJSONStyle is MarshalFastJSON with an explicit style.
func MarshalFastJSONStyle(v any, style JSONStyle) ([]byte, error) {
	return marshalFastJSON(v, style, false)
}

// MarshalFastJSONPretty writes v the way fastjson's PrettyFormat writes the
// broker's config files (§4.1): one tab per nesting level, properties and
// string-keyed entries on their own lines, integer-keyed entries on one line.
func MarshalFastJSONPretty(v any) ([]byte, error) { return marshalFastJSON(v, JSONLegacy, true) }

func marshalFastJSON(v any, style JSONStyle, pretty bool) ([]byte, error) {
	e := fastjsonEncoder{style: style, pretty: pretty, buf: make([]byte, 0, 256)}
	if err := e.value(reflect.ValueOf(v), 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// maxEncodeDepth bounds recursion on cyclic or absurdly nested values.
const maxEncodeDepth = 200

type fastjsonEncoder struct {
	buf    []byte
	style  JSONStyle
	pretty bool
	indent int
}

func (e *fastjsonEncoder) newline() {
	if !e.pretty {
		return
	}
	e.buf = append(e.buf, '\n')
	for range e.indent {
		e.buf = append(e.buf, '\t')
	}
}

var textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()

func (e *fastjsonEncoder) value(v reflect.Value, depth int) error {
	if depth > maxEncodeDepth {
		return fmt.Errorf("protocol: fastjson: nesting deeper than %d", maxEncodeDepth)
	}
	if !v.IsValid() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		return e.value(v.Elem(), depth+1)
	case reflect.String:
		if v.Type() == jsonNumberType && v.String() != "" {
			e.buf = append(e.buf, v.String()...) // a kept member's number, as written
			return nil
		}
		e.buf = appendFastJSONString(e.buf, v.String(), e.style)
	case reflect.Bool:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.appendInt(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := v.Uint()
		if u > math.MaxInt64 {
			return fmt.Errorf("protocol: fastjson: %d does not fit a Java long", u)
		}
		e.appendInt(int64(u))
	case reflect.Float32, reflect.Float64:
		e.buf = appendJavaDouble(e.buf, v.Float())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			// Java byte[] is written as base64 text.
			e.buf = append(e.buf, '"')
			e.buf = base64.StdEncoding.AppendEncode(e.buf, v.Bytes())
			e.buf = append(e.buf, '"')
			return nil
		}
		return e.array(v, depth)
	case reflect.Map:
		return e.mapValue(v, depth)
	case reflect.Struct:
		return e.object(v, depth)
	default:
		return fmt.Errorf("protocol: fastjson: unsupported type %s", v.Type())
	}
	return nil
}

func (e *fastjsonEncoder) appendInt(n int64) {
	const maxSafe = 1<<53 - 1
	if e.style == JSONStandard && (n > maxSafe || n < -maxSafe) {
		e.buf = append(e.buf, '"')
		e.buf = strconv.AppendInt(e.buf, n, 10)
		e.buf = append(e.buf, '"')
		return
	}
	e.buf = strconv.AppendInt(e.buf, n, 10)
}

// appendJavaDouble writes a float as Java's Double.toString does for the
// common range (always with a fraction: 1.0, 0.5).
func appendJavaDouble(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f), math.IsInf(f, 0):
		return append(b, "null"...) // fastjson writes null for NaN/Infinity
	case f != 0 && (math.Abs(f) < 1e-3 || math.Abs(f) >= 1e7):
		s := strconv.FormatFloat(f, 'E', -1, 64)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		exp = strings.TrimPrefix(exp, "+")
		return append(append(append(b, mant...), 'E'), exp...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if !slices.Contains(b[start:], '.') {
		b = append(b, ".0"...)
	}
	return b
}

func (e *fastjsonEncoder) array(v reflect.Value, depth int) error {
	n := v.Len()
	if n == 0 {
		e.buf = append(e.buf, "[]"...)
		return nil
	}
	e.buf = append(e.buf, '[')
	e.indent++
	for i := range n {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline()
		if err := e.value(v.Index(i), depth+1); err != nil {
			return err
		}
	}
	e.indent--
	e.newline()
	e.buf = append(e.buf, ']')
	return nil
}

// mapEntry is one map entry with its key already rendered.
type mapEntry struct {
	key    []byte // the key as it appears before ':'
	sort   string // sort key
	num    int64  // numeric keys sort by value
	isNum  bool
	quoted bool // string-like key: gets its own line in pretty form
	val    reflect.Value
}

func (e *fastjsonEncoder) mapValue(v reflect.Value, depth int) error {
	if v.Len() == 0 {
		e.buf = append(e.buf, "{}"...)
		return nil
	}
	entries := make([]mapEntry, 0, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		ent, err := e.mapKey(iter.Key(), depth)
		if err != nil {
			return err
		}
		ent.val = iter.Value()
		entries = append(entries, ent)
	}
	slices.SortFunc(entries, func(a, b mapEntry) int {
		if a.isNum && b.isNum {
			return cmp.Compare(a.num, b.num)
		}
		return strings.Compare(a.sort, b.sort)
	})
	e.buf = append(e.buf, '{')
	e.indent++
	for i, ent := range entries {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if ent.quoted {
			e.newline()
		}
		e.buf = append(e.buf, ent.key...)
		e.buf = append(e.buf, ':')
		if err := e.value(ent.val, depth+1); err != nil {
			return err
		}
	}
	e.indent--
	// fastjson closes every non-empty map on a new line, even one whose
	// integer-keyed entries share the opening line.
	e.newline()
	e.buf = append(e.buf, '}')
	return nil
}

func (e *fastjsonEncoder) mapKey(k reflect.Value, depth int) (mapEntry, error) {
	switch k.Kind() {
	case reflect.String:
		s := k.String()
		return mapEntry{key: appendFastJSONString(nil, s, e.style), sort: s, quoted: true}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := k.Int()
		key := strconv.AppendInt(nil, n, 10)
		if e.style == JSONStandard {
			key = append(append([]byte{'"'}, key...), '"')
		}
		return mapEntry{key: key, num: n, isNum: true}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n := int64(k.Uint())
		key := strconv.AppendInt(nil, n, 10)
		if e.style == JSONStandard {
			key = append(append([]byte{'"'}, key...), '"')
		}
		return mapEntry{key: key, num: n, isNum: true}, nil
	case reflect.Struct:
		// fastjson writes a bean key as the bean itself; BrowserCompatible
		// writes its JSON text as a quoted string.
		sub := fastjsonEncoder{style: e.style}
		if err := sub.value(k, depth+1); err != nil {
			return mapEntry{}, err
		}
		if e.style == JSONStandard {
			return mapEntry{key: appendFastJSONString(nil, string(sub.buf), e.style), sort: string(sub.buf)}, nil
		}
		return mapEntry{key: sub.buf, sort: string(sub.buf)}, nil
	}
	if k.Type().Implements(textMarshalerType) {
		t, err := k.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return mapEntry{}, err
		}
		return mapEntry{key: appendFastJSONString(nil, string(t), e.style), sort: string(t), quoted: true}, nil
	}
	return mapEntry{}, fmt.Errorf("protocol: fastjson: unsupported map key type %s", k.Type())
}

func (e *fastjsonEncoder) object(v reflect.Value, depth int) error {
	fields := structFields(v.Type())
	info := beanInfoOf(v.Type())
	var unknown []string // names of kept members, sorted
	var unknownVals UnknownMembers
	var omitter defaultOmitter
	if !info.isPlain {
		if info.unknown >= 0 {
			unknownVals = v.Field(info.unknown).Interface().(UnknownMembers)
			unknown = slices.Sorted(maps.Keys(unknownVals))
		}
		if info.omitter {
			omitter = v.Interface().(defaultOmitter)
		}
	}
	e.buf = append(e.buf, '{')
	e.indent++
	wrote := false
	member := func(quotedName []byte) {
		if wrote {
			e.buf = append(e.buf, ',')
		}
		wrote = true
		e.newline()
		e.buf = append(e.buf, quotedName...)
		e.buf = append(e.buf, ':')
	}
	// keptBefore writes the kept members that sort before name (all of
	// them for name "").
	keptBefore := func(name string, last bool) error {
		for len(unknown) > 0 && (last || unknown[0] < name) {
			member(appendFastJSONString(nil, unknown[0], e.style))
			if err := e.rawMember(unknownVals[unknown[0]], depth+1); err != nil {
				return err
			}
			unknown = unknown[1:]
		}
		return nil
	}
	for _, f := range fields {
		fv := v.Field(f.index)
		if f.omit(fv) || (omitter != nil && omitter.omitDefault(f.name)) {
			continue
		}
		if err := keptBefore(f.name, false); err != nil {
			return err
		}
		member(f.quotedName)
		switch {
		case fv.Kind() == reflect.Slice && fv.IsNil():
			e.buf = append(e.buf, "[]"...)
		case fv.Kind() == reflect.Map && fv.IsNil():
			e.buf = append(e.buf, "{}"...)
		default:
			if err := e.value(fv, depth+1); err != nil {
				return err
			}
		}
	}
	if err := keptBefore("", true); err != nil {
		return err
	}
	e.indent--
	if wrote {
		e.newline()
	}
	e.buf = append(e.buf, '}')
	return nil
}

type structField struct {
	name       string
	quotedName []byte
	index      int
	omitEmpty  bool
}

// omit reports whether fastjson would leave the property out: Java null
// (nil pointer or interface), or an empty value of an omitempty field.
func (f *structField) omit(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	if !f.omitEmpty {
		return false
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}

var structFieldCache sync.Map // reflect.Type -> []structField

func structFields(t reflect.Type) []structField {
	if f, ok := structFieldCache.Load(t); ok {
		return f.([]structField)
	}
	var fields []structField
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		fields = append(fields, structField{
			name:       name,
			quotedName: appendFastJSONString(nil, name, JSONLegacy),
			index:      i,
			omitEmpty:  strings.Contains(opts, "omitempty"),
		})
	}
	slices.SortFunc(fields, func(a, b structField) int { return strings.Compare(a.name, b.name) })
	structFieldCache.Store(t, fields)
	return fields
}

const hexDigits = "0123456789abcdef"

// appendFastJSONString writes s as a JSON string the way fastjson's
// SerializeWriter does: short escapes for \b \f \n \r \t, \u00XX for other
// control characters, and in standard (BrowserCompatible) style also every
// char >= 127 as \uXXXX over UTF-16 units and '/' as "\/".
func appendFastJSONString(b []byte, s string, style JSONStyle) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || (c == 0x7f && style == JSONStandard):
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			case c == '/' && style == JSONStandard:
				b = append(b, '\\', '/')
			default:
				b = append(b, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if style != JSONStandard {
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...) // invalid UTF-8: Java would have U+FFFD
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i += size
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			b = appendU4(appendU4(b, r1), r2)
		} else {
			b = appendU4(b, r)
		}
	}
	return append(b, '"')
}

func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
