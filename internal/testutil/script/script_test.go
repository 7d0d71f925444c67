package script

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `# the comment block stays

# a case comment
upper
abc
def
----
ABC
DEF

count a b c
----
3

empty
----
`

func runSample(t *testing.T, c Case) string {
	switch {
	case c.Directive == "upper":
		return strings.ToUpper(c.Input)
	case strings.HasPrefix(c.Directive, "count "):
		return string(rune('0' + len(strings.Fields(c.Directive)) - 1))
	case c.Directive == "empty":
		return ""
	}
	t.Fatalf("unknown directive %q", c.Directive)
	return ""
}

func TestRunPassesMatchingCases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.txt")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []int
	Run(t, path, func(t *testing.T, c Case) string {
		lines = append(lines, c.Line)
		return runSample(t, c)
	})
	if want := []int{4, 11, 15}; !equal(lines, want) {
		t.Fatalf("directive lines %v, want %v", lines, want)
	}
}

func TestRunReportsAMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.txt")
	if err := os.WriteFile(path, []byte(strings.Replace(sample, "ABC", "XYZ", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	inner := &testing.T{}
	ran := make(chan struct{})
	// A failing inner run must not fail this test: run it on its own T.
	go func() {
		defer close(ran)
		Run(inner, path, runSample)
	}()
	<-ran
	if !inner.Failed() {
		t.Fatal("a changed expected output passed")
	}
}

func TestRewriteKeepsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.txt")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	*rewrite = true
	defer func() { *rewrite = false }()
	Run(t, path, runSample)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != sample {
		t.Fatalf("rewrite changed a file whose outputs were right:\n%q\nwant:\n%q", got, sample)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
