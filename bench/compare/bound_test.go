package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestSyncBound checks the bound with issue 18's figures: 64 producers at
// 70,687 msgs/s ASYNC_FLUSH is a 0.9054 ms round trip; with a 190 us
// fdatasync the bound is 64 / 1.0954 ms = 58,425 msgs/s, and 46,265 msgs/s
// SYNC_FLUSH is 79.2 % of it.
func TestSyncBound(t *testing.T) {
	b := syncBound{asyncTPS: 70687, fsync: 190 * time.Microsecond, syncTPS: 46265}
	if !b.ok() {
		t.Fatal("ok() = false with every input")
	}
	if got := b.rtt(); got < 905*time.Microsecond || got > 906*time.Microsecond {
		t.Errorf("rtt = %s, want 0.9054 ms", got)
	}
	if got := b.bound(); math.Abs(got-58425) > 5 {
		t.Errorf("bound = %.1f, want ~58425", got)
	}
	if got := b.share(); math.Abs(got-0.7919) > 0.0005 {
		t.Errorf("share = %.4f, want ~0.7919", got)
	}
	for _, missing := range []syncBound{
		{fsync: time.Millisecond, syncTPS: 1},
		{asyncTPS: 1, syncTPS: 1},
		{asyncTPS: 1, fsync: time.Millisecond},
	} {
		if missing.ok() || missing.share() != 0 {
			t.Errorf("%+v: ok %v share %v, want false 0", missing, missing.ok(), missing.share())
		}
	}
}

// TestBoundSection checks the section's inputs come from the right targets
// and workload, that several rounds give the medians' row plus one row per
// round, and that missing inputs are named.
func TestBoundSection(t *testing.T) {
	h := &harness{}
	round := func(async, sync float64, fsync time.Duration) []*targetResult {
		return []*targetResult{
			{name: "rocketd-async", metrics: map[string]metric{"p1k64": {TPS: async}, "p1k1": {TPS: 1}}},
			{name: "rocketd-sync", fsync: fsync, metrics: map[string]metric{"p1k64": {TPS: sync}}},
			{name: "nats-always", metrics: map[string]metric{"p1k64": {TPS: 5}}},
		}
	}
	rounds := [][]*targetResult{
		round(64000, 40000, 200*time.Microsecond),
		round(80000, 50000, 100*time.Microsecond),
		round(70000, 45000, 150*time.Microsecond),
	}
	merged := mergeRounds(rounds)
	b := boundOf(merged)
	if b.asyncTPS != 70000 || b.syncTPS != 45000 || b.fsync != 150*time.Microsecond {
		t.Fatalf("medians: %+v", b)
	}
	s := h.boundSection(merged, rounds)
	// 64 / 70000 = 0.914 ms; + 0.150 = 1.064 ms; 64 / that = 60134;
	// 45000 / 60134 = 74.8 %.
	for _, want := range []string{
		"| median of the rounds' inputs | 70000 | 0.914 | 0.150 | 60134 | 45000 | 74.8 % |",
		"| round 1 | 64000 | 1.000 | 0.200 | 53333 | 40000 | 75.0 % |",
		"| round 3 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Not computed") {
		t.Errorf("complete inputs reported missing:\n%s", s)
	}

	only := h.boundSection(round(0, 45000, 150*time.Microsecond)[1:], [][]*targetResult{nil})
	if !strings.Contains(only, "| this run | - | - | 0.150 | - | 45000 | - |") || !strings.Contains(only, "--targets rocketd-async") {
		t.Errorf("without the async target:\n%s", only)
	}
	if s := h.boundSection(round(0, 0, 0)[2:], nil); s != "" {
		t.Errorf("no rocketd target, section %q", s)
	}
}

// TestProbeFsync runs the probe for real, briefly.
func TestProbeFsync(t *testing.T) {
	d, err := probeFsync(t.TempDir(), 20, 4096, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 || d > 10*time.Second {
		t.Errorf("median fdatasync %s", d)
	}
	if _, err := probeFsync(t.TempDir(), 0, 4096, time.Minute); err == nil {
		t.Error("n = 0: no error")
	}
}
