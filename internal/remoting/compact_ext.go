package remoting

import (
	"encoding/binary"
	"slices"

	"github.com/rocketd/rocketd/internal/protocol"
)

// compactExt is the custom header of a received command kept without a
// map, for handlers that read it with a typed decoder (LookupExt): the
// entries as they arrived, in the ROCKETMQ entry layout
//
//	keyLen int16 (>= 0), key, valLen int32 (>= 0), value    ... repeated
//
// with JSON values already unescaped (a non-string value as its JSON
// text, a null value left out). A ROCKETMQ header's entries are used where
// they lie in the header's string copy; a JSON header's are transcoded into
// a buffer of their own. The decoder has checked the syntax, so a bad
// header closes the connection exactly as with a map. Keys may repeat: the
// last entry wins, as in the map.
type compactExt struct {
	s  string
	ok bool // the command has extFields (possibly empty)
}

// compactKeyMax is the longest key the layout can hold; a JSON header with
// a longer one is decoded into a map instead.
const compactKeyMax = 1<<15 - 1

// next returns the entry at p and the position after it; ok is false at
// the end. The layout is ours, but a bad one ends the walk rather than
// panicking.
func (e compactExt) next(p int) (key, val string, after int, ok bool) {
	// Checked once against the rest r, so the reads below need no
	// bounds checks of their own: the walk runs for every field of
	// every lazy request.
	if p < 0 || p > len(e.s)-6 {
		return "", "", p, false
	}
	r := e.s[p:]
	kl := int(r[0])<<8 | int(r[1])
	if kl > len(r)-6 {
		return "", "", p + 2, false
	}
	key = r[2 : 2+kl]
	v := r[2+kl:]
	vl := int(uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3]))
	if vl < 0 || vl > len(v)-4 {
		return "", "", p + 6 + kl, false
	}
	return key, v[4 : 4+vl], p + 6 + kl + vl, true
}

// lookup is Command.LookupExt on the compact form: one walk over the
// entries. The keys of a typed header usually arrive in the order the
// header lists them (both sorted), so each entry is first compared with
// the key after the last match.
func (e compactExt) lookup(keys []string) protocol.ExtValues {
	var out protocol.ExtValues
	keys = keys[:min(len(keys), protocol.MaxLookupKeys)]
	hint := 0
	for p := 0; ; {
		k, v, after, ok := e.next(p)
		if !ok {
			return out
		}
		p = after
		i := hint
		if i >= len(keys) || !sameKey(keys[i], k) {
			if i = indexKey(keys, k); i < 0 {
				continue
			}
		}
		out.Vals[i] = v
		out.Set |= 1 << i
		hint = i + 1
	}
}

// sameKey is a == b, checking the length and the first byte before
// calling memequal: header keys are short and most compared pairs differ
// there (single-letter SEND_MESSAGE_V2 keys all have the same length).
func sameKey(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[0] == b[0]) && a == b
}

// indexKey is slices.Index with sameKey.
func indexKey(keys []string, k string) int {
	for i := range keys {
		if sameKey(keys[i], k) {
			return i
		}
	}
	return -1
}

// get returns the value of one key (the last entry for it).
func (e compactExt) get(key string) (string, bool) {
	val, found := "", false
	for p := 0; ; {
		k, v, after, ok := e.next(p)
		if !ok {
			return val, found
		}
		p = after
		if k == key {
			val, found = v, true
		}
	}
}

// toMap builds the map the eager decoder would have: the same keys and
// values (sharing the compact string), later entries replacing earlier.
func (e compactExt) toMap() map[string]string {
	if !e.ok {
		return nil
	}
	m := make(map[string]string, min(max(len(e.s)/25, 4), 32))
	for p := 0; ; {
		k, v, after, ok := e.next(p)
		if !ok {
			return m
		}
		p = after
		m[k] = v
	}
}

// appendCompactEntry appends one entry to a compact buffer.
func appendCompactEntry(dst []byte, k, v string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
	dst = append(dst, k...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

// extPolicy says which received commands keep their custom header in the
// compact form instead of a map: the requests whose handlers were
// registered with Server.HandleLazyExt, and every response of a Client
// with LazyResponseExt. A nil policy keeps none.
type extPolicy struct {
	requests  []int32 // request codes, few: a slice beats a map
	responses bool
	all       bool // every command (the differential tests)
	// pooledBodies: responses' bodies are pooled read buffers (a Client's
	// PooledResponseBodies); see keepBody.
	pooledBodies bool
	// lentBodies: request codes whose bodies are pooled read buffers,
	// given back once their handler returned (LentBody).
	lentBodies []int32
}

// compact decides for a command whose code and flag are known.
func (p *extPolicy) compact(code, flag int32) bool {
	if p == nil {
		return false
	}
	if p.all {
		return true
	}
	if flag&flagResponse != 0 {
		return p.responses
	}
	return slices.Contains(p.requests, code)
}

// guess decides at the extFields property of a JSON header, which may come
// before the flag (fastjson writes code, extFields, flag, ...) or even
// before the code: without the flag, the side's usual direction is
// assumed (a Client with lazy responses mostly receives responses, a
// Server requests). A wrong guess costs a map built from the compact form
// afterwards (or a map the handler does not need), never a wrong result.
func (p *extPolicy) guess(code int32, codeSeen bool, flag int32, flagSeen bool) bool {
	if p == nil {
		return false
	}
	if p.all {
		return true
	}
	if flagSeen {
		return codeSeen && p.compact(code, flag)
	}
	if p.responses {
		return true
	}
	return codeSeen && slices.Contains(p.requests, code)
}

// settle makes c's header form agree with the final decision once the
// whole header is decoded: a compact form the policy does not want
// becomes the map.
func (p *extPolicy) settle(c *Command) {
	if c.ext.ok && !p.compact(c.Code, c.Flag) {
		c.ExtFields = c.ext.toMap()
		c.ext = compactExt{}
	}
}
