// Package script runs the data-driven tests: a text file of cases, each
// the code's input and the output it must print, so that a change of
// behaviour is reviewed as a diff of that file. Only _test.go files import
// it.
//
// The format: cases are separated by blank lines. A case is optional "#"
// comment lines, a directive line, optional input lines, a "----" line and
// the expected output (which holds no blank line). A block of comment
// lines alone is kept as it is.
//
//	# a comment
//	directive arg=1
//	input line
//	----
//	expected output
//
// go test -run TestX -rewrite regenerates the expected outputs from what
// the code printed; review the diff.
package script

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of data-driven test files (testutil/script)")

// Case is one case of a file.
type Case struct {
	Line      int    // 1-based line of the directive
	Directive string // the directive line
	Input     string // the lines between the directive and "----"
}

// Run runs every case of the file at path through run, in order, and fails
// t for each whose trimmed output differs from the file's. With -rewrite
// it writes the outputs into the file instead.
func Run(t *testing.T, path string, run func(t *testing.T, c Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	line := 1
	for _, block := range strings.Split(string(data), "\n\n") {
		start := line
		line += strings.Count(block, "\n") + 2
		trimmed := strings.Trim(block, "\n")
		if trimmed == "" {
			continue
		}
		start += len(block) - len(strings.TrimLeft(block, "\n"))
		lines := strings.Split(trimmed, "\n")
		n := 0
		for n < len(lines) && strings.HasPrefix(lines[n], "#") {
			n++
		}
		if n == len(lines) { // comments only
			out = append(out, trimmed)
			continue
		}
		comment, body := lines[:n], lines[n:]
		sep := -1
		for i, l := range body {
			if l == "----" {
				sep = i
				break
			}
		}
		if sep < 1 {
			t.Fatalf("%s:%d: case without a directive and a ---- line:\n%s", path, start, trimmed)
		}
		c := Case{Line: start + n, Directive: body[0], Input: strings.Join(body[1:sep], "\n")}
		want := strings.TrimSpace(strings.Join(body[sep+1:], "\n"))
		got := strings.TrimSpace(run(t, c))
		if strings.Contains(got, "\n\n") {
			t.Errorf("%s:%d: %s: output holds a blank line, which the format cannot keep:\n%s", path, c.Line, c.Directive, got)
		}
		if !*rewrite && got != want {
			t.Errorf("%s:%d: %s\n got:\n%s\nwant:\n%s", path, c.Line, c.Directive, got, want)
		}
		head := append(append([]string{}, comment...), body[:sep]...)
		if got != "" {
			got = "\n" + got
		}
		out = append(out, strings.Join(head, "\n")+"\n----"+got)
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
