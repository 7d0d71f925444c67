package remoting

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/codec golden files from the current encoder")

// goldenCase is one command of testdata/codec/headers.txt with the header
// each serialization gives it: the JSON text, and the ROCKETMQ bytes in hex.
type goldenCase struct {
	name, in, json, rocketmq string
}

// TestGoldenHeaders encodes each command of testdata/codec/headers.txt in
// both serializations and compares with the recorded headers, then decodes
// the recorded headers back to the command. Review a change to the encoder
// as a diff of that file (go test -run Golden -rewrite).
func TestGoldenHeaders(t *testing.T) {
	path := filepath.Join("testdata", "codec", "headers.txt")
	cases := readGolden(t, path)
	var out strings.Builder
	for _, gc := range cases {
		var c Command
		if err := json.Unmarshal([]byte(gc.in), &c); err != nil {
			t.Fatalf("%s: bad input %s: %v", gc.name, gc.in, err)
		}
		gotJSON := string(appendJSONHeader(nil, &c))
		bin, err := appendBinaryHeader(nil, &c)
		gotBin := hex.EncodeToString(bin)
		if err != nil {
			gotBin = "error: " + err.Error()
		}
		out.WriteString("# " + gc.name + "\nin: " + gc.in + "\njson: " + gotJSON + "\nrocketmq: " + gotBin + "\n\n")
		if *rewrite {
			continue
		}
		if gotJSON != gc.json {
			t.Errorf("%s JSON header\n got %s\nwant %s", gc.name, gotJSON, gc.json)
		}
		if gotBin != gc.rocketmq {
			t.Errorf("%s ROCKETMQ header\n got %s\nwant %s", gc.name, gotBin, gc.rocketmq)
		}
		var fromJSON Command
		if err := decodeJSONHeader([]byte(gc.json), &fromJSON); err != nil || !equalCommands(&fromJSON, &c) {
			t.Errorf("%s: recorded JSON header decodes to %+v (%v)", gc.name, fromJSON, err)
		}
		if raw, err := hex.DecodeString(gc.rocketmq); err == nil {
			var fromBin Command
			if err := decodeBinaryHeader(raw, &fromBin); err != nil || !equalCommands(&fromBin, &c) {
				t.Errorf("%s: recorded ROCKETMQ header decodes to %+v (%v)", gc.name, fromBin, err)
			}
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readGolden(t *testing.T, path string) []goldenCase {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	var cur *goldenCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# "):
			cases = append(cases, goldenCase{name: line[2:]})
			cur = &cases[len(cases)-1]
		case cur == nil || line == "":
		case strings.HasPrefix(line, "in: "):
			cur.in = line[4:]
		case strings.HasPrefix(line, "json: "):
			cur.json = line[6:]
		case strings.HasPrefix(line, "rocketmq: "):
			cur.rocketmq = line[10:]
		default:
			t.Fatalf("%s: unexpected line %q", path, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return cases
}
