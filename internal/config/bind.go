package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNotStructPointer is returned by Bind for a destination that is not a
// non-nil pointer to a struct.
var ErrNotStructPointer = errors.New("config: destination is not a pointer to a struct")

// Bind copies properties onto the exported fields of the struct dst points
// to, the way RocketMQ's MixAll.properties2Object maps keys onto setters:
//
//   - a field's key is its `prop:"name"` tag, else its Go name compared
//     without regard to case (BrokerClusterName <- brokerClusterName,
//     KVConfigPath <- kvConfigPath); a tag of "-" skips the field;
//   - supported kinds: string (taken verbatim), bool, signed and unsigned
//     integers, floats, and time.Duration; numbers and booleans are trimmed
//     of surrounding blanks first;
//   - a time.Duration accepts a Go duration ("10s") or a bare integer in the
//     unit named by the field's `unit:"ms"` / `unit:"s"` tag (default ms,
//     since RocketMQ's settings are in milliseconds).
//
// Keys that match no field are returned, sorted, so the caller can warn about
// them (a typo in broker.conf should not pass silently). A value that does
// not parse is an error naming the key.
func Bind(props Properties, dst any) (unknown []string, err error) {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, ErrNotStructPointer
	}
	fields := fieldsByKey(v.Elem().Type())
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	}) {
		idx, ok := fields[strings.ToLower(key)]
		if !ok {
			unknown = append(unknown, key)
			continue
		}
		sf := v.Elem().Type().Field(idx)
		if err := setField(v.Elem().Field(idx), sf, props[key]); err != nil {
			return unknown, fmt.Errorf("config: %s=%q: %w", key, props[key], err)
		}
	}
	return unknown, nil
}

// fieldsByKey maps the lower-cased key of every bindable field to its index.
func fieldsByKey(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		key := sf.Name
		if tag, ok := sf.Tag.Lookup("prop"); ok {
			if tag == "-" {
				continue
			}
			key = tag
		}
		out[strings.ToLower(key)] = i
	}
	return out
}

var durationType = reflect.TypeFor[time.Duration]()

func setField(f reflect.Value, sf reflect.StructField, raw string) error {
	if f.Type() == durationType {
		d, err := parseDuration(strings.TrimSpace(raw), sf.Tag.Get("unit"))
		if err != nil {
			return err
		}
		f.SetInt(int64(d))
		return nil
	}
	s := strings.TrimSpace(raw)
	switch f.Kind() {
	case reflect.String:
		f.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetFloat(n)
	default:
		return fmt.Errorf("field %s of kind %s cannot be set from a property", sf.Name, f.Kind())
	}
	return nil
}

func parseDuration(s, unit string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch unit {
		case "", "ms":
			return time.Duration(n) * time.Millisecond, nil
		case "s":
			return time.Duration(n) * time.Second, nil
		default:
			return 0, fmt.Errorf("unknown unit tag %q", unit)
		}
	}
	return time.ParseDuration(s)
}
