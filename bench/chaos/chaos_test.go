package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/bench/internal/child"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// The official Go client leaves goroutines behind by design (its timers
// and go-cache's janitor); each is named here, everything else must stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/patrickmn/go-cache.(*janitor).Run"),
		goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/primitive.WithRecover"),
	)
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"--cycles", "7", "--kinds", "kill, stop", "--flush", "sync_flush"})
	if err != nil {
		t.Fatal(err)
	}
	if o.cycles != 7 || strings.Join(o.kinds, ",") != "kill,stop" || strings.Join(o.flushes, ",") != "SYNC_FLUSH" || o.role != "SYNC_MASTER" {
		t.Errorf("parsed %+v", o)
	}
	o, err = parseFlags([]string{"--role", "none"})
	if err != nil || strings.Join(o.kinds, ",") != "kill,disk" {
		t.Errorf("--role none: %v, kinds %v (want the stop kind dropped)", err, o.kinds)
	}
	for _, bad := range [][]string{{"--kinds", "flood"}, {"--flush", "LAZY"}, {"--role", "SLAVE"},
		{"--cycles", "0"}, {"--body", "5000"}, {"--role", "none", "--kinds", "stop"}, {"extra"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestBodyFor(t *testing.T) {
	a, b := child.Body("c001-w00-0000001", 256), child.Body("c001-w00-0000002", 256)
	if len(a) != 256 || !bytes.HasPrefix(a, []byte("c001-w00-0000001|")) || bytes.Equal(a[17:], b[17:]) {
		t.Errorf("bodies %q / %q", a, b)
	}
	if !bytes.Equal(a, child.Body("c001-w00-0000001", 256)) {
		t.Error("bodyFor is not deterministic")
	}
}

// TestClassify: each kind of finding is counted where it belongs.
func TestClassify(t *testing.T) {
	acked := map[string]ack{
		"ok":      {queueID: 0, queueOffset: 5},
		"lost":    {queueID: 0, queueOffset: 6},
		"expired": {queueID: 1, queueOffset: 1},
		"dup":     {queueID: 1, queueOffset: 7},
		"moved":   {queueID: 2, queueOffset: 3},
		"bad":     {queueID: 2, queueOffset: 4},
	}
	notAcked := map[string]string{"late": "error timeout", "gone": "error code 14"}
	s := &topicScan{
		byKey: map[string][]position{
			"ok": {{0, 5}}, "dup": {{1, 7}, {1, 8}}, "moved": {{2, 9}}, "bad": {{2, 4}}, "late": {{3, 0}}, "stranger": {{3, 1}},
		},
		badBody:   map[string]bool{"bad": true},
		minOffset: []int64{0, 2, 0, 0},
		maxOffset: []int64{10, 10, 10, 10},
	}
	c := classify(acked, notAcked, s)
	want := check{acked: 6, ok: 1, lost: 1, expired: 1, duplicated: 1, moved: 1, corrupt: 1, unackedStored: 1, lostKeys: []string{"lost"}}
	if c.acked != want.acked || c.ok != want.ok || c.lost != want.lost || c.expired != want.expired || c.duplicated != want.duplicated ||
		c.moved != want.moved || c.corrupt != want.corrupt || c.unackedStored != want.unackedStored ||
		strings.Join(c.lostKeys, ",") != "lost" || c.storedBy["error timeout"] != 1 || len(c.storedBy) != 1 {
		t.Errorf("classify = %+v\nwant %+v", c, want)
	}
	if !c.failed() {
		t.Error("a check with a loss did not fail")
	}
	if (check{acked: 3, ok: 2, expired: 1, unackedStored: 4}).failed() {
		t.Error("expired and stored-but-not-acked messages failed the check")
	}
}

// logWriter sends the harness's progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestChaosShort is the short chaos run, in two set-ups: a SYNC_MASTER and
// its slave (one cycle of each kind per flush type), and one broker under
// ASYNC_FLUSH (kill and disk: nothing replicates for it, so what it
// acknowledged must have been written by itself). Every acknowledged
// message must be read back at its position after every cycle (with
// cleanFileForciblyEnable=false none may have been deleted either), every
// read must be complete, and sends must resume by themselves once the disk
// is freed (no master restart).
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process chaos run")
	}
	bin := proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
	for _, setup := range []struct {
		role    string
		flushes []string
		kinds   []string
	}{
		{"SYNC_MASTER", []string{"ASYNC_FLUSH", "SYNC_FLUSH"}, allKinds},
		{"none", []string{"ASYNC_FLUSH"}, []string{"kill", "disk"}},
	} {
		t.Run(setup.role, func(t *testing.T) {
			o := &options{
				cycles: len(setup.kinds), kinds: setup.kinds, flushes: setup.flushes, role: setup.role,
				producers: 4, bodySize: 256, perCycle: 5000,
				steady: 500 * time.Millisecond, fault: 2 * time.Second,
				refuseTimeout: 15 * time.Second, recoverTimeout: 10 * time.Second, diskMiB: 128,
				rocketd: bin,
				ci:      os.Getenv("CI") == "true",
				command: "go test ./bench/chaos -run TestChaosShort",
				log:     logWriter{t},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, err := run(ctx, o)
			if rep != nil {
				t.Logf("report:\n%s", rep.markdown())
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.skipped != "" {
				t.Logf("NOTE: %s (CI=true would fail)", rep.skipped)
			}
			checkShortRun(t, o, rep)
		})
	}
}

func checkShortRun(t *testing.T, o *options, rep *report) {
	t.Helper()
	if len(rep.runs) != len(o.flushes) {
		t.Fatalf("%d flush runs, want %d", len(rep.runs), len(o.flushes))
	}
	for _, fr := range rep.runs {
		if fr.err != nil {
			t.Errorf("%s: %v", fr.flush, fr.err)
			continue
		}
		if len(fr.cycles) != o.cycles {
			t.Errorf("%s: %d cycles, want %d", fr.flush, len(fr.cycles), o.cycles)
		}
		acked := 0
		for _, c := range fr.cycles {
			acked += c.acked
			if c.check.readErr != nil {
				t.Errorf("%s cycle %d (%s): read incomplete: %v", fr.flush, c.n, c.kind, c.check.readErr)
			}
			if c.check.lost+c.check.duplicated+c.check.moved+c.check.corrupt+c.check.expired > 0 {
				t.Errorf("%s cycle %d (%s): %s", fr.flush, c.n, c.kind, c.summary())
			}
			if c.check.acked == 0 {
				t.Errorf("%s cycle %d (%s): nothing acknowledged so far: the check checked nothing", fr.flush, c.n, c.kind)
			}
			if c.restarted {
				t.Errorf("%s cycle %d (%s): sends did not resume by themselves; the master was restarted", fr.flush, c.n, c.kind)
			}
		}
		if acked == 0 {
			t.Errorf("%s: no message acknowledged", fr.flush)
		}
	}
}

// TestReportMarkdown: a cycle row carries its counts, a lost key makes the
// verdict FAIL and is attributed to the cycle that acknowledged it.
func TestReportMarkdown(t *testing.T) {
	o, err := parseFlags([]string{"--cycles", "2"})
	if err != nil {
		t.Fatal(err)
	}
	o.command = "go run ./bench/chaos --cycles 2"
	fr := &flushRun{flush: "ASYNC_FLUSH", role: "SYNC_MASTER", lostEver: map[string]lostKey{}}
	fr.cycles = []*cycleResult{
		{n: 1, kind: kindKill, acked: 10, outcomes: map[string]int{"error timeout": 4}, recovered: true, recovery: 1500 * time.Millisecond,
			check: check{acked: 10, ok: 10}},
		{n: 2, kind: kindDisk, acked: 5, recovered: false, notes: []string{"master exited"},
			check: check{acked: 15, ok: 14, lost: 1, unackedStored: 2, storedBy: map[string]int{"error code 14": 2}, lostKeys: []string{"k"}}},
	}
	fr.lostEver["k"] = lostKey{cycle: 1, text: "acked in cycle 1"}
	rep := &report{opts: o, runs: []*flushRun{fr}}
	md := rep.markdown()
	for _, want := range []string{
		"Command: `go run ./bench/chaos --cycles 2`",
		"| 1 | kill | 10 | error timeout 4 | 0 | 0 | 0 | 0 | 0 | 1500 ms | - |  |",
		"| 2 | disk | 5 | - | 1 | 0 | 0 | 2 (error code 14 2) | 0 | none | - | master exited |",
		"cycle 1 (kill) 1;",
		"**FAIL",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if !rep.failed() {
		t.Error("a report with a lost key did not fail")
	}
	fr.lostEver, fr.cycles[1].check = map[string]lostKey{}, check{acked: 15, ok: 15}
	if rep.failed() || !strings.Contains(rep.markdown(), "**PASS") {
		t.Errorf("a clean report failed:\n%s", rep.markdown())
	}
}
