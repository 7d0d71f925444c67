package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The pipelined shapes: producers that keep many sends in flight on one
// connection instead of waiting for each answer (a Java producer's
// sendAsync, nats.go's PublishAsync). They measure what the per-message
// cost of the connection and the store is once the round trip no longer
// bounds the rate.
//
//	pipe1    1 connection, 4,000 sends of 1 KiB in flight
//	pipe16   16 connections, 256 sends of 1 KiB in flight each
//	batch32  1 connection, batches of 32 x 1 KiB, 4,000 messages in flight
//	         (rocketd, RocketMQ: SEND_BATCH_MESSAGE; NATS has no batch
//	         publish: async publishes in groups of 32, up to 4,000 in
//	         flight, so its figure is its async publish rate)
var pipelinedShapes = []pipelinedShape{
	{id: "pipe1", title: "produce 1 KiB, 1 connection, 4000 in flight (msgs/s)", conns: 1, window: 4000, batch: 1},
	{id: "pipe16", title: "produce 1 KiB, 16 connections x 256 in flight (msgs/s)", conns: 16, window: 256, batch: 1},
	{id: "batch32", title: "produce batches of 32 x 1 KiB, 1 connection, 4000 in flight (msgs/s)", conns: 1, window: 4000, batch: 32},
}

// pipelinedShape is one pipelined workload: conns connections, each with
// window messages in flight, in sends of batch messages of 1 KiB.
type pipelinedShape struct {
	id, title string
	conns     int
	window    int // messages in flight per connection
	batch     int
}

// pipelinedSize is the message size of every pipelined shape.
const pipelinedSize = 1024

// rocketctlArgs is the `rocketctl bench produce` of s: --window counts
// requests, so a batch shape keeps window/batch of them in flight.
func (s pipelinedShape) rocketctlArgs(topic string, dur time.Duration) []string {
	return []string{"produce", "-t", topic, "-s", strconv.Itoa(pipelinedSize), "-w", strconv.Itoa(s.conns),
		"--mode", "async", "--window", strconv.Itoa(max(s.window/s.batch, 1)), "--batch", strconv.Itoa(s.batch),
		"--duration", dur.String()}
}

// rocketPipelined runs the pipelined shapes with rocketctl bench against
// rocketd or RocketMQ; with --profile the 1-connection shapes save CPU and
// allocation profiles.
func (h *harness) rocketPipelined(ctx context.Context, name string, s *server, r *targetResult) error {
	for _, st := range pipelinedShapes {
		if !h.want(st.id) {
			continue
		}
		profile := ""
		if st.conns == 1 {
			profile = st.id
		}
		share := startCPUShare(s)
		m, err := h.profiled(ctx, name, profile, s, func() (metric, error) {
			return h.benchRun(ctx, s.addr, st.rocketctlArgs(benchTopic, h.duration)...)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", st.id, err)
		}
		m.ServerCPU = share.serverPerMessage(m.Messages)
		h.logf("%s %s: %.0f msgs/s, p99 %.3f ms, failures %d, server CPU %s a message", name, st.id, m.TPS, m.P99,
			m.Failures, m.ServerCPU)
		r.metrics[st.id] = m
	}
	if name == "rocketd-async" && (h.want("batch32") || h.want("pipe1")) {
		// What page-cache writes cost this machine, with the broker idle
		// (pagecache.go).
		c, err := probePageCache(storeProbeDir(filepath.Join(h.work, name)))
		if err != nil {
			return err
		}
		h.logf("%s: page cache costs %s of CPU per GiB grown, %s per GiB overwritten", name,
			c.grow.Round(time.Millisecond), c.overwrite.Round(time.Millisecond))
		r.pageCache = c
	}
	return nil
}

// natsPipelined runs the pipelined shapes with nats.go's async publish.
func (h *harness) natsPipelined(d *natsDriver, r *targetResult) error {
	for _, st := range pipelinedShapes {
		if !h.want(st.id) {
			continue
		}
		m, err := d.produceAsync("bench", st, h.duration)
		if err != nil {
			return fmt.Errorf("%s: %w", st.id, err)
		}
		h.logf("%s %s: %.0f msgs/s, failures %d", r.name, st.id, m.TPS, m.Failures)
		r.metrics[st.id] = m
	}
	return nil
}

// produceAsync publishes 1 KiB messages with PublishAsync from st.conns
// connections, at most st.window unacknowledged per connection, for dur;
// then it waits for the acks still due. With st.batch > 1 a connection
// publishes in groups of st.batch messages (NATS has no batch publish).
func (d *natsDriver) produceAsync(subject string, st pipelinedShape, dur time.Duration) (metric, error) {
	payload := make([]byte, pipelinedSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range payload {
		payload[i] = byte('a' + rng.IntN(26))
	}
	var acked, failed atomic.Int64
	deadline := time.Now().Add(dur)
	errs := make([]error, st.conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range st.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[c] = d.publishWindow(subject, payload, st, deadline, &acked, &failed)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return metric{}, err
	}
	return metric{TPS: float64(acked.Load()) / elapsed.Seconds(), Failures: failed.Load(), Messages: acked.Load()}, nil
}

// publishWindow is one connection of produceAsync.
func (d *natsDriver) publishWindow(subject string, payload []byte, st pipelinedShape, deadline time.Time, acked, failed *atomic.Int64) error {
	nc, err := nats.Connect(d.url, nats.MaxReconnects(0))
	if err != nil {
		return fmt.Errorf("nats connect %s: %w", d.url, err)
	}
	defer nc.Close()
	// Acks and failures are counted as they arrive.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(st.window),
		jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) { failed.Add(1) }),
		jetstream.WithPublishAsyncAckHandler(func(jetstream.JetStream, *nats.Msg, *jetstream.PubAck) { acked.Add(1) }))
	if err != nil {
		return err
	}
	if st.batch <= 1 {
		for time.Now().Before(deadline) {
			if _, err := js.PublishAsync(subject, payload); err != nil {
				if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
					continue // the window stayed full for the stall wait: retry
				}
				return fmt.Errorf("nats: publish async: %w", err)
			}
		}
		return awaitAsync(js)
	}
	// Batch-style: NATS has no batch publish; groups of batch async
	// publishes leave together (nats.go's flusher writes what a group
	// queued in one go) and share the window.
	for time.Now().Before(deadline) {
		for range st.batch {
			if _, err := js.PublishAsync(subject, payload); err != nil && !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				return fmt.Errorf("nats: publish async: %w", err)
			}
		}
	}
	return awaitAsync(js)
}

// awaitAsync waits for every outstanding async publish of js.
func awaitAsync(js jetstream.JetStream) error {
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-time.After(time.Minute):
		return errors.New("nats: async publishes not acknowledged after a minute")
	}
}

// want reports whether workload id is to run (--workloads; all by default).
func (h *harness) want(id string) bool {
	return len(h.only) == 0 || h.only[id]
}

// parseWorkloads turns --workloads into the set h.want reads.
func parseWorkloads(list string) (map[string]bool, error) {
	if list == "" {
		return nil, nil
	}
	known := map[string]bool{}
	for _, w := range workloads {
		known[w.id] = true
	}
	set := map[string]bool{}
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if !known[id] {
			return nil, fmt.Errorf("--workloads: unknown workload %q", id)
		}
		set[id] = true
	}
	return set, nil
}

// workloadIDs lists the workload ids for --workloads' help.
func workloadIDs() string {
	ids := make([]string, len(workloads))
	for i, w := range workloads {
		ids[i] = w.id
	}
	return strings.Join(ids, ", ")
}
