package main

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestBatchBound checks the derived figures: 2 s of CPU per GiB grown is
// 1.907 µs per 1 KiB body; at 3 x 200,000 msgs/s that is 1.144 cores, and
// against 4 µs of broker CPU per batch32 message a 47.7 % share.
func TestBatchBound(t *testing.T) {
	b := batchBound{
		pipe1:   metric{TPS: 200000, ServerCPU: 6 * time.Microsecond},
		batch32: metric{TPS: 400000, ServerCPU: 4 * time.Microsecond},
		cost:    pageCacheCost{grow: 2 * time.Second, overwrite: 30 * time.Millisecond},
	}
	if got := b.growthPerMessage(); got < 1907*time.Nanosecond || got > 1908*time.Nanosecond {
		t.Errorf("growth per message = %s, want 1.907 µs", got)
	}
	if got := b.goalCores(); math.Abs(got-1.1444) > 0.001 {
		t.Errorf("goal cores = %.4f, want ~1.1444", got)
	}
	if got := b.growthShare(); math.Abs(got-0.4768) > 0.001 {
		t.Errorf("growth share = %.4f, want ~0.4768", got)
	}
	for _, missing := range []batchBound{
		{batch32: b.batch32, cost: b.cost},
		{pipe1: b.pipe1, batch32: b.batch32},
	} {
		if missing.goalCores() != 0 {
			t.Errorf("%+v: goal cores %v, want 0", missing, missing.goalCores())
		}
	}
	if (batchBound{pipe1: b.pipe1, batch32: metric{TPS: 1}, cost: b.cost}).growthShare() != 0 {
		t.Error("growth share without batch32's CPU")
	}
}

// TestBatchSection checks that the section takes rocketd ASYNC_FLUSH's
// figures, gives the medians' row and one row per round, and is absent
// without them.
func TestBatchSection(t *testing.T) {
	h := &harness{}
	round := func(pipe1, batch32 float64, grow time.Duration) []*targetResult {
		return []*targetResult{
			{name: "nats-default", metrics: map[string]metric{"pipe1": {TPS: 1}, "batch32": {TPS: 2}}},
			{name: "rocketd-async", pageCache: pageCacheCost{grow: grow, overwrite: 25 * time.Millisecond},
				metrics: map[string]metric{
					"pipe1":   {TPS: pipe1, ServerCPU: 6 * time.Microsecond},
					"batch32": {TPS: batch32, ServerCPU: 4 * time.Microsecond},
				}},
		}
	}
	rounds := [][]*targetResult{
		round(150000, 300000, 3*time.Second),
		round(200000, 400000, 2*time.Second),
		round(180000, 540000, 1*time.Second),
	}
	s := h.batchSection(mergeRounds(rounds), rounds)
	for _, want := range []string{
		// 2 s per GiB: 1.907 µs a message; 6 - 1.907 = 4.09, 4 - 1.907 =
		// 2.09, ratio 1.96.
		"| median of the rounds | 180000 | 400000 | 2.22 | 6.00 / 4.00 | 2000 / 25 | 48 % | 4.09 / 2.09, 1.96 | 1.03 |",
		"| round 1 | 150000 | 300000 | 2.00 | 6.00 / 4.00 | 3000 / 25 | 72 % | 3.14 / 1.14, 2.76 | 1.29 |",
		"| round 3 | 180000 | 540000 | 3.00 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	if s := h.batchSection(round(1, 2, 0)[:1], nil); s != "" {
		t.Errorf("no rocketd-async target, section %q", s)
	}
	one := h.batchSection(round(150000, 0, 0)[1:], [][]*targetResult{nil})
	if !strings.Contains(one, "| this run | 150000 | - | - | 6.00 / 4.00 | - | - | - | - |") {
		t.Errorf("pipe1 only:\n%s", one)
	}
}

// TestProbePageCache runs the probe for real on a small file, and checks
// that it leaves nothing behind and refuses sizes without a whole write.
func TestProbePageCache(t *testing.T) {
	dir := t.TempDir()
	c, err := probePageCacheSized(dir, 8<<20, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// Either pass may round to 0 on a coarse clock; neither can be
	// negative or absurd (8 MiB scaled to 1 GiB is x128).
	for _, d := range []time.Duration{c.grow, c.overwrite} {
		if d < 0 || d > 10*time.Minute {
			t.Errorf("cost %+v", c)
		}
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("probe left %v (%v)", left, err)
	}
	if _, err := probePageCacheSized(dir, 1<<10, 1<<20); err == nil {
		t.Error("size below one write: no error")
	}
}
