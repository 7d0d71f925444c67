package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// PropertiesText renders the struct src points to as Java properties text
// ("key=value" lines, keys sorted), the inverse of Bind: every field with a
// prop tag (not "-"), durations in the unit their key names (ms, or s with
// `unit:"s"`). Fields tagged `secret:"true"` and nested settings (tls.*,
// auth: struct fields without a prop tag) are left out, as mqadmin's
// getBrokerConfig / getNamesrvConfig answers never show them; so are the
// keys tagged `effect:"none"` (accepted from a Java config file, but
// nothing in rocketd reads them): the answer lists what rocketd honours.
func PropertiesText(src any) string {
	v := reflect.ValueOf(src)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	t := v.Type()
	lines := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		key := f.Tag.Get("prop")
		if key == "" || key == "-" || f.Tag.Get("secret") != "" || f.Tag.Get("effect") == "none" {
			continue
		}
		var val string
		if d, isDur := v.Field(i).Interface().(time.Duration); isDur {
			val = fmt.Sprint(d.Milliseconds())
			if f.Tag.Get("unit") == "s" {
				val = fmt.Sprint(int64(d.Seconds()))
			}
		} else {
			val = fmt.Sprint(v.Field(i).Interface())
		}
		lines = append(lines, key+"="+val)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
