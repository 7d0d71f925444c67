package remoting

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func TestServerInvokesClient(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	conns := make(chan *Conn, 1)
	s.Handle(protocol.HeartBeat, nil, func(c *Conn, req *Command) *Command {
		c.SetValue("clientID", req.ExtFields["clientID"])
		conns <- c
		return NewResponse(protocol.Success, "")
	})
	addr := startServer(t, s)

	c := newClient(t, ClientConfig{})
	notified := make(chan string, 1)
	c.Handle(protocol.GetConsumerRunningInfo, func(_ *Conn, req *Command) *Command {
		resp := NewResponse(protocol.Success, "")
		resp.Body = []byte("running:" + req.ExtFields["consumerGroup"])
		return resp
	})
	c.Handle(protocol.NotifyConsumerIdsChanged, func(_ *Conn, req *Command) *Command {
		notified <- req.ExtFields["consumerGroup"]
		return nil
	})
	if _, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.HeartBeat, map[string]string{"clientID": "cid-1"}, nil)); err != nil {
		t.Fatal(err)
	}
	sc := <-conns
	if sc.Value("clientID") != "cid-1" || sc.Value("absent") != nil {
		t.Fatalf("conn values: %v", sc.Value("clientID"))
	}

	resp, err := sc.Invoke(ctxTimeout(t, 5*time.Second), NewRequest(protocol.GetConsumerRunningInfo, map[string]string{"consumerGroup": "G"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "running:G" {
		t.Fatalf("server->client invoke got %+v", resp)
	}
	if err := sc.InvokeOneway(NewRequest(protocol.NotifyConsumerIdsChanged, map[string]string{"consumerGroup": "G2"}, nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-notified:
		if g != "G2" {
			t.Fatalf("notified %q", g)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("oneway request not delivered to the client handler")
	}
	// A code the client does not serve is answered 3, so the server does
	// not wait for nothing.
	resp, err = sc.Invoke(ctxTimeout(t, 5*time.Second), NewRequest(protocol.CheckTransactionState, nil, nil))
	if err != nil || resp.Code != protocol.RequestCodeNotSupported {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestClientReconnectsAfterServerCloses(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	s.Handle(protocol.UnregisterClient, nil, func(c *Conn, _ *Command) *Command {
		_ = c.Close() // drop the connection instead of answering
		return nil
	})
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	first, err := c.conn(ctxTimeout(t, 5*time.Second), addr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.UnregisterClient, nil, nil))
	if !errors.Is(err, ErrConnClosed) {
		t.Fatalf("invoke on a connection the server closed: %v, want ErrConnClosed", err)
	}
	resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.HeartBeat, nil, []byte("x")))
	if err != nil || string(resp.Body) != "x" {
		t.Fatalf("after reconnect: %+v %v", resp, err)
	}
	second, _ := c.conn(ctxTimeout(t, 5*time.Second), addr)
	if second == first {
		t.Fatal("client kept the broken connection")
	}
}

func TestClientSharesOneConnectionAndMatchesOutOfOrder(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	accepted := 0
	var mu sync.Mutex
	s.Handle(protocol.HeartBeat, nil, func(c *Conn, req *Command) *Command {
		mu.Lock()
		if c.Value("seen") == nil {
			c.SetValue("seen", true)
			accepted++
		}
		mu.Unlock()
		return nil
	})
	// Replies are delayed by an amount that reverses their order.
	s.Handle(protocol.SendMessage, s.NewFamily("send", 16, 64), func(c *Conn, req *Command) *Command {
		n, _ := strconv.Atoi(req.ExtFields["n"])
		time.Sleep(time.Duration(20-n) * time.Millisecond)
		resp := NewResponse(protocol.Success, "")
		resp.ExtFields = map[string]string{"n": req.ExtFields["n"]}
		return resp
	})
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			n := strconv.Itoa(i)
			ow := NewRequest(protocol.HeartBeat, nil, nil)
			if err := c.InvokeOneway(addr, ow); err != nil {
				errs <- err
				return
			}
			resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.SendMessage, map[string]string{"n": n}, nil))
			if err != nil {
				errs <- err
			} else if resp.ExtFields["n"] != n {
				errs <- errors.New("response for " + resp.ExtFields["n"] + " given to " + n)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 1 {
		t.Fatalf("client used %d connections, want 1", accepted)
	}
}

func TestInvokeTimeoutAndAsync(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	hold := make(chan struct{})
	held := map[string]*Command{}
	var heldConn *Conn
	var mu sync.Mutex
	s.Handle(protocol.PullMessage, nil, func(c *Conn, req *Command) *Command {
		mu.Lock()
		held[req.ExtFields["id"]] = req
		heldConn = c
		mu.Unlock()
		return nil // deferred: answered later with WriteResponse
	})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	addr := startServer(t, s)
	defer close(hold)
	c := newClient(t, ClientConfig{})

	// Sync: the context bounds the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := c.Invoke(ctx, addr, NewRequest(protocol.PullMessage, nil, nil))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}

	// Async: a response arrives through the callback.
	got := make(chan *Command, 1)
	if err := c.InvokeAsync(addr, NewRequest(protocol.HeartBeat, nil, []byte("a")), 5*time.Second, func(r *Command, err error) {
		if err != nil {
			t.Error(err)
		}
		got <- r
	}); err != nil {
		t.Fatal(err)
	}
	if r := <-got; string(r.Body) != "a" {
		t.Fatalf("async got %+v", r)
	}

	// Async: expiry.
	timedOut := make(chan error, 1)
	if err := c.InvokeAsync(addr, NewRequest(protocol.PullMessage, nil, nil), 50*time.Millisecond, func(r *Command, err error) {
		timedOut <- err
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-timedOut; !errors.Is(err, ErrTimeout) {
		t.Fatalf("async expiry: %v", err)
	}

	// A timeout shorter than any round trip still expires the call.
	for _, d := range []time.Duration{0, time.Nanosecond} {
		if err := c.InvokeAsync(addr, NewRequest(protocol.PullMessage, nil, nil), d, func(r *Command, err error) {
			timedOut <- err
		}); err != nil {
			t.Fatal(err)
		}
		if err := <-timedOut; !errors.Is(err, ErrTimeout) {
			t.Fatalf("async expiry after %v: %v", d, err)
		}
	}

	// A deferred reply (long polling) reaches a caller still waiting.
	done := make(chan *Command, 1)
	go func() {
		r, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.PullMessage, map[string]string{"id": "deferred"}, nil))
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	wait.For(t, 5*time.Second, "pull held", func() bool { mu.Lock(); defer mu.Unlock(); return held["deferred"] != nil })
	mu.Lock()
	req, conn := held["deferred"], heldConn
	mu.Unlock()
	resp := NewResponseTo(req, protocol.Success, "")
	resp.Body = []byte("late")
	if err := conn.WriteResponse(resp); err != nil {
		t.Fatal(err)
	}
	if r := <-done; string(r.Body) != "late" {
		t.Fatalf("deferred reply %+v", r)
	}
}

func TestPendingCallsFailWhenConnectionCloses(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	conns := make(chan *Conn, 2)
	s.Handle(protocol.PullMessage, nil, func(c *Conn, req *Command) *Command {
		conns <- c
		return nil
	})
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	asyncErr := make(chan error, 1)
	if err := c.InvokeAsync(addr, NewRequest(protocol.PullMessage, nil, nil), time.Minute, func(_ *Command, err error) { asyncErr <- err }); err != nil {
		t.Fatal(err)
	}
	syncErr := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctxTimeout(t, time.Minute), addr, NewRequest(protocol.PullMessage, nil, nil))
		syncErr <- err
	}()
	sc := <-conns
	<-conns
	_ = sc.Close()
	for _, ch := range []chan error{asyncErr, syncErr} {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrConnClosed) {
				t.Fatalf("got %v, want ErrConnClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("pending call not failed on close")
		}
	}
}

func TestShutdownDrainsInFlight(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	entered := make(chan struct{})
	release := make(chan struct{})
	s.Handle(protocol.SendMessage, s.NewFamily("send", 1, 1), func(*Conn, *Command) *Command {
		close(entered)
		<-release
		return NewResponse(protocol.Success, "drained")
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	c := newClient(t, ClientConfig{})
	result := make(chan *Command, 1)
	go func() {
		r, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.SendMessage, nil, nil))
		if err != nil {
			t.Error(err)
		}
		result <- r
	}()
	<-entered
	shutdownErr := make(chan error, 1)
	go func() { shutdownErr <- s.Shutdown(ctxTimeout(t, 5*time.Second)) }()
	// New requests are refused while draining, and no new connections.
	wait.For(t, 5*time.Second, "server stopping", func() bool { return s.stopping.Load() })
	r, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.SendMessage, nil, nil))
	if err != nil || r.Code != protocol.SystemBusy {
		t.Fatalf("request during drain: %+v %v", r, err)
	}
	select {
	case err := <-shutdownErr:
		t.Fatalf("shutdown returned %v before the handler finished", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if r := <-result; r == nil || r.Remark != "drained" {
		t.Fatalf("in-flight request got %+v", r)
	}
	if err := <-shutdownErr; err != nil {
		t.Fatal(err)
	}
	if _, err := newClient(t, ClientConfig{DialTimeout: time.Second}).Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.SendMessage, nil, nil)); err == nil {
		t.Fatal("server still answers after shutdown")
	}
}

