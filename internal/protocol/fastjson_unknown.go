package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
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
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	fields := structFields(reflect.TypeOf(v).Elem())
	var unknown UnknownMembers
	for name, raw := range all {
		if knownProperty(fields, name) {
			continue
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
		unknown[name] = canon
	}
	return unknown, nil
}

// canonicalJSON is raw as the compact fastjson writer writes it.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	e := fastjsonEncoder{style: JSONLegacy}
	if err := e.rawMember(raw, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

func knownProperty(fields []structField, name string) bool {
	for i := range fields {
		if strings.EqualFold(fields[i].name, name) {
			return true
		}
	}
	return false
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
