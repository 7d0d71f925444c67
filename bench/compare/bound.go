package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The SYNC_FLUSH bound (issue 18). Producers that each wait for their
// answer before sending again make P / round trip messages a second. A
// SYNC_FLUSH answer leaves only after an fdatasync that started once the
// record was in the file, so at best every round trip is the ASYNC_FLUSH one
// plus one fdatasync: bound = P / (async round trip + fdatasync). Both
// inputs are measured in the run itself: the round trip as P / the
// ASYNC_FLUSH throughput of the same workload (p1k64), the fdatasync on the
// file system of the SYNC_FLUSH target's store (probeFsync).

const (
	boundWorkload  = "p1k64"
	boundProducers = 64
	// probeFsync's loop: probeWrites writes of probeWriteSize bytes, each
	// followed by one fdatasync, into a file zero-filled and synced first.
	probeWrites    = 1000
	probeWriteSize = 4096
	probeLimit     = 3 * time.Second
)

// syncBound holds the bound's inputs; every figure is 0 when not measured.
type syncBound struct {
	asyncTPS float64       // ASYNC_FLUSH msgs/s of boundWorkload
	fsync    time.Duration // median fdatasync
	syncTPS  float64       // SYNC_FLUSH msgs/s of boundWorkload
}

// ok reports whether every input was measured.
func (b syncBound) ok() bool { return b.asyncTPS > 0 && b.fsync > 0 && b.syncTPS > 0 }

// rtt is the ASYNC_FLUSH round trip: producers / throughput (Little's law
// for a closed loop).
func (b syncBound) rtt() time.Duration {
	if b.asyncTPS <= 0 {
		return 0
	}
	return time.Duration(float64(boundProducers) / b.asyncTPS * float64(time.Second))
}

// bound is producers / (async round trip + one fdatasync), in msgs/s.
func (b syncBound) bound() float64 {
	d := b.rtt() + b.fsync
	if b.asyncTPS <= 0 || b.fsync <= 0 {
		return 0
	}
	return float64(boundProducers) / d.Seconds()
}

// share is the SYNC_FLUSH throughput as a fraction of the bound.
func (b syncBound) share() float64 {
	bound := b.bound()
	if bound <= 0 {
		return 0
	}
	return b.syncTPS / bound
}

// boundOf takes the bound's inputs from one set of results (one round, or
// the medians of all rounds).
func boundOf(results []*targetResult) syncBound {
	var b syncBound
	for _, r := range results {
		switch r.name {
		case "rocketd-async":
			b.asyncTPS = r.metrics[boundWorkload].TPS
		case "rocketd-sync":
			b.syncTPS = r.metrics[boundWorkload].TPS
			b.fsync = r.fsync
		}
	}
	return b
}

// boundSection renders the bound with its inputs: the medians' row, and
// with several rounds one row per round. It is empty when the run has
// neither rocketd target.
func (h *harness) boundSection(merged []*targetResult, rounds [][]*targetResult) string {
	b := boundOf(merged)
	if b.asyncTPS == 0 && b.syncTPS == 0 {
		return ""
	}
	var s strings.Builder
	s.WriteString("## SYNC_FLUSH against its bound\n\n")
	fmt.Fprintf(&s, "%d closed-loop producers make at best %d / (async round trip + one fdatasync) under SYNC_FLUSH:\n",
		boundProducers, boundProducers)
	fmt.Fprintf(&s, "the round trip is %d / the rocketd ASYNC_FLUSH rate of \"%s\" in this run, the fdatasync the median\n",
		boundProducers, workloadTitle(boundWorkload))
	fmt.Fprintf(&s, "of %d writes of %d B, each followed by fdatasync, into a zero-filled, synced file in the SYNC_FLUSH\n",
		probeWrites, probeWriteSize)
	s.WriteString("target's store directory (as the CommitLog writes into prepared segments), taken with the broker idle.\n\n")
	s.WriteString("| | ASYNC_FLUSH (msgs/s) | async round trip (ms) | fdatasync (ms) | bound (msgs/s) | SYNC_FLUSH (msgs/s) | SYNC_FLUSH / bound |\n")
	s.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	writeRoundRows(&s, "median of the rounds' inputs", rounds, func(label string, round []*targetResult) string {
		if round == nil {
			return boundRow(label, b)
		}
		return boundRow(label, boundOf(round))
	})
	if !b.ok() {
		var missing []string
		if b.asyncTPS == 0 {
			missing = append(missing, "the rocketd ASYNC_FLUSH rate (--targets rocketd-async)")
		}
		if b.syncTPS == 0 {
			missing = append(missing, "the rocketd SYNC_FLUSH rate (--targets rocketd-sync)")
		}
		if b.fsync == 0 {
			missing = append(missing, "the fdatasync probe (runs with the rocketd-sync target)")
		}
		fmt.Fprintf(&s, "\nNot computed: this run lacks %s (workload %s).\n", strings.Join(missing, " and "), boundWorkload)
	}
	return s.String()
}

