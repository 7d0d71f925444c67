package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sync"
)

// UnknownMembers are the members of a decoded JSON object that its Go type
// does not model (properties a newer Java release added), kept as their
// JSON text so that rewriting a Java-written config file does not lose
// them. The fastjson writer emits them among the modelled properties, in
// name order; the values are treated as immutable.
type UnknownMembers map[string]json.RawMessage

var unknownMembersType = reflect.TypeFor[UnknownMembers]()

// defaultOmitter is implemented by a bean type that leaves out some
// properties while they hold Java's default (the 5.x properties of a
// subscription group), so that a file with only 4.9.x content is written
// as 4.9.x writes it. Readers apply the defaults for absent properties.
type defaultOmitter interface {
	omitDefault(property string) bool
}

var defaultOmitterType = reflect.TypeFor[defaultOmitter]()

// decodeWithUnknown decodes the JSON object data into v (a pointer to a
// struct, already holding its defaults) and returns the members whose name
// matches none of the struct's json properties (case-insensitively, as
// encoding/json matches them), or nil when there are none.
func decodeWithUnknown(data []byte, v any) (UnknownMembers, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	fields := structFields(reflect.TypeOf(v).Elem())
	var unknown UnknownMembers
	// json.Unmarshal accepted data, so the scan sees valid JSON; it
	// allocates only for the members it keeps.
	pos := objectStart(data)
	for pos >= 0 {
		key, raw, next := nextMember(data, pos)
		if next < 0 {
			break
		}
		pos = next
		if knownProperty(fields, key) {
			continue
		}
		var name string
		if err := json.Unmarshal(key, &name); err != nil {
			return nil, err
		}
		// Kept in the writer's compact form, so that writing and reading
		// again yields the same text (member order, escapes).
		canon, err := canonicalJSON(raw)
		if err != nil {
			return nil, err
		}
		if unknown == nil {
			unknown = UnknownMembers{}
		}
		unknown[name] = canon // a repeated name: the last wins, as in encoding/json
	}
	return unknown, nil
}

// objectStart returns the position after the '{' of the object data, or
// -1 when data is not an object (null).
func objectStart(data []byte) int {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return -1
	}
	return i + 1
}

// nextMember reads the member at pos of a valid JSON object: its quoted
// key (quotes included), its value, and the position of the next member,
// or next=-1 at the object's end.
func nextMember(data []byte, pos int) (key, val []byte, next int) {
	i := skipSpace(data, pos)
	if i < len(data) && data[i] == ',' {
		i = skipSpace(data, i+1)
	}
	if i >= len(data) || data[i] != '"' {
		return nil, nil, -1
	}
	end := skipValue(data, i)
	key = data[i:end]
	i = skipSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return nil, nil, -1
	}
	start := skipSpace(data, i+1)
	end = skipValue(data, start)
	return key, data[start:end], end
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the end of the valid JSON value starting at data[i].
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(data)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = skipValue(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	default: // number, true, false, null
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}

// knownProperty reports whether the quoted key names one of fields, as
// encoding/json matches names (case-insensitively). A key with escapes is
// compared unescaped.
func knownProperty(fields []structField, quoted []byte) bool {
	key := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		var name string
		if json.Unmarshal(quoted, &name) != nil {
			return false
		}
		key = []byte(name)
	}
	for i := range fields {
		q := fields[i].quotedName // the name in quotes, never escaped
		if bytes.EqualFold(q[1:len(q)-1], key) {
			return true
		}
	}
	return false
}

// canonicalJSON is raw as the compact fastjson writer writes it.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	e := fastjsonEncoder{style: JSONLegacy}
	if err := e.rawMember(raw, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// rawMember writes a kept member's JSON text: decoded and written again by
// e, so the pretty form indents it like the members around it. Numbers keep
// their text.
func (e *fastjsonEncoder) rawMember(raw json.RawMessage, depth int) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("protocol: fastjson: kept member: %w", err)
	}
	return e.value(reflect.ValueOf(&v).Elem(), depth)
}

var jsonNumberType = reflect.TypeFor[json.Number]()

// beanInfo is what the writer needs to know about a struct type beyond its
// properties.
type beanInfo struct {
	unknown int  // index of its UnknownMembers field, or -1
	omitter bool // implements defaultOmitter
	isPlain bool // neither: the fast path
}

var beanInfoCache sync.Map // reflect.Type -> beanInfo

func beanInfoOf(t reflect.Type) beanInfo {
	if b, ok := beanInfoCache.Load(t); ok {
		return b.(beanInfo)
	}
	b := beanInfo{unknown: -1, omitter: t.Implements(defaultOmitterType)}
	for i := range t.NumField() {
		if t.Field(i).Type == unknownMembersType {
			b.unknown = i
			break
		}
	}
	b.isPlain = b.unknown < 0 && !b.omitter
	beanInfoCache.Store(t, b)
	return b
}

// cloneUnknown copies the map; the JSON texts are immutable and shared.
func cloneUnknown(m UnknownMembers) UnknownMembers {
	return maps.Clone(m)
}
