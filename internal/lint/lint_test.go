// Package lint holds project rules that are checked as tests: the direction of
// imports between internal packages (architecture.md, "Packages") and a few
// habits from style.md.
package lint

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rocketd/rocketd/"

// allowed lists, for each internal package (path below internal/), the
// internal packages its non-test files import: exactly the real edges. A
// package missing from this table fails the test (a new package must take its
// place in the layering on purpose), and so does an entry no file uses (the
// table stays a true picture of the graph). Dependencies point down: cmd ->
// broker -> processor -> meta/longpoll/... -> namesrv, ha -> store -> store/*
// -> remoting -> protocol -> message, config, vfs.
var allowed = map[string][]string{
	"vfs":       {},
	"config":    {},
	"message":   {},
	"lint":      {},
	"pace":      {},
	"lograte":   {},
	"lifecycle": {},
	"protocol":  {},
	"remoting":  {"protocol"},
	"auth":      {"protocol", "remoting", "vfs", "lograte", "config"},
	// configcmd answers UPDATE_*_CONFIG for broker, NameServer and controller.
	"configcmd": {"config", "protocol", "remoting"},
	"metrics":   {"protocol"},

	"store/segment":      {"vfs", "lifecycle"},
	"store/fdcache":      {"vfs"},
	"store/checkpoint":   {"vfs"},
	"store/commitlog":    {"store/segment", "vfs", "message", "lograte", "lifecycle"},
	"store/consumequeue": {"store/fdcache", "store/segment", "vfs"},
	"store/index":        {"vfs", "message"},
	"store": {"store/segment", "store/checkpoint", "store/commitlog", "store/consumequeue",
		"store/index", "store/fdcache", "vfs", "message", "config", "lograte", "lifecycle"},

	"ha":      {"lifecycle", "lograte", "auth", "store", "config", "remoting"},
	"namesrv": {"lifecycle", "auth", "protocol", "remoting", "config", "configcmd", "vfs"},
	"admin":   {"protocol", "remoting", "message"},
	// controller is the fail-over controller (raft); controller/client is
	// what a broker uses to reach it.
	"controller":        {"lifecycle", "lograte", "protocol", "remoting", "config", "configcmd"},
	"controller/client": {"protocol", "remoting"},
	"console":           {"admin", "lifecycle", "protocol", "remoting", "lograte"},

	"broker/meta":     {"lifecycle", "lograte", "protocol", "config", "vfs"},
	"broker/filter":   {"message"},
	"broker/client":   {"lifecycle", "protocol", "remoting", "config", "broker/filter"},
	"broker/longpoll": {"lifecycle", "config"},
	"broker/schedule": {"lifecycle", "lograte", "store", "message", "broker/meta"},
	"broker/timer":    {"lifecycle", "lograte", "store", "message", "vfs"},
	"broker/txn":      {"lifecycle", "store", "message", "broker/meta", "protocol", "remoting"},
	"broker/pop":      {"lifecycle", "lograte", "store", "message", "vfs", "broker/meta", "protocol"},
	"broker/stats":    {"lifecycle"},
	"broker/role":     {"lifecycle", "lograte", "auth", "config", "vfs", "protocol", "remoting", "store", "ha", "controller/client"},
	"broker/processor": {"auth", "store", "message", "config", "configcmd", "vfs", "protocol", "remoting", "lograte", "broker/meta", "broker/filter",
		"broker/longpoll", "broker/timer", "broker/txn", "broker/pop", "broker/client", "broker/stats"},
	"broker": {"store", "message", "config", "vfs", "protocol", "remoting", "broker/meta",
		"broker/longpoll", "broker/schedule", "broker/timer", "broker/txn", "broker/pop", "broker/processor", "broker/client", "broker/stats", "broker/role", "ha",
		"auth", "metrics", "console", "grpc"},
	"grpc": {"auth", "lifecycle", "protocol", "remoting", "message", "config", "lograte", "broker/meta", "broker/pop", "broker/client", "broker/processor", "broker/timer"},

	// protocol/internal/headergen writes the protocol headers' methods (go
	// generate); protocol's tests run it to check the committed file.
	"protocol/internal/headergen":     {},
	"protocol/internal/headergen/cmd": {"protocol/internal/headergen"},

	// The test helpers; only _test.go files import them (allowedInTests).
	"testutil/proc":   {},
	"testutil/wait":   {},
	"testutil/certs":  {},
	"testutil/script": {},
}

