package protocol

// ExtSource is a command's custom header as it arrived, read without
// building a map: LookupExt finds a header's keys in one pass over the
// encoded fields. remoting.Command implements it; a header type whose
// decoder takes an ExtSource (SendMessageRequestHeader.DecodeFrom) then
// costs no map on the hot path, and MapExt adapts a plain map.
type ExtSource interface {
	// LookupExt returns the values of keys (at most MaxLookupKeys): Vals[i]
	// and bit i of Set for every keys[i] present. A key present more than
	// once takes its last value, as a map built from the same fields
	// would. The values may be kept (they do not alias a reused buffer).
	LookupExt(keys []string) ExtValues
}

// MaxLookupKeys bounds the keys of one LookupExt.
const MaxLookupKeys = 16

// ExtValues is the result of a LookupExt. It is returned by value, so a
// lookup through the ExtSource interface allocates nothing.
type ExtValues struct {
	Vals [MaxLookupKeys]string
	Set  uint32 // bit i: keys[i] was present
}

// Has reports whether keys[i] was present.
func (v *ExtValues) Has(i int) bool { return v.Set&(1<<i) != 0 }

// MapExt is an extFields map as an ExtSource.
type MapExt map[string]string

// LookupExt looks each key up in the map.
func (m MapExt) LookupExt(keys []string) ExtValues {
	var out ExtValues
	for i, k := range keys[:min(len(keys), MaxLookupKeys)] {
		if v, ok := m[k]; ok {
			out.Vals[i] = v
			out.Set |= 1 << i
		}
	}
	return out
}
