package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// batch32 against the machine's page cache (issue 18). The goal is batch32
// >= 3 x pipe1, rocketd's own single-message pipelined rate. Every message
// stored grows the page cache by its record, and what one GiB of new page
// cache costs in CPU is a property of the machine, not of the broker: a
// virtual machine that hands freed memory back to its host pays for each
// page it touches again (2-2.5 s of CPU per GiB on the dev VM against
// ~30 ms to overwrite cached pages; bench/results/2026-12-03-asyncprep.md).
// So the run measures that cost on the store's file system (probePageCache)
// and the broker's CPU per message of both shapes, and the results file
// states what the goal's rate needs for the page cache's growth alone.

const (
	// probePageCacheSize is the probe file: written fresh in
	// probePageCacheWrite pwrites, then once more while cached.
	probePageCacheSize  = 256 << 20
	probePageCacheWrite = 1 << 20
	// pageCacheRatio is the goal: batch32 >= pageCacheRatio x pipe1.
	pageCacheRatio = 3
)

// pageCacheCost is the CPU time one GiB of writes costs this machine's
// kernel: into new page-cache pages (grow) and over cached ones (overwrite).
type pageCacheCost struct {
	grow, overwrite time.Duration
}

// probePageCache writes a probePageCacheSize file in dir twice with pwrites
// of probePageCacheWrite bytes, timing the calling thread's CPU (user +
// system) for each pass, and removes the file. The first pass grows the
// page cache, the second overwrites the pages it cached.
func probePageCache(dir string) (pageCacheCost, error) {
	return probePageCacheSized(dir, probePageCacheSize, probePageCacheWrite)
}

func probePageCacheSized(dir string, size, write int) (pageCacheCost, error) {
	if size < write || write < 1 {
		return pageCacheCost{}, errors.New("page cache probe: size must be at least one write")
	}
	f, err := os.CreateTemp(dir, "pagecache-probe-")
	if err != nil {
		return pageCacheCost{}, fmt.Errorf("page cache probe: %w", err)
	}
	path := f.Name()
	defer os.Remove(path)
	defer f.Close()
	buf := make([]byte, write)
	for i := range buf {
		buf[i] = byte(i)
	}
	// The thread's CPU counts only while the goroutine stays on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pass := func() (time.Duration, error) {
		before, err := threadCPU()
		if err != nil {
			return 0, err
		}
		for off := 0; off+write <= size; off += write {
			if _, err := f.WriteAt(buf, int64(off)); err != nil {
				return 0, fmt.Errorf("page cache probe: write %s: %w", path, err)
			}
		}
		after, err := threadCPU()
		if err != nil {
			return 0, err
		}
		return perGiB(after-before, size), nil
	}
	var c pageCacheCost
	if c.grow, err = pass(); err != nil {
		return pageCacheCost{}, err
	}
	if c.overwrite, err = pass(); err != nil {
		return pageCacheCost{}, err
	}
	return c, nil
}

