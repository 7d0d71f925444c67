package auth

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// extView reads the ext fields of req for authorization: from fields when
// the Guard has collected them for authentication (Command.AppendExt), so
// the header is walked once per request; from req otherwise.
type extView struct {
	req    *remoting.Command
	fields []remoting.ExtEntry // nil: not collected
}

// lookup is Command.LookupExt: a key present more than once takes its
// last value.
func (v extView) lookup(keys []string) protocol.ExtValues {
	if v.fields == nil {
		return v.req.LookupExt(keys)
	}
	return lookupFields(v.fields, keys)
}

// lookupFields is lookup over collected fields.
func lookupFields(fields []remoting.ExtEntry, keys []string) protocol.ExtValues {
	var out protocol.ExtValues
	keys = keys[:min(len(keys), protocol.MaxLookupKeys)]
	for _, f := range fields {
		for i, k := range keys {
			// Length and first byte first: most pairs differ there.
			if len(k) == len(f.Key) && (k == "" || k[0] == f.Key[0]) && k == f.Key {
				out.Vals[i] = f.Value
				out.Set |= 1 << i
				break
			}
		}
	}
	return out
}

// field is Command.ExtField.
func (v extView) field(key string) string {
	if v.fields == nil {
		return v.req.ExtField(key)
	}
	val := ""
	for _, f := range v.fields {
		if f.Key == key {
			val = f.Value
		}
	}
	return val
}
