package remoting

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// recordingObserver keeps what it was told.
type recordingObserver struct {
	mu  sync.Mutex
	got []observed
}

type observed struct {
	code, resp int32
	oneway     bool
	d          time.Duration
}

func (o *recordingObserver) ObserveRequest(code, resp int32, oneway bool, d time.Duration) {
	o.mu.Lock()
	o.got = append(o.got, observed{code, resp, oneway, d})
	o.mu.Unlock()
}

func (o *recordingObserver) snapshot() []observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]observed(nil), o.got...)
}

// TestObserverSeesEachAnsweredRequest: the observer gets the request and
// response codes of requests run by a family, inline, oneway, and of one
// refused by a full queue; a handler that defers its reply is not observed.
func TestObserverSeesEachAnsweredRequest(t *testing.T) {
	obs := &recordingObserver{}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Observer: obs})
	fam := s.NewFamily("send", 1, 1)
	release := make(chan struct{})
	s.Handle(protocol.SendMessage, fam, func(_ *Conn, req *Command) *Command {
		if req.ExtField("block") == "1" {
			<-release
		}
		return NewResponse(protocol.Success, "")
	})
	// The heartbeat handler measures its own run; the observed duration
	// must cover it (no sleep: the handler waits for the test).
	var handlerRun atomic.Int64
	entered, proceed := make(chan struct{}), make(chan struct{})
	s.Handle(protocol.HeartBeat, nil, func(*Conn, *Command) *Command {
		start := time.Now()
		close(entered)
		<-proceed
		handlerRun.Store(int64(time.Since(start)))
		return NewResponse(protocol.SubscriptionNotExist, "x")
	})
	s.Handle(protocol.PullMessage, nil, func(*Conn, *Command) *Command { return nil }) // deferred
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})

	// The deferred pull runs inline before the heartbeat (same reader):
	// answered first, it would be the first observed.
	if err := c.InvokeOneway(addr, NewRequest(protocol.PullMessage, nil, nil)); err != nil {
		t.Fatal(err)
	}
	hbDone := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.HeartBeat, nil, nil))
		hbDone <- err
	}()
	<-entered
	close(proceed)
	if err := <-hbDone; err != nil {
		t.Fatal(err)
	}
	if err := c.InvokeOneway(addr, NewRequest(protocol.SendMessage, nil, nil)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 5*time.Second, "oneway observed", func() bool { return len(obs.snapshot()) == 2 })
	// One blocked in the worker, one queued, the third refused.
	done := make(chan error, 2)
	send := func() {
		_, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.SendMessage, map[string]string{"block": "1"}, nil))
		done <- err
	}
	go send()
	wait.For(t, 5*time.Second, "worker busy", func() bool { return fam.busy.Load() == 1 })
	go send()
	wait.For(t, 5*time.Second, "queue full", func() bool { return fam.Queued() == 1 })
	resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.SendMessage, nil, nil))
	if err != nil || resp.Code != protocol.SystemBusy {
		t.Fatalf("want SYSTEM_BUSY, got %v %v", resp, err)
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	wait.For(t, 5*time.Second, "all observed", func() bool { return len(obs.snapshot()) == 5 })

	got := obs.snapshot()
	if g := got[0]; g.code != protocol.HeartBeat || g.resp != protocol.SubscriptionNotExist || g.oneway || g.d <= 0 || g.d < time.Duration(handlerRun.Load()) {
		t.Errorf("inline request observed as %+v", g)
	}
	if g := got[1]; g.code != protocol.SendMessage || g.resp != protocol.Success || !g.oneway {
		t.Errorf("oneway request observed as %+v", g)
	}
	// The refusal and the two family requests, in any order.
	var busy, ok int
	for _, g := range got[2:] {
		switch {
		case g.code == protocol.SendMessage && g.resp == protocol.SystemBusy && !g.oneway:
			busy++
		case g.code == protocol.SendMessage && g.resp == protocol.Success && !g.oneway:
			ok++
		default:
			t.Errorf("unexpected observation %+v", g)
		}
	}
	if busy != 1 || ok != 2 {
		t.Errorf("observed %d refusals and %d answered sends, want 1 and 2", busy, ok)
	}
}

// countingObserver is the cheapest observer: it only counts.
type countingObserver struct{ n atomic.Int64 }

func (o *countingObserver) ObserveRequest(int32, int32, bool, time.Duration) { o.n.Add(1) }

// BenchmarkInvokeObserved is BenchmarkInvokeLatency with and without a
// RequestObserver: the hook adds two clock reads and no allocation.
func BenchmarkInvokeObserved(b *testing.B) {
	for _, observed := range []bool{false, true} {
		b.Run("observed="+strconv.FormatBool(observed), func(b *testing.B) {
			cfg := ServerConfig{Addr: "127.0.0.1:0"}
			obs := &countingObserver{}
			if observed {
				cfg.Observer = obs
			}
			s := NewServer(cfg)
			resp := benchResponse(JSON)
			s.Handle(protocol.SendMessageV2, s.NewFamily("send", 4, 4096), func(*Conn, *Command) *Command {
				r := *resp
				return &r
			})
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Shutdown(context.Background()) }()
			c := NewClient(ClientConfig{})
			defer c.Close()
			addr, req := s.Addr().String(), benchRequest(JSON)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Invoke(context.Background(), addr, req); err != nil {
					b.Fatal(err)
				}
			}
			if observed && obs.n.Load() < int64(b.N) {
				b.Fatalf("observed %d of %d requests", obs.n.Load(), b.N)
			}
		})
	}
}