// allowedInTests lists, for each internal package, what its _test.go files
// import beyond its allowed edges: the test helpers (testutil/wait is the
// tests' one condition wait, testutil/proc runs rocketd as a child process,
// testutil/certs makes throwaway certificates, testutil/script runs the
// data-driven test files) and packages a test drives its subject with (a
// NameServer for the broker, a client for the controller). Every entry is
// used by some test file and is not in allowed already.
var allowedInTests = map[string][]string{
	"config":           {"testutil/certs"},
	"protocol":         {"protocol/internal/headergen"},
	"message":          {"testutil/script"},
	"remoting":         {"testutil/certs", "testutil/wait"},
	"namesrv":          {"testutil/script", "testutil/wait"},
	"controller":       {"controller/client", "testutil/wait"},
	"store":            {"testutil/wait"},
	"store/segment":    {"testutil/wait"},
	"store/commitlog":  {"testutil/wait"},
	"ha":               {"message", "protocol", "vfs", "testutil/certs", "testutil/proc", "testutil/wait"},
	"broker/meta":      {"testutil/wait"},
	"broker/client":    {"testutil/wait"},
	"broker/longpoll":  {"protocol", "remoting", "testutil/script", "testutil/wait"},
	"broker/schedule":  {"vfs", "testutil/wait"},
	"broker/timer":     {"testutil/wait"},
	"broker/txn":       {"config", "testutil/wait"},
	"broker/pop":       {"config", "testutil/wait"},
	"broker/processor": {"testutil/wait"},
	"broker/role":      {"message", "testutil/wait"},
	"broker":           {"controller/client", "namesrv", "testutil/certs", "testutil/proc", "testutil/wait"},
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

// graph is the internal import graph: for each package (path below
// internal/), the internal packages its non-test files import (real) and
// those its _test.go files import (test). A package importing itself (an
// external _test package) is left out.
type graph struct {
	real, test map[string]map[string]bool
}

// internalImports reads the import graph of the repository's internal/.
func internalImports(t *testing.T, root string) graph {
	g := graph{real: map[string]map[string]bool{}, test: map[string]map[string]bool{}}
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
		edges := g.real
		if strings.HasSuffix(path, "_test.go") {
			edges = g.test
		}
		if edges[pkg] == nil {
			edges[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if q, ok := strings.CutPrefix(p, module+"internal/"); ok && q != pkg {
				edges[pkg][q] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func under(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

// rules are the layering tables checkLayering applies.
type rules struct {
	allowed, allowedInTests map[string][]string
	forbidden               [][2]string
}

// checkLayering returns every way g breaks r, sorted: a package without an
// entry, a forbidden edge, a test helper imported by non-test code, an edge
// the tables do not allow, and a table entry no file uses.
func checkLayering(g graph, r rules) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	pkgs := map[string]bool{}
	for p := range g.real {
		pkgs[p] = true
	}
	for p := range g.test {
		pkgs[p] = true
	}
	forbidden := func(pkg, imp string) bool {
		for _, e := range r.forbidden {
			if under(pkg, e[0]) && under(imp, e[1]) {
				return true
			}
		}
		return false
	}
	for pkg := range pkgs {
		ok, known := r.allowed[pkg]
		if !known {
			bad("internal/%s has no entry in the layering table of internal/lint: add one", pkg)
			continue
		}
		for imp := range g.real[pkg] {
			switch {
			case forbidden(pkg, imp):
				bad("internal/%s imports internal/%s: forbidden by architecture.md", pkg, imp)
			case under(imp, "testutil") && !under(pkg, "testutil"):
				bad("internal/%s imports internal/%s outside its tests: test helpers are for _test.go files", pkg, imp)
			case !slices.Contains(ok, imp):
				bad("internal/%s imports internal/%s: not allowed by the layering table", pkg, imp)
			}
		}
		for imp := range g.test[pkg] {
			switch {
			case forbidden(pkg, imp):
				bad("internal/%s's tests import internal/%s: forbidden by architecture.md", pkg, imp)
			case !slices.Contains(ok, imp) && !slices.Contains(r.allowedInTests[pkg], imp):
				bad("internal/%s's tests import internal/%s: not allowed by the layering table (allowedInTests)", pkg, imp)
			}
		}
	}
	for pkg, imps := range r.allowed {
		for _, imp := range imps {
			if !g.real[pkg][imp] {
				bad("the layering table allows internal/%s -> internal/%s but no non-test file imports it: remove it", pkg, imp)
			}
		}
	}
	for pkg, imps := range r.allowedInTests {
		for _, imp := range imps {
			if !g.test[pkg][imp] || slices.Contains(r.allowed[pkg], imp) {
				bad("allowedInTests lists internal/%s -> internal/%s but no test file needs it: remove it", pkg, imp)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestImportDirection enforces the package layering of architecture.md.
func TestImportDirection(t *testing.T) {
	for _, v := range checkLayering(internalImports(t, repoRoot(t)), rules{allowed, allowedInTests, forbidden}) {
		t.Error(v)
	}
}

// TestLayeringCatchesViolations runs the same checker on a synthetic graph
// that breaks each rule once, so that TestImportDirection can fail.
func TestLayeringCatchesViolations(t *testing.T) {
	r := rules{
		allowed: map[string][]string{
			"a": {"b"}, "b": {}, "c": {"b"}, "store": {}, "remoting": {}, "testutil/wait": {},
		},
		allowedInTests: map[string][]string{"a": {"testutil/wait"}, "b": {"testutil/wait"}},
		forbidden:      forbidden,
	}
	edges := func(m map[string][]string) map[string]map[string]bool {
		out := map[string]map[string]bool{}
		for p, imps := range m {
			out[p] = map[string]bool{}
			for _, i := range imps {
				out[p][i] = true
			}
		}
		return out
	}
	clean := graph{
		real: edges(map[string][]string{"a": {"b"}, "b": {}, "c": {"b"}, "store": {}, "remoting": {}, "testutil/wait": {}}),
		test: edges(map[string][]string{"a": {"testutil/wait"}, "b": {"testutil/wait"}}),
	}
	if v := checkLayering(clean, r); len(v) != 0 {
		t.Fatalf("a graph that keeps the rules was refused: %q", v)
	}
	broken := graph{
		real: edges(map[string][]string{
			"a":        {"b", "c"},        // a -> c: not in the table
			"b":        {"testutil/wait"}, // a test helper in non-test code
			"c":        {},                // c -> b: allowed but unused
			"d":        {"b"},             // d: no entry
			"store":    {"remoting/x"},    // forbidden (below remoting)
			"remoting": {},
		}),
		test: edges(map[string][]string{
			"a": {"testutil/wait"}, // allowed in tests
			"b": {"c"},             // not allowed; its testutil/wait entry goes unused
		}),
	}
	want := []string{
		"allowedInTests lists internal/b -> internal/testutil/wait but no test file needs it: remove it",
		"internal/a imports internal/c: not allowed by the layering table",
		"internal/b imports internal/testutil/wait outside its tests: test helpers are for _test.go files",
		"internal/b's tests import internal/c: not allowed by the layering table (allowedInTests)",
		"internal/d has no entry in the layering table of internal/lint: add one",
		"internal/store imports internal/remoting/x: forbidden by architecture.md",
		"the layering table allows internal/c -> internal/b but no non-test file imports it: remove it",
	}
	if got := checkLayering(broken, r); !slices.Equal(got, want) {
		t.Errorf("violations of the broken graph:\n got %q\nwant %q", got, want)
	}
}
