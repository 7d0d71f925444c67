package filter

import (
	"errors"
	"strings"
	"testing"
)

// TestCompileErrors: refusals carry ErrInvalid and say what is wrong.
func TestCompileErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"a > 0.0":                  "less than",
		"a = NULL":                 "'NULL' cannot be compared",
		"a IN (1)":                 "string literal",
		"5":                        "will not result in a boolean",
		"a BETWEEN 5 AND 1":        "illegal values of between",
		"a > 'x'":                  "cannot be compared",
		"a = 'x":                   "unterminated string",
		"a != 1":                   "unexpected '!'",
		"TRUE = 1":                 "cannot be compared with",
		"5 IN ('5')":               "expected a property",
		"":                         "unexpected end",
		"a = 99999999999999999999": "out of range",
	} {
		_, err := Compile(expr)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want ErrInvalid mentioning %q", expr, err, want)
		}
	}
}

// TestCompileDepth: hostile nesting is refused, not a stack overflow.
func TestCompileDepth(t *testing.T) {
	deep := strings.Repeat("(", 100000) + "a" + strings.Repeat(")", 100000)
	if _, err := Compile(deep); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("Compile(deep) = %v", err)
	}
	if _, err := Compile(strings.Repeat("NOT ", 100000) + "a"); err == nil {
		t.Fatal("100000 NOTs compiled")
	}
	if _, err := Compile("a = 1" + strings.Repeat(" AND a = 1", 20000)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("20000 ANDs: %v", err)
	}
	if _, err := Compile(strings.Repeat("(", 50) + "a = 1" + strings.Repeat(")", 50)); err != nil {
		t.Fatalf("50 levels refused: %v", err)
	}
}

// TestMatchReadsLastEntry: a repeated property name reads its last entry,
// an empty value is skipped, and a name inside another entry's value or key
// is not a hit.
func TestMatchReadsLastEntry(t *testing.T) {
	e, err := Compile("a = 'x'")
	if err != nil {
		t.Fatal(err)
	}
	for props, want := range map[string]bool{
		"a\x01y\x02a\x01x":     true,
		"a\x01x\x02a\x01y":     false,
		"a\x01x\x02a\x01":      true,
		"ba\x01x":              false,
		"b\x01a\x01x":          false,
		"b\x01q\x02a\x01x\x02": true,
		"":                     false,
	} {
		if got := e.Match(props); got != want {
			t.Errorf("Match(%q) = %v, want %v", props, got, want)
		}
	}
}

// TestMatchManyProperties: an expression reading more names than one
// scan holds (maxSlots) finds each, with the property rules (the last
// entry of a name wins, an empty value is missing).
func TestMatchManyProperties(t *testing.T) {
	var terms, entries []string
	for i := range maxSlots + 3 {
		c := string(rune('a' + i))
		terms = append(terms, "p"+c+" = '"+c+"'")
		entries = append(entries, "p"+c+"\x01old", "p"+c+"\x01"+c, "p"+c+"\x01")
	}
	e, err := Compile(strings.Join(terms, " AND "))
	if err != nil {
		t.Fatal(err)
	}
	props := strings.Join(entries, "\x02")
	if !e.Match(props) {
		t.Fatalf("%q does not match %q", e.text, props)
	}
	for i := range maxSlots + 3 {
		c := string(rune('a' + i))
		changed := strings.Replace(props, "p"+c+"\x01"+c, "p"+c+"\x01x", 1)
		if e.Match(changed) || e.verdict(changed) != 'F' {
			t.Errorf("p%s = 'x': %c", c, e.verdict(changed))
		}
		missing := strings.ReplaceAll(changed, "p"+c+"\x01", "q\x01")
		if v := e.verdict(missing); v != 'N' || e.Match(missing) {
			t.Errorf("p%s missing: %c", c, v)
		}
	}
}
