package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// benchOptions are the flags of `bench produce` and `bench consume`.
type benchOptions struct {
	topic    string
	group    string
	size     int
	workers  int
	duration time.Duration
	count    int64 // 0: run for duration
	mode     string
	batch    int
	tags     string
	rate     int // total msgs/s; 0: as fast as possible
	window   int // async: requests in flight per worker
	topics   int // produce: spread over topics <topic>0..<topic>N-1 (1: the topic itself)

	// consume
	pullBatch     int32
	fromBeginning bool
	suspend       time.Duration
	idle          time.Duration // with --count: stop after this long without a message
	progress      bool

	cpuProfile string // file for a CPU profile of this client ("" = none)
}

// Send modes, as the Java producer names them.
const (
	modeSync   = "sync"
	modeAsync  = "async"
	modeOneway = "oneway"
)

// validateProduce checks the produce flags; durationSet says whether
// --duration was given (it may not be combined with --count).
func (o *benchOptions) validateProduce(durationSet bool) error {
	if err := o.validateCommon(durationSet); err != nil {
		return err
	}
	switch o.mode {
	case modeSync, modeAsync, modeOneway:
	default:
		return fmt.Errorf("--mode %q: want sync, async or oneway", o.mode)
	}
	if o.size < 1 || o.size > 4<<20 {
		return fmt.Errorf("-s %d: message size must be 1 B to 4 MiB (the broker's default maxMessageSize)", o.size)
	}
	if o.workers < 1 || o.workers > 4096 {
		return fmt.Errorf("-w %d: want 1 to 4096 workers", o.workers)
	}
	if o.batch < 1 || o.batch > 1024 {
		return fmt.Errorf("--batch %d: want 1 to 1024 messages per send", o.batch)
	}
	if o.batch*o.size > 4<<20 {
		return fmt.Errorf("--batch %d of %d B is over 4 MiB (the broker's default maxMessageSize)", o.batch, o.size)
	}
	if o.rate < 0 {
		return fmt.Errorf("--rate %d: must not be negative", o.rate)
	}
	if o.rate > 0 && o.rate < o.workers {
		return fmt.Errorf("--rate %d below -w %d: each worker must send at least 1 msg/s", o.rate, o.workers)
	}
	if o.window < 1 {
		return fmt.Errorf("--window %d: want at least 1 request in flight", o.window)
	}
	if o.topics < 1 {
		return fmt.Errorf("--topic-count %d: want at least 1 topic", o.topics)
	}
	return nil
}

// validateConsume checks the consume flags.
func (o *benchOptions) validateConsume(durationSet bool) error {
	if err := o.validateCommon(durationSet); err != nil {
		return err
	}
	if o.pullBatch < 1 || o.pullBatch > 1024 {
		return fmt.Errorf("--pull-batch %d: want 1 to 1024", o.pullBatch)
	}
	if o.idle <= 0 {
		return fmt.Errorf("--idle %s: must be positive", o.idle)
	}
	return nil
}

func (o *benchOptions) validateCommon(durationSet bool) error {
	if o.topic == "" {
		return fmt.Errorf("-t: topic is required")
	}
	if o.count < 0 {
		return fmt.Errorf("--count %d: must not be negative", o.count)
	}
	if o.count > 0 && durationSet {
		return fmt.Errorf("give --duration or --count, not both")
	}
	if o.count == 0 && o.duration <= 0 {
		return fmt.Errorf("--duration %s: must be positive", o.duration)
	}
	return nil
}

func newBenchCommand(c *ctl) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench produce|consume",
		Short: "Measure send and pull throughput and latency against a NameServer's brokers",
		Long: `Drive the brokers of a topic with the remoting protocol (SEND_MESSAGE_V2,
SEND_BATCH_MESSAGE, PULL_MESSAGE), the same way for rocketd and Apache
RocketMQ, print a progress line each second and a summary at the end: TPS,
MB/s, latency percentiles (HdrHistogram) and failures by response code.`,
	}
	cmd.AddCommand(newBenchProduceCommand(c), newBenchConsumeCommand(c))
	return cmd
}