func TestShutdownDeadline(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	release := make(chan struct{})
	entered := make(chan struct{})
	s.Handle(protocol.SendMessage, s.NewFamily("send", 1, 1), func(*Conn, *Command) *Command {
		close(entered)
		<-release
		return nil
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, ClientConfig{})
	if err := c.InvokeOneway(s.Addr().String(), NewRequest(protocol.SendMessage, nil, nil)); err != nil {
		t.Fatal(err)
	}
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown with a stuck handler: %v", err)
	}
	close(release)
	wait.For(t, 5*time.Second, "handler finished", func() bool { return s.inflight.Load() == 0 })
	s.workers.Wait()
}

func TestClientClosed(t *testing.T) {
	c := NewClient(ClientConfig{})
	_ = c.Close()
	if _, err := c.Invoke(context.Background(), "127.0.0.1:1", NewRequest(1, nil, nil)); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("got %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDialFailure(t *testing.T) {
	// A listener closed at once gives an address nobody listens on.
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, ClientConfig{DialTimeout: time.Second})
	if _, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(1, nil, nil)); err == nil {
		t.Fatal("invoke to a closed port succeeded")
	}
	if err := c.InvokeAsync(addr, NewRequest(1, nil, nil), time.Second, func(*Command, error) { t.Error("callback after a failed InvokeAsync") }); err == nil {
		t.Fatal("async invoke to a closed port succeeded")
	}
}

