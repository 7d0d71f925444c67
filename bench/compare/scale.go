package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// The scale curves (`compare scale`): how rocketd's cost grows with the
// work that is not messages per second — queues, connections, backlog
// size, store size — where Java RocketMQ is known to suffer (a
// ConsumeQueue file per queue, long recoveries). Each curve is a table of
// its own in one results file; every point runs on a fresh rocketd.

// scalePlan is what one scale run measures.
type scalePlan struct {
	queues      []int     // total queue counts; each also as many 8-queue topics when >= 16
	conns       int       // idle connections, each with a producer heartbeat
	backlogGiB  []float64 // backlog sizes read from the start
	reads       int       // reads of each backlog; the table shows their median and each
	recoveryGiB []float64 // store sizes killed and restarted
	java        bool      // recovery of Apache RocketMQ too
}

// scaleResult collects the tables of a run, in order.
type scaleResult struct {
	sections []string
}

func (r *scaleResult) add(title, intro string, header []string, rows [][]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n\n| %s |\n|", title, intro, strings.Join(header, " | "))
	for i := range header {
		if i == 0 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	r.sections = append(r.sections, b.String())
}

func scaleMain(args []string) error {
	h, plan, err := parseScaleFlags(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return h.runScale(ctx, plan)
}

func parseScaleFlags(args []string) (*harness, scalePlan, error) {
	h := &harness{log: os.Stderr, metricsPprof: true}
	fset := flag.NewFlagSet("compare scale", flag.ContinueOnError)
	quick := fset.Bool("quick", false, "small sizes (a few minutes): queues 1,8,100,1000; 1000 connections; 0.25 GiB backlog; 0.25 and 0.5 GiB stores")
	queues := fset.String("queues", "1,8,100,10000", "total queue counts")
	conns := fset.Int("conns", 10_000, "idle connections")
	backlog := fset.String("backlog-gib", "1,10", "backlog sizes in GiB")
	reads := fset.Int("backlog-reads", 3, "reads of each backlog from the start (the table shows their median and each)")
	recovery := fset.String("recovery-gib", "1,5,20", "store sizes in GiB for the kill -9 recovery curve")
	java := fset.Bool("java", true, "also measure Apache RocketMQ's recovery")
	fset.DurationVar(&h.duration, "duration", 15*time.Second, "length of each throughput measurement")
	fset.StringVar(&h.out, "out", "", "results file (default bench/results/<date>-scale.md; none with --quick)")
	cache, _ := os.UserCacheDir()
	fset.StringVar(&h.rocketmqLib, "rocketmq-lib", filepath.Join(cache, "rocketd-bench", "rocketmq-"+rocketmqVersion), "directory of the RocketMQ jars (fetched by Maven when empty)")
	fset.BoolVar(&h.keep, "keep", false, "keep the data directories and logs")
	if err := fset.Parse(args); err != nil {
		return nil, scalePlan{}, err
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		defaults := map[string]*string{"queues": queues, "backlog-gib": backlog, "recovery-gib": recovery}
		quickValues := map[string]string{"queues": "1,8,100,1000", "backlog-gib": "0.25", "recovery-gib": "0.25,0.5"}
		for name, p := range defaults {
			if !set[name] {
				*p = quickValues[name]
			}
		}
		if !set["conns"] {
			*conns = 1000
		}
		if !set["duration"] {
			h.duration = 3 * time.Second
		}
	} else if h.out == "" {
		h.out = filepath.Join("bench", "results", time.Now().UTC().Format("2006-01-02")+"-scale.md")
	}
	plan := scalePlan{conns: *conns, java: *java, reads: *reads}
	var err error
	if plan.queues, err = parseList(*queues, strconv.Atoi); err != nil {
		return nil, plan, fmt.Errorf("--queues: %w", err)
	}
	parseGiB := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	if plan.backlogGiB, err = parseList(*backlog, parseGiB); err != nil {
		return nil, plan, fmt.Errorf("--backlog-gib: %w", err)
	}
	if plan.recoveryGiB, err = parseList(*recovery, parseGiB); err != nil {
		return nil, plan, fmt.Errorf("--recovery-gib: %w", err)
	}
	if h.duration < time.Second || plan.conns < 0 || plan.reads < 1 {
		return nil, plan, errors.New("--duration must be at least 1s, --conns not negative, --backlog-reads at least 1")
	}
	return h, plan, nil
}

// parseList parses a comma-separated list of positive numbers.
func parseList[T int | float64](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		if v <= 0 {
			return nil, fmt.Errorf("%v: must be positive", v)
		}
		out = append(out, v)
	}
	return out, nil
}

func (h *harness) runScale(ctx context.Context, plan scalePlan) error {
	load0 := loadAvg()
	start := time.Now()
	done, err := h.prepare(ctx)
	if err != nil {
		return err
	}
	defer done()
	res := &scaleResult{}
	steps := []func(context.Context, scalePlan, *scaleResult) error{
		h.scaleQueues, h.scaleConns, h.scaleBacklog, h.scaleRecovery,
	}
	var errs []error
	for _, step := range steps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := step(ctx, plan, res); err != nil {
			h.logf("%v", err)
			errs = append(errs, err)
		}
	}
	doc := h.scaleDoc(res, plan, load0, loadAvg(), time.Since(start), errs)
	fmt.Println(doc)
	if h.out != "" {
		if err := os.MkdirAll(filepath.Dir(h.out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(h.out, []byte(doc), 0o644); err != nil {
			return err
		}
		h.logf("results written to %s", h.out)
	}
	return errors.Join(errs...)
}

func (h *harness) scaleDoc(res *scaleResult, plan scalePlan, load0, load1 string, total time.Duration, errs []error) string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# Scale curves, %s\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "Machine: %s, %d CPUs, %s/%s; load average %s before, %s after; run took %s.\n",
		host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, load0, load1, total.Round(time.Second))
	fmt.Fprintf(&b, "Command: `go run ./bench/compare scale %s`. Each point runs on a fresh rocketd (`rocketd serve`,\n"+
		"ASYNC_FLUSH, no gRPC listener) driven by `rocketctl bench` as a separate process; throughput is 16\n"+
		"synchronous producers of 1 KiB for %s. RSS is read after a forced GC (pprof's heap?gc=1 on the\n"+
		"metrics listener): what rocketd retains, not the garbage of what it just did.\n\n", strings.Join(os.Args[2:], " "), h.duration)
	for _, s := range res.sections {
		b.WriteString(s)
		b.WriteString("\n")
	}
	if len(errs) > 0 {
		b.WriteString("## Failed steps\n\n")
		for _, err := range errs {
			fmt.Fprintf(&b, "- %v\n", err)
		}
	}
	return b.String()
}