func newBenchProduceCommand(c *ctl) *cobra.Command {
	o := benchOptions{}
	cmd := &cobra.Command{
		Use:   "produce -t T [-s 1024] [-w 1] [--duration 10s | --count N] [--mode sync|async|oneway] [--batch 1] [--rate R]",
		Short: "Send messages as fast as possible (or at --rate) and report TPS and send latency",
		Long: `Send messages of -s bytes from -w workers, each with its own connection, for
--duration or until --count messages were sent.

  --mode sync    each worker waits for the answer before the next send
  --mode async   each worker keeps up to --window sends in flight
  --mode oneway  no answer (no latency; failures are transport errors only)

--batch N > 1 sends N messages per SEND_BATCH_MESSAGE. --rate R paces the
workers to R msgs/s in total; latency is then measured from when a send was
due, so a stalled broker shows in the percentiles (no coordinated omission).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validateProduce(cmd.Flags().Changed("duration")); err != nil {
				return fmt.Errorf("bench produce: %w", err)
			}
			return c.runBench(cmd, &o, c.benchProduce)
		},
	}
	f := cmd.Flags()
	addBenchCommonFlags(f, &o)
	f.IntVarP(&o.size, "size", "s", 1024, "message body size in bytes")
	f.IntVarP(&o.workers, "workers", "w", 1, "producer goroutines, each with its own connection")
	f.StringVar(&o.mode, "mode", modeSync, "send mode: sync, async or oneway")
	f.IntVar(&o.batch, "batch", 1, "messages per send (>1: SEND_BATCH_MESSAGE)")
	f.StringVar(&o.tags, "tags", "", "message tag")
	f.StringVarP(&o.group, "group", "g", "rocketctl_bench_producer", "producer group")
	f.IntVar(&o.rate, "rate", 0, "total target msgs/s (0: as fast as possible)")
	f.IntVar(&o.window, "window", 16, "async: sends in flight per worker")
	f.IntVar(&o.topics, "topic-count", 1, "spread the sends over the topics <topic>0 .. <topic>N-1 (which must exist) instead of -t itself")
	return cmd
}

func newBenchConsumeCommand(c *ctl) *cobra.Command {
	o := benchOptions{}
	cmd := &cobra.Command{
		Use:   "consume -t T [-g G] [--from-beginning] [--duration 10s | --count N]",
		Short: "Pull every queue of a topic with long polling and report TPS and end-to-end latency",
		Long: `Pull every readable queue of the topic (one long-polling loop per queue, like
a push consumer) for --duration or until --count messages were received, and
report TPS, MB/s and the end-to-end latency: receipt time minus the message's
born timestamp (milliseconds, as producers stamp it; producer and consumer
clocks must agree). Starts at each queue's end unless --from-beginning. No
offset is committed. With --count the run also ends after --idle without a
message (after the first one, or from the start with --from-beginning), so a
topic holding fewer than --count messages does not keep it waiting. TPS is
counted from the first pull that returned messages to the last receipt, not
over the idle time around them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validateConsume(cmd.Flags().Changed("duration")); err != nil {
				return fmt.Errorf("bench consume: %w", err)
			}
			return c.runBench(cmd, &o, c.benchConsume)
		},
	}
	f := cmd.Flags()
	addBenchCommonFlags(f, &o)
	f.StringVarP(&o.group, "group", "g", "rocketctl_bench_consumer", "consumer group")
	f.Int32Var(&o.pullBatch, "pull-batch", 32, "messages per pull (maxMsgNums)")
	f.BoolVar(&o.fromBeginning, "from-beginning", false, "start at each queue's min offset (a backlog) instead of its end")
	f.DurationVar(&o.suspend, "suspend", 2*time.Second, "how long the broker may hold a pull with no message")
	f.DurationVar(&o.idle, "idle", 5*time.Second, "with --count, stop after this long without a new message")
	return cmd
}

func addBenchCommonFlags(f interface {
	StringVarP(*string, string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	Int64Var(*int64, string, int64, string)
	BoolVar(*bool, string, bool, string)
	StringVar(*string, string, string, string)
}, o *benchOptions) {
	f.StringVarP(&o.topic, "topic", "t", "BenchmarkTest", "topic name")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "how long to run (unless --count)")
	f.Int64Var(&o.count, "count", 0, "stop after this many messages instead of after --duration")
	f.BoolVar(&o.progress, "progress", true, "print a progress line each second (on stderr)")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the bench client itself to this file")
}

// startCPUProfile starts --cpuprofile; the returned function stops it. The
// client's own cost matters: it shares the machine with the broker it
// measures.
func (o *benchOptions) startCPUProfile() (func(), error) {
	if o.cpuProfile == "" {
		return func() {}, nil
	}
	f, err := os.Create(o.cpuProfile)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// benchGCPercent is the bench client's GOGC unless the environment sets
// one. Its live heap is a few MiB (the histograms, one request per
// worker), so at the default of 100 a 20k msgs/s run collected 5 to 7
// times a second; each cycle stops the client, answers included, and
// that pause would count as the broker's latency. At 400 the heap stays
// in the tens of MiB.
const benchGCPercent = 400

// benchGC sets benchGCPercent when GOGC is not set.
func benchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(benchGCPercent)
	}
}

// runBench runs a validated bench until it ends or SIGINT/SIGTERM, under
// --cpuprofile when set, and writes its report.
func (c *ctl) runBench(cmd *cobra.Command, o *benchOptions,
	run func(context.Context, benchOptions, io.Writer) (*benchReport, error)) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	benchGC()
	stopProfile, err := o.startCPUProfile()
	if err != nil {
		return err
	}
	cpu0 := processCPU()
	rep, err := run(ctx, *o, cmd.ErrOrStderr())
	stopProfile()
	if err != nil {
		return err
	}
	rep.CPUSeconds = (processCPU() - cpu0).Seconds()
	return c.writeBenchReport(rep)
}

// processCPU is this process's user + system CPU time so far (0 if the
// system does not say).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (c *ctl) writeBenchReport(rep *benchReport) error {
	if c.json {
		return c.writeJSON(rep)
	}
	return rep.writeText(c.out)
}

// runProgress prints a progress line each second until stop is closed; the
// returned function stops it and waits.
func runProgress(kind string, rec *latencyRecorder, total func() int64, w io.Writer, enabled bool) func() {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if !enabled {
			<-quit
			return
		}
		start := time.Now()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		last := start
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				iv := rec.tick()
				// Per second, whatever the ticker's drift.
				iv.count = int64(float64(iv.count) / now.Sub(last).Seconds())
				last = now
				fmt.Fprintln(w, progressLine(kind, now.Sub(start), iv, total()))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// benchContext is ctx ended after o.duration when no --count was given.
func benchContext(ctx context.Context, o benchOptions) (context.Context, context.CancelFunc) {
	if o.count > 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, o.duration)
}
