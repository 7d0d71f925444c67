package config

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// defaultValue is a default as field comments write it: "(true)", "(8)",
// "(6 s)", "(256 KiB)", "(5,000,000)", ending in ')' or ';'.
const defaultValue = `(true|false|-?[0-9][0-9,]*(?:\.[0-9]+)?(?: ?(?:ms|s|h|KiB|MiB|GiB))?)[;)]`

var defaultInComment = regexp.MustCompile(`\(` + defaultValue)

// commentValueMatches reports whether the default a comment writes equals
// the field's value.
func commentValueMatches(written string, field reflect.Value) (bool, error) {
	if d, ok := field.Interface().(time.Duration); ok {
		got, err := time.ParseDuration(strings.ReplaceAll(written, " ", ""))
		return got == d, err
	}
	switch field.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(written)
		return b == field.Bool(), err
	case reflect.Int, reflect.Int32, reflect.Int64:
		num, unit, _ := strings.Cut(strings.ReplaceAll(written, ",", ""), " ")
		n, err := strconv.ParseInt(num, 10, 64)
		n <<= map[string]int{"KiB": 10, "MiB": 20, "GiB": 30}[unit]
		return n == field.Int(), err
	}
	return false, fmt.Errorf("kind %s", field.Kind())
}

// TestBrokerDefaultsInComments: a default written in a BrokerConfig field
// comment ("TraceOn ... (true)", "MaxHashSlotNum (5,000,000)") is the
// default the code sets (NewBrokerConfig + EnsureDefaults), so the comment
// cannot drift from the one place defaults live.
func TestBrokerDefaultsInComments(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "broker.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	c := NewBrokerConfig()
	c.EnsureDefaults()
	v := reflect.ValueOf(c)
	var st *ast.StructType
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "BrokerConfig" {
			st = ts.Type.(*ast.StructType)
		}
		return st == nil
	})
	if st == nil {
		t.Fatal("no BrokerConfig in broker.go")
	}
	var names []string
	mention, withDefault := map[string]*regexp.Regexp{}, map[string]*regexp.Regexp{}
	for _, fld := range st.Fields.List {
		for _, n := range fld.Names {
			names = append(names, n.Name)
			mention[n.Name] = regexp.MustCompile(`\b` + n.Name + `\b`)
			withDefault[n.Name] = regexp.MustCompile(`\b` + n.Name + ` \(` + defaultValue)
		}
	}
	checked := 0
	check := func(name, written, where string) {
		ok, err := commentValueMatches(written, v.FieldByName(name))
		if err != nil || !ok {
			t.Errorf("%s: the comment %s says the default is %q, the code sets %v (%v)", name, where, written, v.FieldByName(name).Interface(), err)
		}
		checked++
	}
	for _, fld := range st.Fields.List {
		if fld.Doc == nil {
			continue
		}
		doc := strings.Join(strings.Fields(fld.Doc.Text()), " ")
		// "Name (value)" anywhere: comments that cover several fields.
		for _, name := range names {
			if m := withDefault[name].FindStringSubmatch(doc); m != nil {
				check(name, m[1], "naming it")
			}
		}
		// A single field's own comment: its first "(value)", before the
		// comment goes on to another field.
		if len(fld.Names) != 1 {
			continue
		}
		own := fld.Names[0].Name
		text := doc
		for _, name := range names {
			if name == own {
				continue
			}
			if i := mention[name].FindStringIndex(text); i != nil {
				text = text[:i[0]]
			}
		}
		if m := defaultInComment.FindStringSubmatch(text); m != nil {
			check(own, m[1], "of the field")
		}
	}
	t.Logf("%d comment defaults checked", checked)
	if checked < 50 {
		t.Fatalf("only %d defaults found in comments: the pattern no longer matches their style", checked)
	}
}
