package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/rocketd/rocketd/bench/internal/repo"
)

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	o.command = "go run ./bench/chaos " + strings.Join(os.Args[1:], " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	rep, err := run(ctx, o)
	if rep != nil && len(rep.runs) > 0 {
		fmt.Println(rep.markdown())
		if o.out != "" {
			if werr := os.WriteFile(o.out, []byte(rep.markdown()), 0o644); werr != nil {
				err = errors.Join(err, werr)
			} else {
				o.logf("report written to %s", o.out)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	if rep.failed() {
		fmt.Fprintln(os.Stderr, "chaos: FAILED: acknowledged messages lost, damaged or unreadable (see the report)")
		os.Exit(1)
	}
}

// The cycle kinds.
const (
	kindKill = "kill" // kill -9 of the master, restart
	kindDisk = "disk" // the master's file system full, then freed
	kindStop = "stop" // SIGSTOP of the slave, then SIGCONT
)

var allKinds = []string{kindKill, kindDisk, kindStop}

// options is one chaos run.
type options struct {
	cycles         int
	kinds          []string
	flushes        []string
	role           string
	seed           int64
	producers      int
	bodySize       int
	perCycle       int
	steady         time.Duration // load before the fault and after the recovery
	fault          time.Duration // how long the fault lasts under load
	refuseTimeout  time.Duration // disk: longest wait for a refused send once full
	recoverTimeout time.Duration
	diskMiB        int64
	out            string
	keep           bool
	cleanForcibly  bool   // cleanFileForciblyEnable
	rocketd        string // a built rocketd ("" = go build it)
	ci             bool   // CI=true: a cycle kind this machine cannot run is a failure

	command string    // for the report
	log     io.Writer // progress
}

func parseFlags(args []string) (*options, error) {
	o := &options{log: os.Stderr, ci: os.Getenv("CI") == "true"}
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.IntVar(&o.cycles, "cycles", 100, "cycles per flush type")
	kinds := fs.String("kinds", strings.Join(allKinds, ","), "cycle kinds, comma separated: kill (kill -9 of the master), disk (master's disk full then freed), stop (SIGSTOP/SIGCONT of the slave)")
	flushes := fs.String("flush", "ASYNC_FLUSH,SYNC_FLUSH", "flushDiskType values to run, comma separated; each gets a fresh cluster and --cycles cycles")
	fs.StringVar(&o.role, "role", "SYNC_MASTER", "master's brokerRole: SYNC_MASTER or ASYNC_MASTER (with a slave), or none (one broker; no stop cycles)")
	fs.Int64Var(&o.seed, "seed", 0, "0: kinds round-robin in --kinds order; otherwise a random kind each cycle from this seed")
	fs.IntVar(&o.producers, "producers", 4, "sending goroutines (one official Go client producer)")
	fs.IntVar(&o.bodySize, "body", 256, "message body bytes (under 4096: the client compresses from there)")
	fs.IntVar(&o.perCycle, "max-per-cycle", 50_000, "most messages one cycle sends")
	fs.DurationVar(&o.steady, "steady", time.Second, "load before each fault and after each recovery")
	fs.DurationVar(&o.fault, "fault", 3*time.Second, "how long each fault lasts under load")
	fs.DurationVar(&o.refuseTimeout, "refuse-timeout", 20*time.Second, "disk: longest wait, disk full, for the broker to refuse a send")
	fs.DurationVar(&o.recoverTimeout, "recover-timeout", 30*time.Second, "longest wait for sends to succeed after a fault; then the master is restarted")
	fs.Int64Var(&o.diskMiB, "disk-mib", 256, "size of the master's ext4 file system (MiB)")
	fs.StringVar(&o.out, "out", "", "also write the report (Markdown) to this file")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (logs, stores)")
	fs.BoolVar(&o.cleanForcibly, "clean-forcibly", false, "cleanFileForciblyEnable: let a full disk delete segments before their retention time (their messages then count as expired, not lost); off, the broker refuses puts instead")
	fs.StringVar(&o.rocketd, "rocketd", "", "a rocketd binary to run (default: go build ./cmd/rocketd)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	for _, k := range strings.Split(*kinds, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(allKinds, k) {
			return nil, fmt.Errorf("--kinds: unknown kind %q (want %s)", k, strings.Join(allKinds, ", "))
		}
		o.kinds = append(o.kinds, k)
	}
	for _, f := range strings.Split(*flushes, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		if f != "ASYNC_FLUSH" && f != "SYNC_FLUSH" {
			return nil, fmt.Errorf("--flush: %q: want ASYNC_FLUSH or SYNC_FLUSH", f)
		}
		o.flushes = append(o.flushes, f)
	}
	switch o.role {
	case "SYNC_MASTER", "ASYNC_MASTER":
	case "none":
		if slices.Contains(o.kinds, kindStop) {
			o.kinds = slices.DeleteFunc(o.kinds, func(k string) bool { return k == kindStop })
			if len(o.kinds) == 0 {
				return nil, errors.New("--role none has no slave to stop: give --kinds kill or disk")
			}
		}
	default:
		return nil, fmt.Errorf("--role %q: want SYNC_MASTER, ASYNC_MASTER or none", o.role)
	}
	if o.cycles < 1 || o.producers < 1 || o.perCycle < 1 || o.diskMiB < 64 || o.bodySize < 32 || o.bodySize >= 4096 {
		return nil, errors.New("--cycles, --producers and --max-per-cycle must be at least 1, --disk-mib at least 64, --body 32..4095")
	}
	return o, nil
}

func (o *options) logf(format string, args ...any) {
	fmt.Fprintf(o.log, "%s chaos: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// run builds rocketd when needed and runs the cycles once per flush type.
// The report is returned even with an error (what ran so far).
func run(ctx context.Context, o *options) (*report, error) {
	rlog.SetLogLevel("error")
	work, err := os.MkdirTemp("", "rocketd-chaos-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		o.logf("work directory %s kept", work)
	} else {
		defer os.RemoveAll(work)
	}
	if o.rocketd == "" {
		root, err := repo.Root()
		if err != nil {
			return nil, err
		}
		o.rocketd = filepath.Join(work, "rocketd")
		o.logf("building rocketd")
		if out, err := exec.CommandContext(ctx, "go", "build", "-C", root, "-o", o.rocketd, "./cmd/rocketd").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/rocketd: %w\n%s", err, out)
		}
	}
	rep := &report{opts: o, started: time.Now()}
	kinds := o.kinds
	if slices.Contains(kinds, kindDisk) {
		why := diskUnavailable()
		if why == "" {
			// Root and the tools are not enough (a container may have no
			// loop devices): mount a small one to know.
			if l, err := mountLoop(ctx, work, 64<<20); err != nil {
				why = err.Error()
			} else if err := l.unmount(); err != nil {
				return rep, fmt.Errorf("unmount the trial file system: %w", err)
			}
		}
		if why != "" {
			if o.ci {
				return rep, fmt.Errorf("the disk-full cycle cannot run here (%s), and CI=true makes that a failure", why)
			}
			rep.skipped = "disk-full cycles skipped: " + why
			o.logf("%s", rep.skipped)
			kinds = slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return k == kindDisk })
			if len(kinds) == 0 {
				return rep, errors.New("no cycle kind left to run")
			}
		}
	}
	for _, flush := range o.flushes {
		dir := filepath.Join(work, strings.ToLower(flush))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return rep, err
		}
		fr := &flushRun{flush: flush, role: o.role, kinds: kinds}
		rep.runs = append(rep.runs, fr)
		o.logf("== %s, %s, %d cycles of %s", flush, o.role, o.cycles, strings.Join(kinds, ", "))
		fr.err = runFlush(ctx, o, fr, dir)
		if fr.err != nil {
			o.logf("%s: %v", flush, fr.err)
		}
		if ctx.Err() != nil {
			rep.finished = time.Now()
			return rep, ctx.Err()
		}
	}
	rep.finished = time.Now()
	return rep, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
