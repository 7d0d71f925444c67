package filter

import (
	"testing"

	"github.com/rocketd/rocketd/internal/message"
)

// TestMayMatchTagsCode: the ConsumeQueue pre-check admits every tag an
// expression can accept and rejects only tags it cannot.
func TestMayMatchTagsCode(t *testing.T) {
	code := func(tag string) int64 { return message.TagsCode(tag) }
	for _, c := range []struct {
		expr   string
		admits []string
		denies []string
	}{
		{"TAGS = 'a'", []string{"a"}, []string{"b", ""}},
		{"'a' = TAGS AND x > 1", []string{"a"}, []string{"b"}},
		{"x > 1 AND TAGS IN ('a', 'b')", []string{"a", "b"}, []string{"c"}},
		{"TAGS IN ('a','b','c','d','e','f')", []string{"a", "f"}, []string{"g"}},
		{"TAGS = 'a' OR TAGS = 'b'", []string{"a", "b"}, []string{"c"}},
		{"TAGS = 'a' OR x = 1", []string{"a", "b", "c"}, nil},
		{"NOT TAGS = 'a'", []string{"a", "b"}, nil},
		{"TAGS <> 'a'", []string{"a", "b"}, nil},
		{"TAGS NOT IN ('a')", []string{"a", "b"}, nil},
		{"TAGS = 5", []string{"5", "05"}, nil},
		{"x = 'a'", []string{"a", "b"}, nil},
	} {
		e, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range c.admits {
			if !e.MayMatchTagsCode(code(tag)) {
				t.Errorf("%q denies tag %q", c.expr, tag)
			}
		}
		for _, tag := range c.denies {
			if e.MayMatchTagsCode(code(tag)) {
				t.Errorf("%q admits tag %q", c.expr, tag)
			}
		}
	}
}
