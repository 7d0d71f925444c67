package filter

import (
	"testing"
)

// FuzzCompile: any text compiles or is refused with ErrInvalid, never
// panics; a compiled expression evaluates over arbitrary properties
// without panicking, Match agrees with the verdict, and the verdict with
// the reference evaluation (which ignores the specialised comparisons).
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"a > 5 AND b = 'x'", "a BETWEEN 1 AND 5", "a IN ('x','y')", "a IS NOT NULL",
		"NOT (a CONTAINS 'x') OR b STARTSWITH 'y'", "a = 'it''s' -- c\n", "(((a)))", "-a > -5.5e3",
		"5 < a AND '7' >= b", "a = 6 OR a <> 6.0", "a > 5.5e0 OR b <= 2147483648", "a IS NULL OR b NOT IN ('1','2','3','4','5','x')",
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
		if ref := e.referenceVerdict(props); v != ref {
			t.Fatalf("%q over %q: %c, the reference evaluation %c", expr, props, v, ref)
		}
		if e.Match(props) != (v == 'T') {
			t.Fatalf("%q over %q: Match disagrees with %c", expr, props, v)
		}
		if v == 'T' && !e.MayMatchTagsCode(storedTagsCode(props)) {
			t.Fatalf("%q over %q: the tags-code pre-check refuses a match", expr, props)
		}
	})
}
