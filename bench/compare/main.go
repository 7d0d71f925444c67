package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rocketd/rocketd/bench/internal/repo"
	"github.com/rocketd/rocketd/internal/config"
)

func main() {
	if len(os.Args) > 1 {
		// The child processes this binary runs as.
		var err error
		switch os.Args[1] {
		case "nats-server":
			err = natsServerMain(os.Args[2:])
		case "rocketd-pprof":
			err = rocketdPprofMain(os.Args[2:])
		case "scale":
			err = scaleMain(os.Args[2:])
		default:
			goto harnessMain
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, os.Args[1]+":", err)
			os.Exit(1)
		}
		return
	}
harnessMain:
	h, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := h.run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// harness is one comparison run.
type harness struct {
	root        string // repository root
	targets     []string
	duration    time.Duration // per measured workload
	warmup      time.Duration
	backlog     int           // messages in the consume backlog
	fillLimit   time.Duration // longest a backlog fill may take
	rate        int
	quick       bool
	out         string // results file ("" none)
	rocketmqLib string
	profileDir  string
	keep        bool
	only        map[string]bool // --workloads; nil: all
	// metricsPprof: rocketd serves pprof on its metrics listener (the
	// scale curves force a GC before reading the RSS).
	metricsPprof bool
	// gRPC targets (workloads_grpc.go)
	grpcProducers int
	grpcBacklog   int
	sdkCallLog    bool // keep the Go SDK's per-RPC info log (--sdk-call-log)
	rounds        int  // the target list runs this many times, targets alternating

	work         string // temp dir of this run
	rocketd      string // built binaries
	rocketctlBin string
	log          io.Writer
}

// allTargets in table order. Each peer is compared with the rocketd target
// of the same durability (ratioBase).
var allTargets = []string{"rocketd-async", "rocketd-sync", "rocketmq-async", "rocketmq-sync", "nats-default", "nats-always"}

// grpcTargets are not in the default run: --targets rocketd-grpc,rocketmq-proxy.
var grpcTargets = []string{"rocketd-grpc", "rocketmq-proxy"}

var ratioBase = map[string]string{
	"rocketd-sync":   "rocketd-async",
	"rocketmq-async": "rocketd-async",
	"rocketmq-sync":  "rocketd-sync",
	"nats-default":   "rocketd-async",
	"nats-always":    "rocketd-sync",
	"rocketmq-proxy": "rocketd-grpc",
}

var targetTitle = map[string]string{
	"rocketd-async":  "rocketd ASYNC_FLUSH",
	"rocketd-sync":   "rocketd SYNC_FLUSH",
	"rocketmq-async": "RocketMQ " + rocketmqVersion + " ASYNC_FLUSH",
	"rocketmq-sync":  "RocketMQ " + rocketmqVersion + " SYNC_FLUSH",
	"nats-default":   "NATS JetStream default sync",
	"nats-always":    "NATS JetStream sync always",
	"rocketd-grpc":   "rocketd gRPC ASYNC_FLUSH",
	"rocketmq-proxy": "RocketMQ " + rocketmqVersion + " proxy Local mode ASYNC_FLUSH",
}

