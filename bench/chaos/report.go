package main

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report is a chaos run's outcome, printed and written as Markdown.
type report struct {
	opts              *options
	started, finished time.Time
	skipped           string
	runs              []*flushRun
}

// failed reports whether any run lost, damaged or could not read an
// acknowledged message, or stopped on an error.
func (r *report) failed() bool {
	for _, fr := range r.runs {
		if fr.err != nil || fr.failed() {
			return true
		}
	}
	return false
}

func (fr *flushRun) failed() bool {
	for _, c := range fr.cycles {
		if c.check.failed() {
			return true
		}
	}
	return len(fr.lostEver) > 0
}

func (c *cycleResult) summary() string {
	s := fmt.Sprintf("acked %d, lost %d, duplicated %d, moved %d, not-acked-stored %d, expired %d, recovery %s",
		c.acked, c.check.lost, c.check.duplicated, c.check.moved, c.check.unackedStored, c.check.expired, c.recoveryText())
	if c.check.readErr != nil {
		s += ", READ INCOMPLETE: " + c.check.readErr.Error()
	}
	if len(c.notes) > 0 {
		s += " (" + strings.Join(c.notes, "; ") + ")"
	}
	return s
}

func (c *cycleResult) recoveryText() string {
	if !c.recovered {
		return "none"
	}
	return fmt.Sprintf("%d ms", c.recovery.Milliseconds())
}

func (c *cycleResult) outcomeText() string { return countsText(c.outcomes) }

// countsText writes counts by name in name order ("-" when none).
func countsText(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// storedText is the stored-but-not-acknowledged count with the sends'
// outcomes.
func (c check) storedText() string {
	if c.unackedStored == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", c.unackedStored, countsText(c.storedBy))
}

func (r *report) markdown() string {
	var b strings.Builder
	o := r.opts
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# rocketd chaos run\n\n")
	fmt.Fprintf(&b, "Command: `%s`\n\n", o.command)
	fmt.Fprintf(&b, "Started %s, took %s, on %s (%d CPUs, %s/%s). Load: %d producer goroutines of one official Go client "+
		"(rocketmq-client-go/v2, retries off), %d-byte bodies, at most %d messages a cycle; %s steady load before each fault "+
		"and after each recovery, faults of %s; mappedFileSizeCommitLog 16 MiB, the master's store on a %d MiB ext4 loop "+
		"file system when disk cycles run. Master role %s; cleanFileForciblyEnable=%t.\n\n",
		r.started.UTC().Format(time.RFC3339), r.finished.Sub(r.started).Round(time.Second), host, runtime.NumCPU(),
		runtime.GOOS, runtime.GOARCH, o.producers, o.bodySize, o.perCycle, o.steady, o.fault, o.diskMiB, o.role, o.cleanForcibly)
	if r.skipped != "" {
		fmt.Fprintf(&b, "**%s**\n\n", r.skipped)
	}
	b.WriteString("Columns: *acked* = SEND_OK in the cycle; *not acked* = the cycle's other outcomes (not counted as acked); " +
		"after each cycle every message acknowledged so far (all cycles) is read back by position from the master: " +
		"*lost* = found nowhere (at or above its queue's min offset), *dup* = a key found more than once, " +
		"*moved* = found but not at the queue offset SEND_OK gave, *stored¬acked* = not acknowledged yet stored, " +
		"*expired* = below its queue's min offset (deleted by the store's disk-space cleanup, by design), " +
		"*recovery* = end of the fault (restart, space freed, SIGCONT) to a probe's SEND_OK, " +
		"*load* = to the load's first SEND_OK.\n\n")
	for _, fr := range r.runs {
		fmt.Fprintf(&b, "## %s, %s\n\n", fr.flush, fr.role)
		b.WriteString("| cycle | kind | acked | not acked | lost | dup | moved | stored¬acked | expired | recovery | load | notes |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		var acked int
		var recov []time.Duration
		restarts, readErrs := 0, 0
		byKind := map[string][]time.Duration{}
		for _, c := range fr.cycles {
			acked += c.acked
			load := "-"
			if c.loadResumed {
				load = fmt.Sprintf("%d ms", c.loadRecovery.Milliseconds())
			}
			notes := strings.Join(c.notes, "; ")
			if c.check.readErr != nil {
				readErrs++
				notes = strings.TrimPrefix(notes+"; READ INCOMPLETE: "+c.check.readErr.Error(), "; ")
			}
			if c.check.holes > 0 {
				// Offsets in [min, max) the broker skipped: a message was
				// indexed there once; lost keys say whether it was acked.
				notes = strings.TrimPrefix(fmt.Sprintf("%s; %d queue offsets without a message", notes, c.check.holes), "; ")
			}
			if c.check.corrupt > 0 {
				notes = strings.TrimPrefix(fmt.Sprintf("%s; %d with a wrong body", notes, c.check.corrupt), "; ")
			}
			fmt.Fprintf(&b, "| %d | %s | %d | %s | %d | %d | %d | %s | %d | %s | %s | %s |\n", c.n, c.kind, c.acked, c.outcomeText(),
				c.check.lost, c.check.duplicated, c.check.moved, c.check.storedText(), c.check.expired, c.recoveryText(), load,
				strings.ReplaceAll(notes, "|", "/"))
			if c.recovered {
				recov = append(recov, c.recovery)
				byKind[c.kind] = append(byKind[c.kind], c.recovery)
			}
			if c.restarted {
				restarts++
			}
		}
		last := check{}
		if n := len(fr.cycles); n > 0 {
			last = fr.cycles[n-1].check
		}
		fmt.Fprintf(&b, "\n**Totals**: %d cycles, %d acked; after the last cycle %d acked so far: %d at their position, "+
			"%d lost, %d duplicated, %d moved, %s stored but not acked, %d expired; %d keys ever found lost; "+
			"%d incomplete reads; %d master restarts because sends did not resume.",
			len(fr.cycles), acked, last.acked, last.ok, last.lost, last.duplicated, last.moved, last.storedText(), last.expired,
			len(fr.lostEver), readErrs, restarts)
		for _, k := range slices.Sorted(maps.Keys(byKind)) {
			d := byKind[k]
			fmt.Fprintf(&b, " Recovery %s: median %d ms, max %d ms.", k, median(d).Milliseconds(), slices.Max(d).Milliseconds())
		}
		b.WriteString("\n")
		if fr.err != nil {
			fmt.Fprintf(&b, "\n**Run stopped**: %v\n", fr.err)
		}
		if len(fr.lostEver) > 0 {
			byCycle := map[int]int{}
			for _, l := range fr.lostEver {
				byCycle[l.cycle]++
			}
			b.WriteString("\nLost keys by the cycle that acknowledged them:")
			for _, n := range slices.Sorted(maps.Keys(byCycle)) {
				fmt.Fprintf(&b, " cycle %d (%s) %d;", n, fr.cycles[n-1].kind, byCycle[n])
			}
			b.WriteString("\n\nLost keys (first 10):\n\n")
			keys := slices.Sorted(maps.Keys(fr.lostEver))
			for _, k := range keys[:min(10, len(keys))] {
				fmt.Fprintf(&b, "- `%s` %s\n", k, fr.lostEver[k].text)
			}
		}
		b.WriteString("\n")
	}
	verdict := "PASS: no acknowledged message lost, damaged, duplicated or moved; every read complete."
	if r.failed() {
		verdict = "FAIL: see lost / dup / moved / notes above."
	}
	fmt.Fprintf(&b, "**%s**\n", verdict)
	return b.String()
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
