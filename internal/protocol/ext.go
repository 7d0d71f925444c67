package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ExtHeader is a typed custom header: it writes itself into a command's
// extFields and reads itself back (rocketmq-spec.md §3.1).
type ExtHeader interface {
	// AppendExt adds the header's non-null fields to ext, which must not be nil.
	AppendExt(ext map[string]string)
	// Decode fills the header from ext. Missing keys leave zero values (Java does
	// not enforce @CFNotNull at decode time); an unparseable number is a
	// *FieldError.
	Decode(ext map[string]string) error
}

// Ext returns a new extFields map holding h.
func Ext(h interface{ AppendExt(map[string]string) }) map[string]string {
	m := make(map[string]string, 8)
	h.AppendExt(m)
	return m
}

// Optional is a header value that may be absent, for Java wrapper fields
// (Integer, Boolean) whose absence changes what the receiver does.
type Optional[T any] struct {
	Value T
	Set   bool
}

// Some returns a present Optional.
func Some[T any](v T) Optional[T] { return Optional[T]{Value: v, Set: true} }

// Or returns the value when present, def otherwise.
func (o Optional[T]) Or(def T) T {
	if o.Set {
		return o.Value
	}
	return def
}

// FieldError reports an extFields value that does not parse as its declared
// type. Callers answer SYSTEM_ERROR with its text, as Java's fast decoders do.
type FieldError struct {
	Header string // Java header class name
	Key    string
	Value  string
	Err    error
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("protocol: %s: field %s=%q: %v", e.Header, e.Key, e.Value, e.Err)
}

func (e *FieldError) Unwrap() error { return e.Err }

// extReader reads typed values out of extFields with a sticky error, checked
// once at the end, so that a header decoder is a flat list of assignments. It
// lives on the caller's stack: decoding allocates only on failure.
type extReader struct {
	header string
	ext    map[string]string
	err    error
}

func (r *extReader) fail(key, val string, err error) {
	if r.err == nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			err = ne.Err // the NumError repeats the value and function name
		}
		r.err = &FieldError{Header: r.header, Key: key, Value: val, Err: err}
	}
}

func (r *extReader) str(key string) string { return r.ext[key] }

func (r *extReader) int32(key string) int32 {
	v, ok := r.ext[key]
	return r.int32Of(key, v, ok)
}

func (r *extReader) int64(key string) int64 {
	v, ok := r.ext[key]
	return r.int64Of(key, v, ok)
}

// bool follows Java's Boolean.parseBoolean: "true" in any case is true,
// anything else false; it never fails.
func (r *extReader) bool(key string) bool { return strings.EqualFold(r.ext[key], "true") }

func (r *extReader) optInt32(key string) Optional[int32] {
	v, ok := r.ext[key]
	return r.optInt32Of(key, v, ok)
}

func (r *extReader) optInt64(key string) Optional[int64] {
	if _, ok := r.ext[key]; !ok {
		return Optional[int64]{}
	}
	return Some(r.int64(key))
}

func (r *extReader) optBool(key string) Optional[bool] {
	v, ok := r.ext[key]
	return optBoolOf(v, ok)
}

// The ...Of forms parse a value the caller looked up itself (ok: the key
// was present), so that a header read from a map and one read in a single
// pass over the encoded header (ExtSource) parse alike.

func (r *extReader) int32Of(key, v string, ok bool) int32 {
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		r.fail(key, v, err)
		return 0
	}
	return int32(n)
}

func (r *extReader) int64Of(key, v string, ok bool) int64 {
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		r.fail(key, v, err)
		return 0
	}
	return n
}

func (r *extReader) optInt32Of(key, v string, ok bool) Optional[int32] {
	if !ok {
		return Optional[int32]{}
	}
	return Some(r.int32Of(key, v, ok))
}

func optBoolOf(v string, ok bool) Optional[bool] {
	if !ok {
		return Optional[bool]{}
	}
	return Some(strings.EqualFold(v, "true"))
}

// Writers. Required fields are always written; optional strings only when
// non-empty (Java omits nulls) and Optional values only when Set.

func putStr(m map[string]string, key, v string) { m[key] = v }

func putOptStr(m map[string]string, key, v string) {
	if v != "" {
		m[key] = v
	}
}

func putInt32(m map[string]string, key string, v int32) { m[key] = strconv.FormatInt(int64(v), 10) }

func putInt64(m map[string]string, key string, v int64) { m[key] = strconv.FormatInt(v, 10) }

func putBool(m map[string]string, key string, v bool) { m[key] = strconv.FormatBool(v) }

func putOptInt32(m map[string]string, key string, v Optional[int32]) {
	if v.Set {
		putInt32(m, key, v.Value)
	}
}

func putOptInt64(m map[string]string, key string, v Optional[int64]) {
	if v.Set {
		putInt64(m, key, v.Value)
	}
}

func putOptBool(m map[string]string, key string, v Optional[bool]) {
	if v.Set {
		putBool(m, key, v.Value)
	}
}
