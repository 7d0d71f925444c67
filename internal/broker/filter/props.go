package filter

import (
	"strings"

	"github.com/rocketd/rocketd/internal/message"
)

// maxSlots is how many property names one evaluation finds in a single
// pass over the property string; names past it (an expression reading more
// than maxSlots distinct properties) are searched for at each read.
const maxSlots = 8

// env is what one evaluation reads: the property string and, once the
// first property is read, the values of the expression's first maxSlots
// names.
type env struct {
	props   string
	scanned bool
	direct  bool  // look up each read with lookupProp (the reference evaluation)
	found   uint8 // bit i: slot i has a value
	vals    [maxSlots]string
}

// prop returns property slot i of props.
func (e *Expr) prop(en *env, i int) (string, bool) {
	if i >= maxSlots || en.direct {
		return lookupProp(en.props, e.needles[i])
	}
	if !en.scanned {
		e.scan(en)
	}
	return en.vals[i], en.found&(1<<i) != 0
}

// scan finds the values of the first maxSlots names in one pass over the
// entries, with the rules of lookupProp.
func (e *Expr) scan(en *env) {
	en.scanned = true
	names := e.names
	if len(names) > maxSlots {
		names = names[:maxSlots]
	}
	props := en.props
	for len(props) > 0 {
		entry := props
		if j := strings.IndexByte(props, message.PropertySeparator); j >= 0 {
			entry, props = props[:j], props[j+1:]
		} else {
			props = ""
		}
		// Most entries start with a byte no name starts with.
		if entry == "" || e.firsts[entry[0]>>6]&(1<<(entry[0]&63)) == 0 {
			continue
		}
		for i, name := range names {
			if isKey(entry, name) {
				if v := entry[len(name)+1:]; v != "" {
					en.vals[i] = v
					en.found |= 1 << i
				}
				break
			}
		}
	}
}

// isKey tells whether entry's key (up to its first \x01) is name, which
// holds no \x01. Names are short: a byte loop beats a call to memequal.
func isKey(entry, name string) bool {
	if len(entry) <= len(name) || entry[len(name)] != message.NameValueSeparator {
		return false
	}
	for j := 0; j < len(name); j++ {
		if entry[j] != name[j] {
			return false
		}
	}
	return true
}

// lookupProp finds a property by its needle "\x02name\x01" with the rules
// of message.AllProperties: an entry starts the string or follows \x02, its
// key ends at the first \x01, an empty value is skipped, the last entry of a
// name wins. Searching for the whole needle (separators included) finds
// only real entries, which makes short names as cheap as long ones.
func lookupProp(props, needle string) (string, bool) {
	val, found := "", false
	valueAt := func(from int) {
		v := props[from:]
		if j := strings.IndexByte(v, message.PropertySeparator); j >= 0 {
			v = v[:j]
		}
		if v != "" {
			val, found = v, true
		}
	}
	if strings.HasPrefix(props, needle[1:]) {
		valueAt(len(needle) - 1)
	}
	for from := 0; ; {
		i := strings.Index(props[from:], needle)
		if i < 0 {
			return val, found
		}
		from += i + len(needle)
		valueAt(from)
	}
}