func TestClientHandlersAreBounded(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	conns := make(chan *Conn, 1)
	s.Handle(protocol.HeartBeat, nil, func(c *Conn, _ *Command) *Command {
		conns <- c
		return NewResponse(protocol.Success, "")
	})
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	release := make(chan struct{})
	c.Handle(protocol.ConsumeMessageDirectly, func(*Conn, *Command) *Command {
		<-release
		return NewResponse(protocol.Success, "")
	})
	defer close(release)
	if _, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	sc := <-conns
	for range maxClientHandlers {
		if err := sc.InvokeOneway(NewRequest(protocol.ConsumeMessageDirectly, nil, nil)); err != nil {
			t.Fatal(err)
		}
	}
	wait.For(t, 5*time.Second, "client handlers busy", func() bool { return len(c.handling) == maxClientHandlers })
	resp, err := sc.Invoke(ctxTimeout(t, 5*time.Second), NewRequest(protocol.ConsumeMessageDirectly, nil, nil))
	if err != nil || resp.Code != protocol.SystemBusy {
		t.Fatalf("resp %+v err %v, want SYSTEM_BUSY", resp, err)
	}
}

// TestLargeBodies moves bodies on both sides of directEncodeBody, up to
// near the frame limit, in both directions.
func TestLargeBodies(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	s.Handle(protocol.PullMessage, s.NewFamily("pull", 2, 8), echoHandler)
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	for _, n := range []int{directEncodeBody - 1, directEncodeBody, 1 << 20, DefaultMaxFrameSize - 4096} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(i * 7)
		}
		resp, err := c.Invoke(ctxTimeout(t, 10*time.Second), addr, NewRequest(protocol.PullMessage, nil, body))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(resp.Body, body) {
			t.Fatalf("%d bytes: body changed in transit", n)
		}
	}
	// One byte over the server's limit closes the connection instead.
	_, err := c.Invoke(ctxTimeout(t, 10*time.Second), addr, NewRequest(protocol.PullMessage, nil, make([]byte, DefaultMaxFrameSize)))
	if !errors.Is(err, ErrConnClosed) {
		t.Fatalf("oversized frame: %v, want ErrConnClosed", err)
	}
}
