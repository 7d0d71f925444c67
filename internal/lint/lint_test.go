// Package lint holds project rules that are checked as tests: the direction of
// imports between internal packages (architecture.md, "Packages") and a few
// habits from style.md.
package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rocketd/rocketd/"

// allowed lists, for each internal package (path below internal/), the
// internal packages it may import. A package missing from this table fails the
// test: a new package must take its place in the layering on purpose.
// Dependencies point down: cmd -> broker -> processor -> meta/longpoll/... ->
// namesrv, ha -> store -> store/* -> remoting -> protocol -> message, config, vfs.
var allowed = map[string][]string{
	"vfs":       {},
	"config":    {"testutil/certs"},
	"message":   {"testutil/script"},
	"lint":      {},
	"pace":      {},
	"lograte":   {},
	"lifecycle": {},
	"protocol":  {"message", "protocol/internal/headergen"},
	"remoting":  {"protocol", "testutil/certs", "testutil/wait"},
	"auth":      {"protocol", "remoting", "vfs", "lograte", "config"},
	// configcmd answers UPDATE_*_CONFIG for broker, NameServer and controller.
	"configcmd": {"config", "protocol", "remoting"},
	"metrics":   {"protocol"},

	"store/segment":      {"vfs", "lifecycle", "testutil/wait"},
	"store/fdcache":      {"vfs"},
	"store/checkpoint":   {"vfs"},
	"store/commitlog":    {"store/segment", "vfs", "message", "config", "lograte", "lifecycle", "testutil/wait"},
	"store/consumequeue": {"store/segment", "store/fdcache", "vfs", "message", "config"},
	"store/index":        {"store/segment", "store/fdcache", "vfs", "message", "config"},
	"store": {"store/segment", "store/checkpoint", "store/commitlog", "store/consumequeue",
		"store/index", "store/fdcache", "vfs", "message", "config", "lograte", "lifecycle", "testutil/wait"},

	"ha":      {"lifecycle", "auth", "store", "store/commitlog", "message", "config", "vfs", "protocol", "remoting", "testutil/proc", "testutil/certs", "testutil/wait"},
	"namesrv": {"lifecycle", "auth", "protocol", "remoting", "config", "configcmd", "vfs", "testutil/wait", "testutil/script"},
	"admin":   {"protocol", "remoting", "message"},
	// controller is the fail-over controller (raft); controller/client is
	// what a broker uses to reach it.
	"controller":        {"lifecycle", "lograte", "protocol", "remoting", "config", "configcmd", "controller/client", "testutil/wait", "testutil/proc"},
	"controller/client": {"protocol", "remoting"},
	"console":           {"admin", "protocol", "remoting", "lograte"},

	"broker/meta":     {"lifecycle", "lograte", "protocol", "config", "vfs", "message", "testutil/wait"},
	"broker/filter":   {"message"},
	"broker/client":   {"lifecycle", "protocol", "remoting", "config", "message", "broker/filter", "testutil/wait"},
	"broker/longpoll": {"lifecycle", "store", "protocol", "remoting", "message", "config", "testutil/wait", "testutil/script"},
	"broker/schedule": {"lifecycle", "lograte", "store", "message", "config", "vfs", "broker/meta", "testutil/wait"},
	"broker/timer":    {"lifecycle", "lograte", "store", "store/commitlog", "message", "config", "vfs", "testutil/wait"},
	"broker/txn":      {"lifecycle", "store", "message", "config", "vfs", "broker/meta", "protocol", "remoting", "testutil/wait"},
	"broker/pop":      {"store", "message", "config", "vfs", "broker/meta", "protocol", "testutil/wait"},
	"broker/stats":    {},
	"broker/role":     {"lifecycle", "lograte", "auth", "config", "vfs", "protocol", "remoting", "store", "store/commitlog", "ha", "controller/client", "testutil/wait"},
	"broker/processor": {"auth", "store", "message", "config", "configcmd", "vfs", "protocol", "remoting", "broker/meta", "broker/filter",
		"broker/longpoll", "broker/schedule", "broker/timer", "broker/txn", "broker/pop", "broker/client", "broker/stats", "ha", "testutil/wait"},
	"broker": {"lifecycle", "store", "message", "config", "vfs", "protocol", "remoting", "broker/meta", "broker/filter",
		"broker/longpoll", "broker/schedule", "broker/timer", "broker/txn", "broker/pop", "broker/processor", "broker/client", "broker/stats", "broker/role", "ha", "namesrv",
		"auth", "metrics", "console", "admin", "grpc", "controller/client", "testutil/proc", "testutil/certs", "testutil/wait"},
	"grpc": {"auth", "protocol", "remoting", "message", "config", "lograte", "broker/meta", "broker/pop", "broker/client", "broker/processor", "broker/timer"},

	// testutil/proc runs rocketd as a child process; only _test.go files
	// import it.
	"testutil/proc": {},
	// testutil/wait is the tests' one condition wait; only _test.go files
	// import it.
	"testutil/wait": {},
	// testutil/certs makes throwaway certificates; only _test.go files
	// import it.
	"testutil/certs": {},
	// testutil/script runs the data-driven test files; only _test.go
	// files import it.
	"testutil/script": {},

	// protocol/internal/headergen writes the protocol headers' methods (go
	// generate); protocol's tests run it to check the committed file.
	"protocol/internal/headergen":     {},
	"protocol/internal/headergen/cmd": {"protocol/internal/headergen"},
}

// forbidden are edges that must never exist whatever the table says; they are
// the arrows architecture.md calls out by name.
var forbidden = [][2]string{
	{"store", "remoting"}, {"store", "protocol"}, {"store", "broker"},
	{"namesrv", "store"}, {"namesrv", "broker"},
	{"remoting", "store"}, {"protocol", "remoting"},
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// internalImports maps each internal package to the internal packages its
// non-test and test files import.
func internalImports(t *testing.T, root string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	base := filepath.Join(root, "internal")
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
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(base, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module+"internal/") {
				out[pkg][strings.TrimPrefix(p, module+"internal/")] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

// TestImportDirection enforces the package layering of architecture.md.
func TestImportDirection(t *testing.T) {
	imports := internalImports(t, repoRoot(t))
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		ok, known := allowed[pkg]
		if !known {
			t.Errorf("internal/%s has no entry in the layering table of internal/lint: add one", pkg)
			continue
		}
		for imp := range imports[pkg] {
			if imp == pkg {
				continue // an external _test package importing the package under test
			}
			for _, e := range forbidden {
				if under(pkg, e[0]) && under(imp, e[1]) {
					t.Errorf("internal/%s imports internal/%s: forbidden by architecture.md", pkg, imp)
				}
			}
			permitted := false
			for _, a := range ok {
				if imp == a {
					permitted = true
				}
			}
			if !permitted {
				t.Errorf("internal/%s imports internal/%s: not allowed by the layering table", pkg, imp)
			}
		}
	}
}

// TestLayeringCatchesViolations makes sure the rule above can fail.
func TestLayeringCatchesViolations(t *testing.T) {
	hit := false
	for _, e := range forbidden {
		if under("store/commitlog", e[0]) && under("remoting", e[1]) {
			hit = true
		}
	}
	if !hit {
		t.Fatal("store/commitlog -> remoting should be forbidden")
	}
}