const scaleTopic = "ScaleTopic"

// startScaleRocketd starts a fresh rocketd under name in the work dir.
func (h *harness) startScaleRocketd(name string) (*server, string, error) {
	dir := filepath.Join(h.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	s, err := h.startRocketd(dir, config.AsyncFlush, false)
	if err != nil {
		return nil, "", err
	}
	if err := h.waitRegistered(context.Background(), s); err != nil {
		s.stop(30 * time.Second)
		return nil, "", err
	}
	return s, dir, nil
}

// waitRegistered waits until the broker has registered with the
// NameServer (TBW102 routes): before that it answers "starting".
func (h *harness) waitRegistered(ctx context.Context, s *server) error {
	return retryEvery(ctx, 120*time.Second, 50*time.Millisecond, func() error {
		_, err := h.ctl(ctx, s.addr, "topic", "route", "-t", "TBW102")
		return err
	})
}

// stopScale stops s and removes its directory (the next point needs the
// disk and the page cache).
func (h *harness) stopScale(s *server, dir string) {
	s.stop(30 * time.Second)
	if !h.keep {
		_ = os.RemoveAll(dir)
	}
}

// createTopicsOnBroker creates topics of queues queues each on the broker with
// UPDATE_AND_CREATE_TOPIC, as `rocketctl topic create -b` does, without a
// process per topic, then waits until the NameServer routes the last one.
func (h *harness) createTopicsOnBroker(ctx context.Context, s *server, names []string, queues int) error {
	client := remoting.NewClient(remoting.ClientConfig{})
	defer client.Close()
	for _, t := range names {
		hd := protocol.CreateTopicRequestHeader{Topic: t, DefaultTopic: "TBW102", ReadQueueNums: int32(queues),
			WriteQueueNums: int32(queues), Perm: 6, TopicFilterType: protocol.SingleTag}
		var resp *remoting.Command
		err := retryEvery(ctx, 60*time.Second, 100*time.Millisecond, func() error {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var err error
			resp, err = client.Invoke(cctx, s.broker, remoting.NewRequest(int32(protocol.UpdateAndCreateTopic), protocol.Ext(&hd), nil))
			return err
		})
		if err != nil {
			return fmt.Errorf("create %s: %w", t, err)
		}
		if resp.Code != 0 {
			return fmt.Errorf("create %s: code %d: %s", t, resp.Code, resp.Remark)
		}
	}
	last := names[len(names)-1]
	return retryEvery(ctx, 60*time.Second, 100*time.Millisecond, func() error {
		_, err := h.ctl(ctx, s.addr, "topic", "route", "-t", last)
		return err
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

// String is "RSS / live" in MiB ("-" for an unknown live figure).
func (m memUse) String() string {
	live := "-"
	if m.live > 0 {
		live = mib(m.live)
	}
	return mib(m.rss) + " / " + live
}

// perK is the growth from a to b per 1,000 of n, in MiB: of the live
// figure when both have one, else of the RSS.
func perK(a, b memUse, n int) string {
	d := b.rss - a.rss
	if a.live > 0 && b.live > 0 {
		d = b.live - a.live
	}
	return fmt.Sprintf("%.2f", float64(d)/(1<<20)/(float64(n)/1000))
}

// scaleQueues: throughput and RSS with the queue count, one topic holding
// them all and (from 16 queues) as many topics of 8 queues.
func (h *harness) scaleQueues(ctx context.Context, plan scalePlan, res *scaleResult) error {
	type point struct {
		layout         string
		queues, topics int
	}
	var points []point
	for _, n := range plan.queues {
		points = append(points, point{"one topic", n, 1})
		if n >= 16 && n%8 == 0 {
			points = append(points, point{"topics of 8 queues", n, n / 8})
		}
	}
	// The 8-queue point first: every row shows its ratio to it.
	slices.SortStableFunc(points, func(a, b point) int {
		return cmp.Compare(b2i(a.topics != 1 || a.queues != 8), b2i(b.topics != 1 || b.queues != 8))
	})
	var base float64
	var rows [][]string
	for _, p := range points {
		row, tps, err := h.queuePoint(ctx, p.layout, p.queues, p.topics, base)
		if err != nil {
			return fmt.Errorf("queues %d (%s): %w", p.queues, p.layout, err)
		}
		if p.topics == 1 && p.queues == 8 {
			base = tps
			row[8] = "1.00"
		}
		rows = append(rows, row)
	}
	res.add("Queues", "Throughput and memory against the number of queues: RSS / live (Go heap and stacks in use after\n"+
		"a forced GC) before creating the topics, after creating them (idle), and after the throughput run, which\n"+
		"writes to every queue round-robin. Before it, one message to every queue creates the queues' ConsumeQueue\n"+
		"directories and files, timed apart (first write). Growth per 1,000 queues from 1,000 on (goal: < 1 MiB).\n"+
		"Goal: 10k queues >= 80 % of the 8-queue throughput.",
		[]string{"layout", "queues", "topics", "before: RSS / live (MiB)", "with the queues, idle", "live growth per 1k queues (MiB)", "first write to every queue (s)", "msgs/s", "vs 8 queues", "after the load"}, rows)
	return nil
}

func (h *harness) queuePoint(ctx context.Context, layout string, queues, topics int, base float64) ([]string, float64, error) {
	s, dir, err := h.startScaleRocketd(fmt.Sprintf("queues-%d-%d", queues, topics))
	if err != nil {
		return nil, 0, err
	}
	defer h.stopScale(s, dir)
	before := s.settled(ctx)
	names := []string{scaleTopic}
	perTopic := queues
	if topics > 1 {
		names, perTopic = make([]string, topics), 8
		for i := range names {
			names[i] = scaleTopic + strconv.Itoa(i)
		}
	}
	h.logf("queues: %d in %d topic(s): creating", queues, topics)
	if err := h.createTopicsOnBroker(ctx, s, names, perTopic); err != nil {
		return nil, 0, err
	}
	idle := s.settled(ctx)
	var topicArgs []string
	if topics > 1 {
		topicArgs = []string{"--topic-count", strconv.Itoa(topics)}
	}
	// A first message to every queue, timed apart: it creates the queue's
	// ConsumeQueue directory and file (the on-disk layout Java shares),
	// which costs the kernel ~0.6 ms a queue on this VM's ext4
	// (internal/store/DESIGN.md, "Many queues"); the throughput run then
	// measures writing to queues that exist. One worker walks the queues
	// in order, so each gets one message.
	began := time.Now()
	if _, err := h.benchRun(ctx, s.addr, append([]string{"produce", "-t", scaleTopic, "-s", "1024", "-w", "1",
		"--mode", "async", "--window", "256", "--count", strconv.Itoa(queues)}, topicArgs...)...); err != nil {
		return nil, 0, fmt.Errorf("first message to every queue: %w", err)
	}
	// The sends are acknowledged once in the CommitLog; the queues' files
	// are made when the dispatch reaches them.
	if err := retryEvery(ctx, 5*time.Minute, 50*time.Millisecond, func() error { return s.dispatched(ctx) }); err != nil {
		return nil, 0, fmt.Errorf("first message to every queue: %w", err)
	}
	firstWrite := time.Since(began)
	m, err := h.benchRun(ctx, s.addr, append([]string{"produce", "-t", scaleTopic, "-s", "1024", "-w", "16",
		"--duration", h.duration.String()}, topicArgs...)...)
	if err != nil {
		return nil, 0, err
	}
	after := s.settled(ctx)
	h.logf("queues: %d in %d topic(s): %.0f msgs/s, RSS / live %s -> %s -> %s MiB", queues, topics, m.TPS, before, idle, after)
	ratio := "-"
	if base > 0 {
		ratio = fmt.Sprintf("%.2f", m.TPS/base)
	}
	// Per 1k only where there are thousands: below, the noise dominates.
	k := "-"
	if queues >= 1000 {
		k = perK(before, idle, queues)
	}
	return []string{layout, strconv.Itoa(queues), strconv.Itoa(topics), before.String(), idle.String(), k,
		fmt.Sprintf("%.2f", firstWrite.Seconds()), fmt.Sprintf("%.0f", m.TPS), ratio, after.String()}, m.TPS, nil
}

// scaleConns: RSS with idle connections, each having sent one producer
// heartbeat (the broker keeps a channel entry per client).
func (h *harness) scaleConns(ctx context.Context, plan scalePlan, res *scaleResult) error {
	if plan.conns == 0 {
		return nil
	}
	s, dir, err := h.startScaleRocketd("conns")
	if err != nil {
		return err
	}
	defer h.stopScale(s, dir)
	before := s.settled(ctx)
	var clients []*remoting.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	h.logf("connections: opening %d", plan.conns)
	for i := range plan.conns {
		c := remoting.NewClient(remoting.ClientConfig{IdleTimeout: -1})
		clients = append(clients, c)
		body := fmt.Sprintf(`{"clientID":"127.0.0.1@scale-%d","producerDataSet":[{"groupName":"scale_producer"}],"consumerDataSet":[]}`, i)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := c.Invoke(cctx, s.broker, remoting.NewRequest(int32(protocol.HeartBeat), nil, []byte(body)))
		cancel()
		if err != nil {
			return fmt.Errorf("connections: heartbeat %d: %w", i, err)
		}
		if resp.Code != 0 {
			return fmt.Errorf("connections: heartbeat %d: code %d: %s", i, resp.Code, resp.Remark)
		}
	}
	after := s.settled(ctx)
	h.logf("connections: RSS / live %s -> %s MiB with %d", before, after, plan.conns)
	res.add("Connections", "Memory with idle connections, each of which sent one producer heartbeat: RSS / live (Go heap\n"+
		"and stacks in use after a forced GC), and the growth per 1,000 (goal: < 8 MiB).",
		[]string{"connections", "before: RSS / live (MiB)", "with them", "RSS growth per 1k (MiB)", "live growth per 1k (MiB)"},
		[][]string{{strconv.Itoa(plan.conns), before.String(), after.String(), perK(memUse{rss: before.rss}, memUse{rss: after.rss}, plan.conns),
			perK(before, after, plan.conns)}})
	return nil
}

// gibMessages is how many 1 KiB messages make gib GiB of bodies.
func gibMessages(gib float64) int { return int(gib * (1 << 30) / 1024) }

// fill sends n 1 KiB messages in batches of 32 (not measured).
func (h *harness) fill(ctx context.Context, s *server, topic string, n int) (metric, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Minute)
	defer cancel()
	out, err := h.ctl(ctx, s.addr, "bench", "produce", "-t", topic, "-s", "1024", "-w", "8", "--batch", "32",
		"--count", strconv.Itoa(n), "--json", "--progress=false")
	if err != nil {
		return metric{}, err
	}
	return parseBenchJSON(out)
}

// scaleBacklog: the rate of reading a backlog from the start, by size.
func (h *harness) scaleBacklog(ctx context.Context, plan scalePlan, res *scaleResult) error {
	var rows [][]string
	for _, gib := range plan.backlogGiB {
		row, err := h.backlogPoint(ctx, gib, plan.reads)
		if err != nil {
			return fmt.Errorf("backlog %.2f GiB: %w", gib, err)
		}
		rows = append(rows, row)
	}
	res.add("Backlog", "Reading a backlog of 1 KiB messages from the start (8 queues, one long-polling pull loop per\n"+
		"queue, 32 messages per pull). Goal: >= 1 M msgs/s. As in Java, records further behind the CommitLog end than\n"+
		"accessMessageInMemoryMaxRatio (40 %) of the machine's memory count as on disk and are pulled at most\n"+
		"maxTransferCountOnMessageInDisk (8) at a time: a backlog larger than that starts 8 messages per pull.\n"+
		fmt.Sprintf("The backlog is read %d times in a row from the start (no offset committed), the first right after the\n", plan.reads)+
		"fill: on a shared machine one read swings by a third from the next, so the table gives their median and each.\n"+
		"CPU a message is the broker's (its threads' run time, /proc schedstat) + the reading client's (rocketctl's\n"+
		fmt.Sprintf("rusage): with %d cores, 1 M msgs/s needs their sum at or below %d µs.", runtime.NumCPU(), runtime.NumCPU()),
		[]string{"backlog (GiB)", "messages", "fill msgs/s (batches of 32)", "read msgs/s (median)", "each read (msgs/s)",
			"CPU a message, each read: broker + client (µs)", "after the reads: RSS / live (MiB)"}, rows)
	return nil
}

func (h *harness) backlogPoint(ctx context.Context, gib float64, reads int) ([]string, error) {
	s, dir, err := h.startScaleRocketd(fmt.Sprintf("backlog-%g", gib))
	if err != nil {
		return nil, err
	}
	defer h.stopScale(s, dir)
	if err := h.createTopicsOnBroker(ctx, s, []string{scaleTopic}, 8); err != nil {
		return nil, err
	}
	n := gibMessages(gib)
	h.logf("backlog: filling %d messages (%.2f GiB)", n, gib)
	f, err := h.fill(ctx, s, scaleTopic, n)
	if err != nil {
		return nil, err
	}
	ctx2, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var tps []float64
	var cpu []string
	for i := range reads {
		share := startCPUShare(s)
		out, err := h.ctl(ctx2, s.addr, "bench", "consume", "-t", scaleTopic, "--from-beginning", "--count",
			strconv.FormatInt(f.Messages, 10), "--json", "--progress=false")
		if err != nil {
			return nil, err
		}
		m, err := parseBenchJSON(out)
		if err != nil {
			return nil, err
		}
		per := share.serverPerMessage(m.Messages)
		h.logf("backlog: %.2f GiB read %d of %d at %.0f msgs/s, broker CPU %s a message", gib, i+1, reads, m.TPS, per)
		tps = append(tps, m.TPS)
		cpu = append(cpu, fmt.Sprintf("%.2f + %.2f", micros(per), micros(m.ClientCPU)))
	}
	each := make([]string, len(tps))
	for i, v := range tps {
		each[i] = fmt.Sprintf("%.0f", v)
	}
	return []string{fmt.Sprintf("%g", gib), strconv.FormatInt(f.Messages, 10), fmt.Sprintf("%.0f", f.TPS),
		fmt.Sprintf("%.0f", medianOf(tps)), strings.Join(each, ", "), strings.Join(cpu, ", "), s.settled(ctx).String()}, nil
}

// scaleRecovery: the time from restarting after a kill -9 under load to
// the first acknowledged send, by store size, for rocketd and (with
// --java) Apache RocketMQ.
func (h *harness) scaleRecovery(ctx context.Context, plan scalePlan, res *scaleResult) error {
	var rows [][]string
	var errs []error
	for _, gib := range plan.recoveryGiB {
		targets := []string{"rocketd"}
		if plan.java {
			targets = append(targets, "rocketmq")
		}
		row := []string{fmt.Sprintf("%g", gib)}
		var times [2]time.Duration
		for i, t := range targets {
			port, send, err := h.recoveryPoint(ctx, t, gib)
			if err != nil {
				errs = append(errs, fmt.Errorf("recovery %s %.2f GiB: %w", t, gib, err))
				row = append(row, "-", "-")
				continue
			}
			times[i] = send
			row = append(row, ms(port), ms(send))
		}
		if !plan.java {
			row = append(row, "-", "-")
		}
		ratio := "-"
		if times[0] > 0 && times[1] > 0 {
			ratio = fmt.Sprintf("%.1f", float64(times[1])/float64(times[0]))
		}
		rows = append(rows, append(row, ratio))
	}
	res.add("Recovery after kill -9", "A store filled to the size (1 KiB messages in batches), then 4 producers sending, then kill -9\n"+
		"of the broker (rocketd: the serve process; RocketMQ "+rocketmqVersion+": the broker JVM), then a restart on the same\n"+
		"store: the time from the restart to the broker's port accepting connections, and to the first acknowledged\n"+
		"send through the NameServer route (`rocketctl send`, polled every 50 ms). RocketMQ's restart includes its\n"+
		"NameServer's, as rocketd serve's does. Goal: rocketd <= 2 s at 20 GiB and >= 10x faster than RocketMQ.",
		[]string{"store (GiB)", "rocketd to port (ms)", "rocketd to first send (ms)",
			"RocketMQ to port (ms)", "RocketMQ to first send (ms)", "RocketMQ ÷ rocketd"}, rows)
	return errors.Join(errs...)
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// recoveryPoint fills a fresh store of target to gib, kills it -9 under
// load, restarts it and times the recovery.
func (h *harness) recoveryPoint(ctx context.Context, target string, gib float64) (toPort, toSend time.Duration, err error) {
	dir := filepath.Join(h.work, fmt.Sprintf("recovery-%s-%g", target, gib))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	defer func() {
		if !h.keep {
			_ = os.RemoveAll(dir)
		}
	}()
	start := func() (*server, error) {
		if target == "rocketd" {
			return h.startRocketd(dir, config.AsyncFlush, false)
		}
		return h.startRocketMQ(ctx, dir, config.AsyncFlush)
	}
	s, err := start()
	if err == nil {
		err = h.waitRegistered(ctx, s)
	}
	if err != nil {
		return 0, 0, err
	}
	if err := h.createTopicsOnBroker(ctx, s, []string{scaleTopic}, 8); err != nil {
		s.stop(30 * time.Second)
		return 0, 0, err
	}
	n := gibMessages(gib)
	h.logf("recovery %s: filling %d messages (%.2f GiB)", target, n, gib)
	if _, err := h.fill(ctx, s, scaleTopic, n); err != nil {
		s.stop(30 * time.Second)
		return 0, 0, err
	}
	// Producers running when the broker dies: the store's tail is being
	// written.
	load := exec.CommandContext(ctx, h.rocketctlBin, "-n", s.addr, "bench", "produce", "-t", scaleTopic,
		"-s", "1024", "-w", "4", "--duration", "10m", "--progress=false")
	if err := load.Start(); err != nil {
		s.stop(30 * time.Second)
		return 0, 0, err
	}
	time.Sleep(2 * time.Second)
	broker := s.procs[len(s.procs)-1]
	_ = syscall.Kill(-broker.Process.Pid, syscall.SIGKILL)
	_ = broker.Wait()
	_ = load.Process.Kill()
	_ = load.Wait()
	s.stop(30 * time.Second) // the RocketMQ NameServer
	h.logf("recovery %s: killed; restarting", target)
	if target == "rocketd" {
		// The log of the killed run; the restart's goes to rocketd.log.
		_ = os.Rename(filepath.Join(dir, "rocketd.log"), filepath.Join(dir, "rocketd-killed.log"))
	}
	restart := time.Now()
	s, err = start()
	if err != nil {
		return 0, 0, err
	}
	defer s.stop(30 * time.Second)
	toPort = time.Since(restart)
	err = retryEvery(ctx, 10*time.Minute, 50*time.Millisecond, func() error {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := run(cctx, h.rocketctlBin, "-n", s.addr, "--timeout", "3s", "send", "-t", scaleTopic, "-b", "after-restart")
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("no acknowledged send after the restart: %w", err)
	}
	toSend = time.Since(restart)
	h.logf("recovery %s %.2f GiB: port after %s, first send after %s", target, gib, toPort.Round(time.Millisecond), toSend.Round(time.Millisecond))
	return toPort, toSend, nil
}

// retryEvery calls f every interval until it succeeds or d has passed.
func retryEvery(ctx context.Context, d, interval time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(interval)
	}
}
