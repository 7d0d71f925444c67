package filter

import (
	"testing"
)

// FuzzCompile: any text compiles or is refused with ErrInvalid, never
// panics; a compiled expression evaluates over arbitrary properties
// without panicking, and Match agrees with the verdict.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"a > 5 AND b = 'x'", "a BETWEEN 1 AND 5", "a IN ('x','y')", "a IS NOT NULL",
		"NOT (a CONTAINS 'x') OR b STARTSWITH 'y'", "a = 'it''s' -- c\n", "(((a)))", "-a > -5.5e3",
	} {
		f.Add(s, "a\x016\x02b\x01x")
		f.Add(s+" OR TAGS IN ('x', 'y')", "TAGS\x01y\x02a\x012")
	}
	f.Fuzz(func(t *testing.T, expr, props string) {
		e, err := Compile(expr)
		if err != nil {
			if e != nil {
				t.Fatal("expression and error")
			}
			return
		}
		v := e.verdict(props)
		if e.Match(props) != (v == 'T') {
			t.Fatalf("%q over %q: Match disagrees with %c", expr, props, v)
		}
		if v == 'T' && !e.MayMatchTagsCode(storedTagsCode(props)) {
			t.Fatalf("%q over %q: the tags-code pre-check refuses a match", expr, props)
		}
	})
}
