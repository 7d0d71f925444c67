package main

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseScaleFlags(t *testing.T) {
	h, plan, err := parseScaleFlags([]string{"--quick", "--conns", "50"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.queues, []int{1, 8, 100, 1000}) || plan.conns != 50 ||
		!slices.Equal(plan.backlogGiB, []float64{0.25}) || !slices.Equal(plan.recoveryGiB, []float64{0.25, 0.5}) ||
		h.duration != 3*time.Second || h.out != "" || !plan.java || plan.reads != 3 {
		t.Errorf("--quick --conns 50: %+v duration %s out %q", plan, h.duration, h.out)
	}
	h, plan, err = parseScaleFlags([]string{"--java=false"})
	if err != nil || !slices.Equal(plan.queues, []int{1, 8, 100, 10000}) || !slices.Equal(plan.recoveryGiB, []float64{1, 5, 20}) ||
		plan.conns != 10000 || plan.java || !strings.HasSuffix(h.out, "-scale.md") {
		t.Errorf("defaults: %v %+v %q", err, plan, h.out)
	}
	for _, bad := range [][]string{{"--queues", "1,x"}, {"--queues", "0"}, {"--backlog-gib", "-1"}, {"--duration", "1ms"}, {"--conns", "-1"}, {"--backlog-reads", "0"}} {
		if _, _, err := parseScaleFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestScaleTable(t *testing.T) {
	var r scaleResult
	r.add("Queues", "intro", []string{"layout", "queues"}, [][]string{{"one topic", "8"}})
	want := "## Queues\n\nintro\n\n| layout | queues |\n|---|---:|\n| one topic | 8 |\n"
	if len(r.sections) != 1 || r.sections[0] != want {
		t.Errorf("section:\n%q\nwant\n%q", r.sections, want)
	}
}

// TestMemStat reads the figures settled sums from the runtime's own
// debug=1 heap output, the stacks' "inuse / sys" pair included.
func TestMemStat(t *testing.T) {
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()
	if memStat(body, "HeapAlloc") <= 0 {
		t.Errorf("HeapAlloc not read from:\n%s", tail(body))
	}
	stack := memStat(body, "Stack")
	if stack <= 0 || stack%4096 != 0 {
		t.Errorf("Stack (in use) = %d, want a positive multiple of the page size, from:\n%s", stack, tail(body))
	}
	if got := memStat([]byte("# Stack = 8192 / 16384\n"), "Stack"); got != 8192 {
		t.Errorf("Stack from an inuse / sys pair = %d, want 8192", got)
	}
}

// tail is the end of a debug=1 heap profile, where MemStats are.
func tail(b []byte) []byte { return b[max(0, len(b)-2000):] }
