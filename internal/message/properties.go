package message

import (
	"iter"
	"sort"
	"strings"
)

// Separators of the property string (spec §5.3).
const (
	NameValueSeparator = '\x01'
	PropertySeparator  = '\x02'
)

// AllProperties iterates over the entries of a property string the way
// RocketMQ's parser (MessageDecoder.string2messageProperties) reads them:
// entries are separated by \x02 (a trailing one is allowed, as 5.2+ and the
// Go client write it), the key ends at the first \x01, and entries with an
// empty key or an empty value are skipped. A key may repeat; the last one
// wins in a map. Keys and values alias props; nothing is allocated.
func AllProperties(props string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for len(props) > 0 {
			entry := props
			if i := strings.IndexByte(props, PropertySeparator); i >= 0 {
				entry, props = props[:i], props[i+1:]
			} else {
				props = ""
			}
			k, v, ok := strings.Cut(entry, string(NameValueSeparator))
			if !ok || k == "" || v == "" {
				continue
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// Property returns the value of key in a property string without building a
// map (the hot-path lookup of TAGS, DELAY, WAIT, UNIQ_KEY, KEYS). Like the
// Java map, the last entry for a key wins. The value aliases props.
func Property(props, key string) (string, bool) {
	if key == "" || strings.IndexByte(key, NameValueSeparator) >= 0 || strings.IndexByte(key, PropertySeparator) >= 0 {
		return "", false // no parsed entry can have such a key
	}
	// An entry starts at 0 or right after a \x02 (values cannot hold
	// \x02) and its key ends at its first \x01. strings.Index finds
	// candidates fast; every whole-entry hit replaces the previous one, so
	// the last entry for key wins as in the Java map.
	val, found := "", false
	for from := 0; from+len(key) < len(props); {
		i := strings.Index(props[from:], key)
		if i < 0 {
			break
		}
		i += from
		from = i + 1
		if (i != 0 && props[i-1] != PropertySeparator) || i+len(key) >= len(props) || props[i+len(key)] != NameValueSeparator {
			continue
		}
		v := props[i+len(key)+1:]
		if j := strings.IndexByte(v, PropertySeparator); j >= 0 {
			v = v[:j]
		}
		from = i + len(key) + 1 + len(v)
		if v != "" { // the parser drops an entry with an empty value
			val, found = v, true
		}
	}
	return val, found
}

// ParseProperties decodes a property string into a map (see AllProperties
// for the rules). The keys and values are copies: the map may outlive props.
func ParseProperties(props string) map[string]string {
	m := make(map[string]string)
	if props == "" {
		return m
	}
	props = strings.Clone(props) // one copy shared by every key and value
	for k, v := range AllProperties(props) {
		m[k] = v
	}
	return m
}

// EncodeProperties encodes m as a property string: entries in key order
// (Java writes HashMap order, which no reader depends on; sorting makes our
// output deterministic), no trailing separator (as RocketMQ 4.9.8 writes).
// Entries with an empty key or value are skipped: parsers drop them anyway.
func EncodeProperties(m map[string]string) string {
	keys := make([]string, 0, len(m))
	n := 0
	for k, v := range m {
		if k == "" || v == "" {
			continue
		}
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	sort.Strings(keys)
	b := make([]byte, 0, n)
	for _, k := range keys {
		b = AppendProperty(b, k, m[k])
	}
	return string(b)
}

// AppendProperty appends the entry key=value to the property string in dst,
// adding a separator unless dst is empty or already ends with one. An empty
// key or value appends nothing (parsers would drop it).
func AppendProperty(dst []byte, key, value string) []byte {
	if key == "" || value == "" {
		return dst
	}
	if len(dst) > 0 && dst[len(dst)-1] != PropertySeparator {
		dst = append(dst, PropertySeparator)
	}
	dst = append(dst, key...)
	dst = append(dst, NameValueSeparator)
	return append(dst, value...)
}

// DeleteProperty returns props without any entry for key; the other entries
// keep their bytes and order. It returns props itself when key is absent.
func DeleteProperty(props, key string) string {
	if _, ok := Property(props, key); !ok {
		return props
	}
	var b strings.Builder
	b.Grow(len(props))
	writeWithout(&b, props, key, "")
	return b.String()
}

// SetProperty returns props with key set to value (replacing earlier
// entries for key; appended at the end).
func SetProperty(props, key, value string) string {
	return SetPropertyWithout(props, "", key, value)
}

// SetPropertyWithout is SetProperty(DeleteProperty(props, without), key,
// value) in one pass and one allocation: the send path drops WAIT and adds
// CLUSTER on every message. An empty without deletes nothing.
func SetPropertyWithout(props, without, key, value string) string {
	_, hasWithout := Property(props, without)
	_, hasKey := Property(props, key)
	add := key != "" && value != ""
	if !hasWithout && !hasKey && !add {
		return props
	}
	var b strings.Builder
	b.Grow(len(props) + len(key) + len(value) + 2)
	if hasWithout || hasKey {
		writeWithout(&b, props, without, key)
	} else {
		b.WriteString(props) // DeleteProperty keeps an untouched string as it is
	}
	if add {
		if n := b.Len(); n > 0 && b.String()[n-1] != PropertySeparator {
			b.WriteByte(PropertySeparator)
		}
		b.WriteString(key)
		b.WriteByte(NameValueSeparator)
		b.WriteString(value)
	}
	return b.String()
}

// writeWithout writes the entries of props except those for k1 or k2 (an
// empty key matches nothing) and empty entries, separated by \x02: what
// DeleteProperty leaves when it removes something.
func writeWithout(b *strings.Builder, props, k1, k2 string) {
	first := true
	for rest := props; len(rest) > 0; {
		entry := rest
		if i := strings.IndexByte(rest, PropertySeparator); i >= 0 {
			entry, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if entry == "" {
			continue
		}
		if k, v, ok := strings.Cut(entry, string(NameValueSeparator)); ok && k != "" && v != "" && (k == k1 || k == k2) {
			continue
		}
		if !first {
			b.WriteByte(PropertySeparator)
		}
		first = false
		b.WriteString(entry)
	}
}

// Prop is one property entry.
type Prop struct{ Key, Value string }

// ReplaceProperties returns props without the entries for drop and for the
// keys of set (an empty drop matches nothing), followed by the entries of
// set, in one allocation: the send path drops WAIT and adds the broker's
// CLUSTER, MSG_REGION and TRACE_ON to every message, replacing what a
// client may have put there. Entries of set with an empty value are left
// out (parsers would drop them).
func ReplaceProperties(props, drop string, set ...Prop) string {
	n := len(props)
	for _, p := range set {
		n += len(p.Key) + len(p.Value) + 2
	}
	var b strings.Builder
	b.Grow(n)
	if propsHaveAny(props, drop, set) {
		writeWithoutSet(&b, props, drop, set)
	} else {
		b.WriteString(props)
	}
	for _, p := range set {
		if p.Key == "" || p.Value == "" {
			continue
		}
		if m := b.Len(); m > 0 && b.String()[m-1] != PropertySeparator {
			b.WriteByte(PropertySeparator)
		}
		b.WriteString(p.Key)
		b.WriteByte(NameValueSeparator)
		b.WriteString(p.Value)
	}
	return b.String()
}

// dropKey reports whether an entry's key is drop or one of set's keys.
func dropKey(k, drop string, set []Prop) bool {
	if k == drop {
		return true
	}
	for _, p := range set {
		if k == p.Key {
			return true
		}
	}
	return false
}

// propsHaveAny reports whether props holds an entry ReplaceProperties
// removes.
func propsHaveAny(props, drop string, set []Prop) bool {
	for k := range AllProperties(props) {
		if dropKey(k, drop, set) {
			return true
		}
	}
	return false
}

// writeWithoutSet is writeWithout for drop and the keys of set.
func writeWithoutSet(b *strings.Builder, props, drop string, set []Prop) {
	first := true
	for rest := props; len(rest) > 0; {
		entry := rest
		if i := strings.IndexByte(rest, PropertySeparator); i >= 0 {
			entry, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if entry == "" {
			continue
		}
		if k, v, ok := strings.Cut(entry, string(NameValueSeparator)); ok && k != "" && v != "" && dropKey(k, drop, set) {
			continue
		}
		if !first {
			b.WriteByte(PropertySeparator)
		}
		first = false
		b.WriteString(entry)
	}
}