func parseFlags(args []string) (*harness, error) {
	h := &harness{log: os.Stderr}
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	targets := fs.String("targets", strings.Join(allTargets, ","), "comma-separated targets: "+strings.Join(append(allTargets, grpcTargets...), ", "))
	fs.DurationVar(&h.duration, "duration", 15*time.Second, "length of each measured workload")
	fs.DurationVar(&h.warmup, "warmup", 5*time.Second, "unmeasured produce before the workloads of each target")
	fs.IntVar(&h.backlog, "backlog", 1_000_000, "messages in the consume backlog")
	fs.DurationVar(&h.fillLimit, "fill-limit", 90*time.Second, "NATS: stop filling the backlog after this long (sync_interval: always is slow)")
	fs.IntVar(&h.rate, "rate", 20_000, "msgs/s of the fixed-rate workload")
	fs.BoolVar(&h.quick, "quick", false, "a fast check: --duration 3s --warmup 1s --backlog 100000, no results file unless --out")
	fs.StringVar(&h.out, "out", "", "results file (default bench/results/<date>.md; none with --quick)")
	cache, _ := os.UserCacheDir()
	fs.StringVar(&h.rocketmqLib, "rocketmq-lib", filepath.Join(cache, "rocketd-bench", "rocketmq-"+rocketmqVersion), "directory of the RocketMQ jars (fetched by Maven when empty)")
	fs.StringVar(&h.profileDir, "profile", "", "run rocketd in-process with pprof and save CPU and allocation profiles here")
	fs.BoolVar(&h.keep, "keep", false, "keep the data directories and logs")
	only := fs.String("workloads", "", "comma-separated workload ids to run (default all): "+workloadIDs())
	fs.IntVar(&h.grpcProducers, "grpc-producers", 32, "gRPC targets: SDK producers of the multi-producer workload and the backlog fill")
	fs.IntVar(&h.grpcBacklog, "grpc-backlog", 200_000, "gRPC targets: messages in the SimpleConsumer backlog")
	fs.BoolVar(&h.sdkCallLog, "sdk-call-log", false, "gRPC targets: keep the Go SDK's info line per RPC in /tmp/rocketmq-logger.log (its default)")
	fs.IntVar(&h.rounds, "rounds", 1, "run the targets this many times, alternating; the table shows each figure's median")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if h.only, err = parseWorkloads(*only); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if h.quick {
		if !set["duration"] {
			h.duration = 3 * time.Second
		}
		if !set["warmup"] {
			h.warmup = time.Second
		}
		if !set["backlog"] {
			h.backlog = 100_000
		}
		if !set["fill-limit"] {
			h.fillLimit = 20 * time.Second
		}
		if !set["grpc-backlog"] {
			h.grpcBacklog = 30_000
		}
	} else if h.out == "" {
		h.out = filepath.Join("bench", "results", time.Now().UTC().Format("2006-01-02")+".md")
	}
	for _, t := range strings.Split(*targets, ",") {
		t = strings.TrimSpace(t)
		if targetTitle[t] == "" {
			return nil, fmt.Errorf("--targets: unknown target %q", t)
		}
		h.targets = append(h.targets, t)
	}
	if h.duration < time.Second || h.backlog < 1 || h.rate < 16 || h.grpcProducers < 1 || h.grpcBacklog < 1 || h.rounds < 1 {
		return nil, errors.New("--duration must be at least 1s, --backlog, --grpc-producers, --grpc-backlog and --rounds at least 1, --rate at least 16")
	}
	return h, nil
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(h.log, "%s compare: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// targetResult is what one target measured.
type targetResult struct {
	name    string
	startup time.Duration
	routed  time.Duration // process start to the topics created (broker registered)
	idleRSS int64
	peakRSS int64
	metrics map[string]metric
	backlog int // messages actually in the backlog
	// fillFailures are the failed sends of the backlog fill by response code.
	fillFailures map[string]int64
	err          error
	duration     time.Duration
	notes        []string // for the results file's notes
	// fsync is the median fdatasync on the store's file system (rocketd
	// SYNC_FLUSH only; bound.go).
	fsync time.Duration
	// pageCache is what page-cache writes cost on the store's file system
	// (rocketd ASYNC_FLUSH only; pagecache.go).
	pageCache pageCacheCost
}

// metric is one workload's figure.
type metric struct {
	TPS      float64
	P99      float64 // ms
	Max      float64 // ms
	Failures int64
	Messages int64
	FailedBy map[string]int64 // by response code name (rocketctl)
	// ServerCPU is the server's CPU per message over the workload (its
	// threads' run time; 0 where not measured).
	ServerCPU time.Duration
	// ClientCPU is the rocketctl client's CPU per message (0 where not
	// measured).
	ClientCPU time.Duration
	Parts     string // a paced run's latency breakdown (rocketctl --rate), for the log
}

// prepare finds the repository, makes the run's work directory and builds
// rocketd and rocketctl into it; done removes the directory (unless --keep).
func (h *harness) prepare(ctx context.Context) (done func(), err error) {
	if h.root, err = repo.Root(); err != nil {
		return nil, err
	}
	if h.work, err = os.MkdirTemp("", "rocketd-compare-"); err != nil {
		return nil, err
	}
	done = func() {
		if !h.keep {
			os.RemoveAll(h.work)
		}
	}
	h.logf("building rocketd and rocketctl")
	h.rocketd, h.rocketctlBin = filepath.Join(h.work, "rocketd"), filepath.Join(h.work, "rocketctl")
	for _, b := range [][2]string{{h.rocketd, "./cmd/rocketd"}, {h.rocketctlBin, "./cmd/rocketctl"}} {
		if _, err := run(ctx, "go", "build", "-C", h.root, "-o", b[0], b[1]); err != nil {
			done()
			return nil, err
		}
	}
	return done, nil
}

func (h *harness) run(ctx context.Context) error {
	if h.profileDir != "" {
		if err := os.MkdirAll(h.profileDir, 0o755); err != nil {
			return err
		}
	}
	load0 := loadAvg()
	start := time.Now()
	done, err := h.prepare(ctx)
	if err != nil {
		return err
	}
	defer done()
	var rounds [][]*targetResult
	for round := range h.rounds {
		var results []*targetResult
		for _, t := range h.targets {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			h.logf("== %s (round %d of %d)", targetTitle[t], round+1, h.rounds)
			r := h.runTarget(ctx, t)
			for i := range r.notes {
				if h.rounds > 1 {
					r.notes[i] = fmt.Sprintf("round %d: %s", round+1, r.notes[i])
				}
			}
			if r.err != nil {
				h.logf("%s failed: %v", t, r.err)
			}
			results = append(results, r)
		}
		rounds = append(rounds, results)
	}
	results := mergeRounds(rounds)
	total := time.Since(start)
	table := h.table(results)
	if len(rounds) > 1 {
		for i, round := range rounds {
			table += fmt.Sprintf("\nRound %d:\n\n", i+1) + h.table(round)
		}
	}
	fmt.Println(table)
	body := table
	for _, section := range []string{h.boundSection(results, rounds), h.batchSection(results, rounds)} {
		if section != "" {
			fmt.Println(section)
			body += "\n" + section
		}
	}
	if h.out == "" {
		return nil
	}
	doc := h.resultsDoc(results, body, load0, loadAvg(), total)
	if err := os.MkdirAll(filepath.Dir(h.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(h.out, []byte(doc), 0o644); err != nil {
		return err
	}
	h.logf("results written to %s (run took %s)", h.out, total.Round(time.Second))
	return nil
}

// runTarget starts one target, runs every workload and stops it.
func (h *harness) runTarget(ctx context.Context, name string) *targetResult {
	r := &targetResult{name: name, metrics: map[string]metric{}}
	start := time.Now()
	defer func() { r.duration = time.Since(start) }()
	dir := filepath.Join(h.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.err = err
		return r
	}
	var s *server
	var err error
	switch name {
	case "rocketd-async":
		s, err = h.startRocketd(dir, config.AsyncFlush, false)
	case "rocketd-sync":
		s, err = h.startRocketd(dir, config.SyncFlush, false)
	case "rocketd-grpc":
		s, err = h.startRocketd(dir, config.AsyncFlush, true)
	case "rocketmq-proxy":
		s, err = h.startRocketMQProxy(ctx, dir)
	case "rocketmq-async":
		s, err = h.startRocketMQ(ctx, dir, config.AsyncFlush)
	case "rocketmq-sync":
		s, err = h.startRocketMQ(ctx, dir, config.SyncFlush)
	case "nats-default":
		s, err = h.startNATS(dir, false)
	case "nats-always":
		s, err = h.startNATS(dir, true)
	}
	if err != nil {
		r.err = err
		return r
	}
	r.startup = s.startup
	defer func() {
		r.peakRSS = s.peakRSS()
		s.stop(30 * time.Second)
		if !h.keep {
			_ = os.RemoveAll(dir) // the next target needs the disk and page cache
		}
	}()
	h.logf("%s accepts connections after %s", name, s.startup.Round(time.Millisecond))
	if strings.HasPrefix(name, "nats") {
		r.err = h.natsWorkloads(ctx, s, r)
	} else if isGRPCTarget(name) {
		r.err = h.grpcWorkloadsRun(ctx, name, s, r)
	} else {
		r.err = h.rocketWorkloads(ctx, name, s, r)
	}
	return r
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
