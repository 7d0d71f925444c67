package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// forEachGoFile parses every non-test Go file below internal/ and calls fn.
func forEachGoFile(t *testing.T, fn func(path string, f *ast.File)) {
	base := filepath.Join(repoRoot(t), "internal")
	fset := token.NewFileSet()
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		fn(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// selectorCalls reports every call pkg.Name(...) in f where pkg is the local
// name of an import of importPath.
func selectorCalls(f *ast.File, importPath string, report func(name string, pos token.Pos)) {
	local := ""
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) == importPath {
			local = filepath.Base(importPath)
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
			report(sel.Sel.Name, call.Pos())
		}
		return true
	})
}

// TestRawAtomics forbids sync/atomic's function API (atomic.AddInt64, ...):
// typed atomics (atomic.Int64, atomic.Bool, atomic.Pointer[T]) cannot be
// accessed non-atomically by mistake and carry their alignment (style.md §6).
func TestRawAtomics(t *testing.T) {
	forEachGoFile(t, func(path string, f *ast.File) {
		selectorCalls(f, "sync/atomic", func(name string, pos token.Pos) {
			t.Errorf("%s: atomic.%s: use a typed atomic (atomic.Int64, atomic.Bool, ...)", path, name)
		})
	})
}

// TestNoPrintOutsideCmd keeps output of internal packages on the injected
// logger: fmt.Print* and the builtin print/println are for cmd/ only.
func TestNoPrintOutsideCmd(t *testing.T) {
	forEachGoFile(t, func(path string, f *ast.File) {
		selectorCalls(f, "fmt", func(name string, pos token.Pos) {
			if strings.HasPrefix(name, "Print") {
				t.Errorf("%s: fmt.%s outside cmd/: log through the injected *slog.Logger", path, name)
			}
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") && id.Obj == nil {
					t.Errorf("%s: builtin %s outside cmd/", path, id.Name)
				}
			}
			return true
		})
	})
}
