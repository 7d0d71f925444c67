package protocol

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCodeMapDoc = flag.Bool("update", false, "rewrite docs/request-codes.md from RequestCodeMap")

func TestRequestCodeMapIsOrderedAndUnique(t *testing.T) {
	names := map[string]bool{}
	for i, c := range RequestCodeMap {
		if i > 0 && RequestCodeMap[i-1].Code >= c.Code {
			t.Errorf("row %d (%d %s) is not after %d", i, c.Code, c.Name, RequestCodeMap[i-1].Code)
		}
		if names[c.Name] {
			t.Errorf("name %s twice", c.Name)
		}
		names[c.Name] = true
		if c.Side == 0 || c.Status == 0 {
			t.Errorf("%d %s: side or status missing", c.Code, c.Name)
		}
		if (c.Status == CodeRefused || c.Status == CodeLater) && c.Note == "" {
			t.Errorf("%d %s: %s needs a note saying why or when", c.Code, c.Name, c.Status)
		}
		if c.Status == CodeSent && c.Side != SideClient {
			t.Errorf("%d %s: only client codes are sent", c.Code, c.Name)
		}
		got, ok := LookupRequestCode(c.Code)
		if !ok || got.Name != c.Name {
			t.Errorf("LookupRequestCode(%d) = %v, %v", c.Code, got, ok)
		}
	}
	for _, code := range []int32{0, 16, 9999, 200057} {
		if _, ok := LookupRequestCode(code); ok {
			t.Errorf("LookupRequestCode(%d) found a row", code)
		}
	}
}

// TestRequestCodeMapDoc checks docs/request-codes.md is the map rendered.
func TestRequestCodeMapDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "request-codes.md")
	want := renderCodeMap()
	if *updateCodeMapDoc {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not RequestCodeMap rendered; run go test ./internal/protocol -run CodeMapDoc -update", path)
	}
}

func renderCodeMap() []byte {
	var b bytes.Buffer
	count := map[CodeStatus]int{}
	for _, c := range RequestCodeMap {
		count[c.Status]++
	}
	fmt.Fprintf(&b, "# Request codes\n\n")
	fmt.Fprintf(&b, "Every request code of Java RocketMQ 5.x's `RequestCode` (5.2.0, 5.3.x and the development head,\n")
	fmt.Fprintf(&b, "ACL 1.0's removed codes included): the side that serves it in Java and what rocketd does with it.\n")
	fmt.Fprintf(&b, "Generated from `internal/protocol/codemap.go` (`go test ./internal/protocol -run CodeMapDoc -update`);\n")
	fmt.Fprintf(&b, "the broker's and the NameServer's tests check it against the handlers they register. A code that is\n")
	fmt.Fprintf(&b, "not served is answered REQUEST_CODE_NOT_SUPPORTED (3); a code refused on purpose says why in the remark.\n\n")
	fmt.Fprintf(&b, "%d codes: %d served, %d sent by the broker to clients, %d refused on purpose, %d later.\n\n",
		len(RequestCodeMap), count[CodeServed], count[CodeSent], count[CodeRefused], count[CodeLater])
	fmt.Fprintf(&b, "| code | name | Java side | rocketd | note |\n|---:|---|---|---|---|\n")
	for _, c := range RequestCodeMap {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", c.Code, c.Name, c.Side, c.Status, strings.ReplaceAll(c.Note, "|", `\|`))
	}
	return b.Bytes()
}