// writeRoundRows writes a section's rows: the one of the medians (labelled
// medians with several rounds, else "this run"; row gets round nil) and,
// with several rounds, one per round; row returns "" for a round it has
// nothing for.
func writeRoundRows(s *strings.Builder, medians string, rounds [][]*targetResult, row func(label string, round []*targetResult) string) {
	if len(rounds) <= 1 {
		s.WriteString(row("this run", nil))
		return
	}
	s.WriteString(row(medians, nil))
	for i, round := range rounds {
		s.WriteString(row(fmt.Sprintf("round %d", i+1), round))
	}
}

// cell renders one table cell: v in format, or "-" when !ok.
func cell(ok bool, format string, v ...any) string {
	if !ok {
		return " - |"
	}
	return " " + fmt.Sprintf(format, v...) + " |"
}

func boundRow(label string, b syncBound) string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	row := "| " + label + " |"
	row += cell(b.asyncTPS > 0, "%.0f", b.asyncTPS)
	row += cell(b.asyncTPS > 0, "%.3f", ms(b.rtt()))
	row += cell(b.fsync > 0, "%.3f", ms(b.fsync))
	row += cell(b.bound() > 0, "%.0f", b.bound())
	row += cell(b.syncTPS > 0, "%.0f", b.syncTPS)
	row += cell(b.ok(), "%.1f %%", 100*b.share())
	return row + "\n"
}

func workloadTitle(id string) string {
	for _, w := range workloads {
		if w.id == id {
			return strings.TrimSuffix(w.title, " (msgs/s)")
		}
	}
	return id
}

// probeFsync measures one fdatasync on dir's file system: n writes of size
// bytes in sequence into a file that was zero-filled and synced first (no
// size or block allocation to journal, as in the CommitLog's prepared
// segments), each followed by fdatasync; it returns the median, and stops
// early after limit. The file is removed.
func probeFsync(dir string, n, size int, limit time.Duration) (time.Duration, error) {
	if n < 1 || size < 1 {
		return 0, errors.New("fsync probe: n and size must be positive")
	}
	f, err := os.CreateTemp(dir, "fsync-probe-")
	if err != nil {
		return 0, fmt.Errorf("fsync probe: %w", err)
	}
	path := f.Name()
	defer os.Remove(path)
	defer f.Close()
	zeros := make([]byte, 1<<20)
	total := int64(n) * int64(size)
	for off := int64(0); off < total; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), total-off)], off); err != nil {
			return 0, fmt.Errorf("fsync probe: zero-fill %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("fsync probe: sync %s: %w", path, err)
	}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	times := make([]time.Duration, 0, n)
	deadline := time.Now().Add(limit)
	for i := 0; i < n; i++ {
		if _, err := f.WriteAt(buf, int64(i)*int64(size)); err != nil {
			return 0, fmt.Errorf("fsync probe: write %s: %w", path, err)
		}
		start := time.Now()
		if err := fdatasync(f); err != nil {
			return 0, fmt.Errorf("fsync probe: fdatasync %s: %w", path, err)
		}
		now := time.Now()
		times = append(times, now.Sub(start))
		if now.After(deadline) {
			break
		}
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// storeProbeDir is where the fdatasync probe writes for a rocketd target:
// its store directory (the CommitLog's file system), else the target's
// directory.
func storeProbeDir(targetDir string) string {
	store := filepath.Join(targetDir, "data", "store")
	if st, err := os.Stat(store); err == nil && st.IsDir() {
		return store
	}
	return targetDir
}
