// Command failover is the controller-mode fail-over benchmark of issue 17:
// N cycles of kill -9 of the master under load, each followed by a
// read-back of every acknowledged message.
//
//	go run ./bench/failover --cycles 20 --out /tmp/failover.md
//	go test -run TestFailoverShort ./bench/failover     # the short version (2 cycles)
//
// It runs, as separate rocketd processes on loopback with ephemeral ports,
// three `rocketd controller` nodes, a NameServer and one broker set of
// three brokers in controller mode (allAckInSyncStateSet=true: a send is
// answered SEND_OK only once every SyncStateSet member has it). Load:
// --producers goroutines share one producer of the official Go client
// (github.com/apache/rocketmq-client-go/v2, retries off: a duplicate is
// then the brokers' doing) sending unique keys whose body derives from the
// key; every SEND_OK is recorded with its queue and offset.
//
// A cycle: load for --steady; kill -9 of the master the controller names;
// then it measures
//
//	elect   kill -> the controller names a new master (GET_REPLICA_INFO)
//	write   kill -> the first SEND_OK from the new master to a probe that
//	        sends every 20 ms to the master the controller names (what
//	        rocketd's fail-over costs a client that follows the route at once)
//	client  kill -> the first SEND_OK of the Go client for a send begun
//	        after the kill (the Go client rereads routes every 30 s: this
//	        is bounded by that period, not by the fail-over)
//
// then restarts the killed broker (it keeps its brokerId and rejoins as a
// slave), waits until the SyncStateSet has three members again, and reads
// every queue of the topic from the new master (PULL_MESSAGE with rocketd's
// remoting client), checking every message acknowledged so far: lost
// (must be 0), duplicated, moved. The report is a Markdown table of the
// cycles with the median and worst times, printed and written to --out;
// the exit status is 1 when anything acknowledged was lost.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

type options struct {
	cycles    int
	producers int
	steady    time.Duration
	bodySize  int
	out       string
	bin       string
	dir       string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("failover", flag.ContinueOnError)
	fs.IntVar(&o.cycles, "cycles", 20, "kill -9 cycles")
	fs.IntVar(&o.producers, "producers", 8, "sending goroutines (one Go client producer)")
	fs.DurationVar(&o.steady, "steady", 3*time.Second, "load before each kill")
	fs.IntVar(&o.bodySize, "body", 256, "message body size")
	fs.StringVar(&o.out, "out", "", "also write the report to this file")
	fs.StringVar(&o.bin, "bin", "", "rocketd binary (default: built from ./cmd/rocketd)")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a temporary one, removed at the end)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %v", fs.Args())
	case o.cycles < 1:
		return o, fmt.Errorf("--cycles %d: at least 1", o.cycles)
	case o.producers < 1:
		return o, fmt.Errorf("--producers %d: at least 1", o.producers)
	case o.bodySize < 32 || o.bodySize > 4096:
		return o, fmt.Errorf("--body %d: 32..4096", o.bodySize)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, o, os.Stderr)
	if rep != nil {
		text := rep.markdown()
		fmt.Print(text)
		if o.out != "" {
			if werr := os.WriteFile(o.out, []byte(text), 0o644); werr != nil {
				fmt.Fprintln(os.Stderr, "failover:", werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
	if rep.lost() > 0 {
		os.Exit(1)
	}
}

// run builds rocketd when needed, runs the cycles and returns the report
// (also when a cycle failed: what ran is reported).
func run(ctx context.Context, o options, logw *os.File) (*report, error) {
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "rocketd-failover-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(dir, "rocketd")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/rocketd/rocketd/cmd/rocketd")
		cmd.Stdout, cmd.Stderr = logw, logw
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("build rocketd: %w", err)
		}
	}
	c, err := startCluster(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	return runCycles(ctx, c, o, logw)
}
