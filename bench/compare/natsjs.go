package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/rocketd/rocketd/internal/pace"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsServerMain is the `nats-server` child: an embedded NATS server with
// JetStream file storage under --store until SIGTERM. --sync always sets
// sync_interval: always (fsync after every write); default keeps NATS's
// default (fsync every 2 minutes).
func natsServerMain(args []string) error {
	opts := &natsserver.Options{Host: "127.0.0.1", JetStream: true, NoSigs: true, NoLog: true,
		JetStreamMaxMemory: 1 << 30, JetStreamMaxStore: 64 << 30}
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--port":
			opts.Port, _ = strconv.Atoi(args[i+1])
		case "--store":
			opts.StoreDir = args[i+1]
		case "--sync":
			opts.SyncAlways = args[i+1] == "always"
		default:
			return fmt.Errorf("nats-server: unknown flag %s", args[i])
		}
	}
	s, err := natsserver.NewServer(opts)
	if err != nil {
		return err
	}
	s.Start()
	if !s.ReadyForConnections(60 * time.Second) {
		return errors.New("nats-server: not ready after 60s")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

// startNATS starts this binary as the NATS server child.
func (h *harness) startNATS(dir string, syncAlways bool) (*server, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	mode := "default"
	if syncAlways {
		mode = "always"
	}
	s := &server{addr: "127.0.0.1:" + strconv.Itoa(ports[0])}
	start := time.Now()
	cmd := exec.Command(self, "nats-server", "--port", strconv.Itoa(ports[0]), "--store", filepath.Join(dir, "jetstream"), "--sync", mode)
	if err := s.startProcess(cmd, filepath.Join(dir, "nats.log")); err != nil {
		return nil, err
	}
	if err := s.waitTCP(s.addr, 60*time.Second); err != nil {
		s.stop(10 * time.Second)
		return nil, fmt.Errorf("nats: %w", err)
	}
	s.startup = time.Since(start)
	return s, nil
}

// natsDriver runs the workloads against one NATS server.
type natsDriver struct {
	url string
}

// connect opens a connection with its JetStream context.
func (d *natsDriver) connect() (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(d.url, nats.MaxReconnects(0))
	if err != nil {
		return nil, nil, fmt.Errorf("nats connect %s: %w", d.url, err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// createStream makes a file-backed stream for subject (no limits: the
// backlog must stay).
func (d *natsDriver) createStream(ctx context.Context, name, subject string) error {
	nc, js, err := d.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage})
	if err != nil {
		return fmt.Errorf("nats: create stream %s: %w", name, err)
	}
	return nil
}

// produce publishes size-byte messages from workers, each with its own
// connection, waiting for every ack (the counterpart of a synchronous
// send), for d or until count messages; rate > 0 paces them and measures
// latency from the due time.
func (d *natsDriver) produce(subject string, size, workers int, dur time.Duration, rate int) (metric, error) {
	payload := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range payload {
		payload[i] = byte('a' + rng.IntN(26))
	}
	var (
		mu    sync.Mutex
		hist  = hdrhistogram.New(1, 3_600_000_000, 3)
		count atomic.Int64
		fails atomic.Int64
	)
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(workers) / float64(rate))
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, js, err := d.connect()
			if err != nil {
				errs[w] = err
				return
			}
			defer nc.Close()
			local := hdrhistogram.New(1, 3_600_000_000, 3)
			// The same precise pacing as rocketctl bench (see package pace).
			waiter, _ := pace.NewWaiter()
			defer waiter.Close()
			due := time.Now().Add(interval * time.Duration(w) / time.Duration(workers))
			for ctx.Err() == nil {
				t0 := time.Now()
				if interval > 0 {
					if !waiter.WaitUntil(ctx, due) {
						break
					}
					t0, due = due, due.Add(interval)
				}
				pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := js.Publish(pctx, subject, payload)
				pcancel()
				if err != nil {
					fails.Add(1)
					continue
				}
				_ = local.RecordValue(max(time.Since(t0).Microseconds(), 1))
				count.Add(1)
			}
			mu.Lock()
			hist.Merge(local)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return metric{}, err
	}
	return metric{TPS: float64(count.Load()) / elapsed.Seconds(), P99: float64(hist.ValueAtQuantile(99)) / 1000,
		Failures: fails.Load()}, nil
}

// fill publishes up to n messages asynchronously, for at most limit (with
// sync_interval: always NATS fsyncs every message), and returns how many
// the stream acknowledged. Not measured.
func (d *natsDriver) fill(stream, subject string, size, n int, limit time.Duration) (int, error) {
	nc, js, err := d.connect()
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	payload := make([]byte, size)
	deadline := time.Now().Add(limit)
	for i := range n {
		if i%1024 == 0 && time.Now().After(deadline) {
			break
		}
		for {
			_, err := js.PublishAsync(subject, payload)
			if err == nil {
				break
			}
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				return 0, fmt.Errorf("nats: fill message %d: %w", i, err)
			}
			// 4096 acks outstanding: let them drain, then go on.
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				return 0, fmt.Errorf("nats: fill message %d: acks stalled for a minute", i)
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		return 0, errors.New("nats: backlog fill not acknowledged after 5 minutes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("nats: stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("nats: stream %s: %w", stream, err)
	}
	return int(info.State.Msgs), nil
}

// consume reads n messages of the stream from its start with a pull
// consumer (no acks, as `rocketctl bench consume` commits no offset).
func (d *natsDriver) consume(stream string, n int) (metric, error) {
	nc, js, err := d.connect()
	if err != nil {
		return metric{}, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: "bench",
		AckPolicy: jetstream.AckNonePolicy, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return metric{}, fmt.Errorf("nats: consumer: %w", err)
	}
	start := time.Now()
	it, err := cons.Messages(jetstream.PullMaxMessages(1000))
	if err != nil {
		return metric{}, err
	}
	defer it.Stop()
	for got := 0; got < n; got++ {
		if _, err := it.Next(); err != nil {
			return metric{}, fmt.Errorf("nats: consume after %d messages: %w", got, err)
		}
	}
	return metric{TPS: float64(n) / time.Since(start).Seconds()}, nil
}
