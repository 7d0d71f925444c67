package processor_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// familyDeps is what each request family (a type with a register method)
// and each helper shared by several families may hold: adding a
// dependency to a family is a change of this table, seen in review.
// "base" is the embedded config, live config, role and logger.
var familyDeps = map[string][]string{
	// families
	"sendFamily": {"base", "store", "topics", "groups", "clients", "storeHost", "mappings", "sendHooks",
		"sentToDLQ", "txn", "timerRecall", "stats", "region", "traceOn", "storedProps"},
	"pullFamily": {"base", "store", "topics", "groups", "offsets", "clients", "holder", "storeHost",
		"stats", "static", "filters"},
	"offsetFamily":  {"base", "store", "offsets", "inMemory", "static"},
	"clientFamily":  {"base", "clients", "groups", "topics", "modes", "route", "filters"},
	"popFamily":     {"base", "pop", "holder", "topics", "groups", "filters"},
	"authFamily":    {"log", "users", "acls"},
	"topicAdmin":    {"base", "store", "topics", "offsets", "mappings", "awaitReg"},
	"groupAdmin":    {"base", "groups", "offsets", "modes"},
	"consumerAdmin": {"base", "store", "topics", "groups", "offsets", "clients", "storeHost", "stats"},
	"brokerAdmin":   {"base", "store", "stats", "extras", "haRuntime", "timerCheckpoint", "timerMetrics", "fams"},
	"storeAdmin":    {"log", "store", "topics"},
	"messageAdmin":  {"base", "store", "txn"},
	// shared helpers
	"base":     {"cfg", "rt", "role", "log"},
	"staticRW": {"log", "store", "offsets", "mappings", "route", "forwardFn", "forwardLog"},
	"filters":  {"base", "clients", "exprCache"},
}

// pkgDecls is the package's non-test source: struct types by name and
// methods by receiver type.
type pkgDecls struct {
	structs map[string]*ast.StructType
	methods map[string][]*ast.FuncDecl
}

func parsePackage(t *testing.T) pkgDecls {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	d := pkgDecls{structs: map[string]*ast.StructType{}, methods: map[string][]*ast.FuncDecl{}}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							d.structs[ts.Name.Name] = st
						}
					}
				}
			case *ast.FuncDecl:
				if decl.Recv != nil {
					d.methods[recvType(decl)] = append(d.methods[recvType(decl)], decl)
				}
			}
		}
	}
	return d
}

// recvType is a method's receiver type name, without the pointer.
func recvType(fd *ast.FuncDecl) string {
	x := fd.Recv.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// fieldNames lists a struct's fields; an embedded one by its type name.
func fieldNames(st *ast.StructType) []string {
	var names []string
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			x := f.Type
			if s, ok := x.(*ast.StarExpr); ok {
				x = s.X
			}
			if id, ok := x.(*ast.Ident); ok {
				names = append(names, id.Name)
			}
			continue
		}
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
	}
	return names
}

func methodNames(ms []*ast.FuncDecl) []string {
	var names []string
	for _, m := range ms {
		names = append(names, m.Name.Name)
	}
	return names
}

// families are the types with a register method: the request families.
func (d pkgDecls) families() []string {
	var fams []string
	for typ, ms := range d.methods {
		for _, m := range ms {
			if m.Name.Name == "register" {
				fams = append(fams, typ)
			}
		}
	}
	sort.Strings(fams)
	return fams
}

// selected is the set of names the methods of typ select on their
// receiver (fields and methods, promoted ones included).
func (d pkgDecls) selected(typ string) map[string]bool {
	used := map[string]bool{}
	for _, m := range d.methods[typ] {
		if len(m.Recv.List[0].Names) == 0 {
			continue
		}
		recv := m.Recv.List[0].Names[0].Name
		ast.Inspect(m.Body, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok && id.Name == recv {
					used[se.Sel.Name] = true
				}
			}
			return true
		})
	}
	return used
}

// TestFamiliesHoldWhatTheyUse checks the split of the request codes into
// families (issue 19 item 4) from the package's source:
//   - every family and shared helper holds exactly the dependencies
//     familyDeps lists, and no family is missing from it;
//   - each of those fields is read by a method of its type (a dependency
//     no handler uses is not held);
//   - every handler (a method named handle*) is defined on a family, never
//     on Processor or a shared helper;
//   - Processor holds families only and has no unexported method: it
//     composes, its exported methods delegate.
func TestFamiliesHoldWhatTheyUse(t *testing.T) {
	d := parsePackage(t)
	fams := d.families()
	if len(fams) < 10 {
		t.Fatalf("found %d families (%v): the parse is broken", len(fams), fams)
	}
	isFamily := map[string]bool{}
	for _, f := range fams {
		isFamily[f] = true
		if _, listed := familyDeps[f]; !listed {
			t.Errorf("family %s is not in familyDeps: list the dependencies it holds", f)
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(familyDeps)) {
		st, found := d.structs[typ]
		if !found {
			t.Errorf("familyDeps names %s, which is not a struct type of the package", typ)
			continue
		}
		got := fieldNames(st)
		want := familyDeps[typ]
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%s holds %v; familyDeps allows %v", typ, got, want)
		}
		used := d.selected(typ)
		// An embedded type's fields are read through the types that embed it.
		for _, outer := range slices.Sorted(maps.Keys(familyDeps)) {
			if slices.Contains(familyDeps[outer], typ) {
				maps.Copy(used, d.selected(outer))
			}
		}
		for _, f := range got {
			if f == "base" {
				if !slices.ContainsFunc(append(fieldNames(d.structs["base"]), methodNames(d.methods["base"])...),
					func(n string) bool { return used[n] }) {
					t.Errorf("%s embeds base but reads nothing of it", typ)
				}
				continue
			}
			if !used[f] {
				t.Errorf("%s.%s is held but no method of %s reads it", typ, f, typ)
			}
		}
	}
	for typ, ms := range d.methods {
		for _, m := range ms {
			if strings.HasPrefix(m.Name.Name, "handle") && !isFamily[typ] {
				t.Errorf("handler %s is a method of %s, not of a family", m.Name.Name, typ)
			}
		}
	}
	for _, m := range d.methods["Processor"] {
		if !ast.IsExported(m.Name.Name) {
			t.Errorf("Processor.%s: Processor only composes families; move it to the family that uses it", m.Name.Name)
		}
	}
	for _, f := range d.structs["Processor"].Fields.List {
		typ := ""
		switch x := f.Type.(type) {
		case *ast.StarExpr:
			if id, ok := x.X.(*ast.Ident); ok && isFamily[id.Name] {
				continue
			}
		case *ast.ArrayType:
			if id, ok := x.Elt.(*ast.Ident); ok && id.Name == "family" {
				continue
			}
		}
		for _, n := range f.Names {
			typ += n.Name + " "
		}
		t.Errorf("Processor field %sis not a family: dependencies belong to the families that use them", typ)
	}
}