// threadCPU is the calling thread's user + system CPU time.
func threadCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, fmt.Errorf("page cache probe: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// perGiB scales d, spent on bytes, to one GiB.
func perGiB(d time.Duration, bytes int) time.Duration {
	return time.Duration(float64(d) * float64(1<<30) / float64(bytes))
}

// batchBound holds one set of results' inputs; a figure is 0 when not
// measured.
type batchBound struct {
	pipe1, batch32 metric
	cost           pageCacheCost
}

// batchBoundOf takes the rocketd ASYNC_FLUSH target's figures.
func batchBoundOf(results []*targetResult) (batchBound, bool) {
	for _, r := range results {
		if r.name == "rocketd-async" {
			return batchBound{pipe1: r.metrics["pipe1"], batch32: r.metrics["batch32"], cost: r.pageCache}, true
		}
	}
	return batchBound{}, false
}

// growthPerMessage is the page cache's growth cost of one message's body
// (pipelinedSize bytes: a lower bound, the record adds its header and
// properties).
func (b batchBound) growthPerMessage() time.Duration {
	return b.cost.grow * pipelinedSize / (1 << 30)
}

// goalCores is how many cores the page cache's growth alone takes at the
// goal's rate, pageCacheRatio x pipe1 (0: unknown).
func (b batchBound) goalCores() float64 {
	if b.pipe1.TPS <= 0 || b.cost.grow <= 0 {
		return 0
	}
	return pageCacheRatio * b.pipe1.TPS * b.growthPerMessage().Seconds()
}

// growthShare is the share of the broker's CPU over batch32 that the page
// cache's growth by its bodies accounts for (0: unknown).
func (b batchBound) growthShare() float64 {
	per := b.batch32.ServerCPU
	if per <= 0 || b.cost.grow <= 0 {
		return 0
	}
	return float64(b.growthPerMessage()) / float64(per)
}

// lessGrowth is the broker's CPU per message of m without the page
// cache's growth by its body (0: unknown or not above it).
func (b batchBound) lessGrowth(m metric) time.Duration {
	if m.ServerCPU <= 0 || b.cost.grow <= 0 {
		return 0
	}
	return max(m.ServerCPU-b.growthPerMessage(), 0)
}

// batchSection renders batch32 against pipe1 and the page cache's cost:
// the medians' row and, with several rounds, one row per round. It is
// empty when the run has no rocketd ASYNC_FLUSH batch32 or pipe1.
func (h *harness) batchSection(merged []*targetResult, rounds [][]*targetResult) string {
	b, ok := batchBoundOf(merged)
	if !ok || (b.pipe1.TPS == 0 && b.batch32.TPS == 0) {
		return ""
	}
	var s strings.Builder
	s.WriteString("## batch32 against pipe1 and the page cache\n\n")
	fmt.Fprintf(&s, "Goal: rocketd ASYNC_FLUSH batch32 >= %d x pipe1. Every message stored grows the page cache by its record. The\n", pageCacheRatio)
	fmt.Fprintf(&s, "probe writes a %d MiB file on the store's file system in %d MiB pwrites, with the broker idle after the\n",
		probePageCacheSize>>20, probePageCacheWrite>>20)
	s.WriteString("pipelined shapes, and times its thread's CPU: once into new page-cache pages (grown), once over the pages it\n")
	s.WriteString("cached (overwritten). \"Growth at the goal\" is the cores that growing the page cache by the bodies alone\n")
	fmt.Fprintf(&s, "(%d B a message, a lower bound: records add headers) takes at %d x pipe1; \"growth's share\" is that cost per\n", pipelinedSize, pageCacheRatio)
	s.WriteString("message against the broker's CPU per message over batch32 (its threads' run time from /proc schedstat);\n")
	s.WriteString("\"less growth\" is the broker's CPU per message without it, and pipe1's over batch32's.\n\n")
	s.WriteString("| | pipe1 (msgs/s) | batch32 (msgs/s) | batch32 / pipe1 | broker CPU a message: pipe1 / batch32 (µs) | page cache: grown / overwritten (CPU ms per GiB) | growth's share of batch32's broker CPU | less growth: pipe1 / batch32 (µs), ratio | growth at the goal (cores) |\n")
	s.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	writeRoundRows(&s, "median of the rounds", rounds, func(label string, round []*targetResult) string {
		if round == nil {
			return batchRow(label, b)
		}
		if rb, ok := batchBoundOf(round); ok {
			return batchRow(label, rb)
		}
		return ""
	})
	return s.String()
}

func batchRow(label string, b batchBound) string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	p1, b32 := b.pipe1.ServerCPU, b.batch32.ServerCPU
	row := "| " + label + " |"
	row += cell(b.pipe1.TPS > 0, "%.0f", b.pipe1.TPS)
	row += cell(b.batch32.TPS > 0, "%.0f", b.batch32.TPS)
	row += cell(b.pipe1.TPS > 0 && b.batch32.TPS > 0, "%.2f", b.batch32.TPS/max(b.pipe1.TPS, 1))
	row += cell(p1 > 0 || b32 > 0, "%s / %s", usOrDash(p1), usOrDash(b32))
	row += cell(b.cost.grow > 0, "%.0f / %.0f", ms(b.cost.grow), ms(b.cost.overwrite))
	row += cell(b.growthShare() > 0, "%.0f %%", 100*b.growthShare())
	lp1, lb32 := b.lessGrowth(b.pipe1), b.lessGrowth(b.batch32)
	row += cell(lp1 > 0 && lb32 > 0, "%s / %s, %.2f", usOrDash(lp1), usOrDash(lb32), float64(lp1)/float64(max(lb32, 1)))
	row += cell(b.goalCores() > 0, "%.2f", b.goalCores())
	return row + "\n"
}

// micros is d in microseconds.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// usOrDash renders d in µs, or "-" when not measured.
func usOrDash(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", micros(d))
}
