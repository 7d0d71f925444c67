package protocol

import (
	"bytes"
	"os"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol/internal/headergen"
)

// TestGeneratedHeadersCurrent fails when zz_headers_gen.go is not what the
// ext struct tags give: a header changed without go generate.
func TestGeneratedHeadersCurrent(t *testing.T) {
	want, err := headergen.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(headergen.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	line := 0
	for line < len(gl) && line < len(wl) && bytes.Equal(gl[line], wl[line]) {
		line++
	}
	var g, w []byte
	if line < len(gl) {
		g = gl[line]
	}
	if line < len(wl) {
		w = wl[line]
	}
	t.Fatalf("%s is stale: run go generate ./internal/protocol\nfirst difference at line %d:\n committed: %s\n generated: %s",
		headergen.OutputFile, line+1, g, w)
}

// TestGeneratedDecodeNoAllocs: a generated decoder allocates nothing on
// success, one header per field kind (named types, Optional[T], opt
// strings and booleans).
func TestGeneratedDecodeNoAllocs(t *testing.T) {
	for _, h := range []ExtHeader{
		&PullMessageRequestHeader{}, &CreateTopicRequestHeader{}, &BrokerHeartbeatRequestHeader{},
		&SendMessageResponseHeader{}, &GetRouteInfoRequestHeader{}, &MasterInfoHeader{}, &PopMessageRequestHeader{},
	} {
		fill(t, h)
		ext := Ext(h)
		if n := testing.AllocsPerRun(100, func() {
			if err := h.Decode(ext); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%T.Decode allocates %.1f times per call", h, n)
		}
	}
}
