package remoting

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// startServer starts s (configured by the caller) and shuts it down when the
// test ends.
func startServer(t *testing.T, s *Server) string {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s.Addr().String()
}

func newClient(t *testing.T, cfg ClientConfig) *Client {
	t.Helper()
	c := NewClient(cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// echoHandler answers with the request's ext fields and body.
func echoHandler(_ *Conn, req *Command) *Command {
	resp := NewResponse(protocol.Success, "ok")
	resp.ExtFields = req.ExtFields
	resp.Body = req.Body
	return resp
}

func TestInvokeRoundTrip(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	fam := s.NewFamily("echo", 2, 16)
	s.Handle(protocol.SendMessage, fam, echoHandler)
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	for _, st := range []SerializeType{JSON, RocketMQ} {
		for _, code := range []int32{protocol.SendMessage, protocol.HeartBeat} {
			req := NewRequest(code, map[string]string{"topic": "T"}, []byte("body"))
			req.SerializeType = st
			resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, req)
			if err != nil {
				t.Fatal(err)
			}
			if !resp.IsResponse() || resp.Code != protocol.Success || resp.Remark != "ok" ||
				resp.ExtFields["topic"] != "T" || string(resp.Body) != "body" || resp.Opaque != req.Opaque {
				t.Fatalf("bad response %+v to %+v", resp, req)
			}
			// The response travels in the request's serialization.
			if resp.SerializeType != st {
				t.Fatalf("response serialization %v, request %v", resp.SerializeType, st)
			}
		}
	}
}

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func TestBadFramesCloseOnlyThatConnection(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", MaxFrameSize: 1 << 20, Logger: logger})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	s.OnConnClose(func(*Conn) { panic("a buggy callback must not take the server down") })
	closedConns := make(chan string, 16)
	s.OnConnClose(func(c *Conn) { closedConns <- c.RemoteAddr() })
	addr := startServer(t, s)

	good := dialRaw(t, addr)
	ping := func() {
		t.Helper()
		good.send(&Command{Code: protocol.HeartBeat, Opaque: 77})
		if r := good.mustRead(); r.Opaque != 77 || r.Code != protocol.Success {
			t.Fatalf("well-behaved connection got %+v", r)
		}
	}
	ping()

	// Each case with the text its log line must carry.
	cases := map[string]struct {
		b   []byte
		log string
	}{
		"2 GiB length":           {[]byte{0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}, "length=2147483647"},
		"negative length":        {[]byte{0xFF, 0xFF, 0xFF, 0xF0}, "length=-16"},
		"length below 4":         {[]byte{0, 0, 0, 2, 0, 0}, "length=2"},
		"over max frame":         {binary.BigEndian.AppendUint32(nil, 1<<20-3), "length=1048573"},
		"garbage JSON":           {frameOf(JSON, []byte(`{"code":10,`), nil), "JSON header"},
		"header length > frame":  {[]byte{0, 0, 0, 6, 0, 0, 0, 200, '{', '}'}, "header length 200 exceeds"},
		"unknown serialize type": {frameOf(5, []byte(`{}`), nil), "serialize type 5"},
		"bad binary header":      {frameOf(RocketMQ, []byte{0, 10, 0}, nil), "ROCKETMQ header"},
		"TLS client hello":       {[]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}, "TLS is not supported"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := tc.b
			bad := dialRaw(t, addr)
			bad.write(b)
			bad.expectClosed()
			select {
			case <-closedConns:
			case <-time.After(5 * time.Second):
				t.Fatal("close callback did not run")
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("no log line with %q in:\n%s", tc.log, logs.String())
			}
			ping()
		})
	}

	t.Run("truncated frame then hang up", func(t *testing.T) {
		bad := dialRaw(t, addr)
		f := frameOf(JSON, []byte(`{"code":34}`), []byte("body"))
		bad.write(f[:len(f)-2])
		_ = bad.nc.Close()
		select {
		case <-closedConns:
		case <-time.After(5 * time.Second):
			t.Fatal("close callback did not run")
		}
		ping()
	})
}

func TestUnknownCodeAndOneway(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	panicky := func(*Conn, *Command) *Command { panic("boom: nil header field") }
	s.Handle(protocol.SendMessage, s.NewFamily("send", 1, 4), panicky)
	s.Handle(protocol.PullMessage, nil, panicky)
	addr := startServer(t, s)
	rc := dialRaw(t, addr)

	// Oneway requests are never answered: not for unknown codes, not after
	// a panic, not when the handler returns a response. The reply to the
	// plain request that follows must therefore be the next frame.
	for _, code := range []int32{9999, protocol.SendMessage, protocol.PullMessage, protocol.HeartBeat} {
		ow := &Command{Code: code, Opaque: 1}
		ow.MarkOneway()
		rc.send(ow)
	}
	rc.send(&Command{Code: 9999, Opaque: 2, SerializeType: RocketMQ})
	r := rc.mustRead()
	if r.Opaque != 2 || r.Code != protocol.RequestCodeNotSupported || r.Remark != " request type 9999 not supported" || !r.IsResponse() {
		t.Fatalf("unknown code answered %+v", r)
	}
	if r.SerializeType != RocketMQ {
		t.Fatalf("response serialization %v, want the request's", r.SerializeType)
	}
	for i, code := range []int32{protocol.SendMessage, protocol.PullMessage} {
		rc.send(&Command{Code: code, Opaque: int32(10 + i)})
		r := rc.mustRead()
		if r.Opaque != int32(10+i) || r.Code != protocol.SystemError || r.Remark != "boom: nil header field" {
			t.Fatalf("panicking handler answered %+v", r)
		}
	}
}

func TestHandleDefault(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	s.HandleDefault(nil, func(_ *Conn, req *Command) *Command {
		return NewResponse(protocol.Success, "default")
	})
	addr := startServer(t, s)
	resp, err := newClient(t, ClientConfig{}).Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(4242, nil, nil))
	if err != nil || resp.Remark != "default" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestSystemBusyWhenFamilyQueueFull(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	fam := s.NewFamily("send", 1, 1)
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	s.Handle(protocol.SendMessage, fam, func(c *Conn, req *Command) *Command {
		entered <- struct{}{}
		<-release
		return NewResponse(protocol.Success, "")
	})
	addr := startServer(t, s)
	rc := dialRaw(t, addr)

	rc.send(&Command{Code: protocol.SendMessage, Opaque: 1}) // taken by the worker
	<-entered
	rc.send(&Command{Code: protocol.SendMessage, Opaque: 2}) // waits in the queue
	wait.For(t, 5*time.Second, "request 2 queued", func() bool { return fam.Queued() == 1 })
	ow := &Command{Code: protocol.SendMessage, Opaque: 3} // rejected silently
	ow.MarkOneway()
	rc.send(ow)
	rc.send(&Command{Code: protocol.SendMessage, Opaque: 4}) // rejected at once
	r := rc.mustRead()
	if r.Opaque != 4 || r.Code != protocol.SystemBusy || r.Remark != "[OVERLOAD]system busy, start flow control for a while" {
		t.Fatalf("want SYSTEM_BUSY for opaque 4, got %+v", r)
	}
	close(release)
	got := map[int32]int32{}
	for range 2 {
		r := rc.mustRead()
		got[r.Opaque] = r.Code
	}
	if got[1] != protocol.Success || got[2] != protocol.Success || len(got) != 2 {
		t.Fatalf("after release got %v", got)
	}
	if _, err := rc.read(100 * time.Millisecond); err == nil {
		t.Fatal("the rejected oneway request was answered")
	}
}

func TestIdleConnectionClosed(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: 150 * time.Millisecond})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	closed := make(chan struct{}, 1)
	s.OnConnClose(func(*Conn) { closed <- struct{}{} })
	addr := startServer(t, s)
	rc := dialRaw(t, addr)
	// Activity keeps it open past the timeout...
	var last time.Time
	for i := range 5 {
		rc.send(&Command{Code: protocol.HeartBeat, Opaque: int32(i)})
		rc.mustRead()
		last = time.Now()
		time.Sleep(50 * time.Millisecond)
	}
	// ...silence closes it.
	rc.expectClosed()
	if d := time.Since(last); d < 140*time.Millisecond {
		t.Fatalf("closed after %v of silence, want about 150ms", d)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("close callback did not run")
	}
}

func TestFamilyMaxQueueWait(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	fam := s.NewFamily("send", 1, 4)
	fam.SetMaxQueueWait(20 * time.Millisecond)
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	s.Handle(protocol.SendMessage, fam, func(*Conn, *Command) *Command {
		entered <- struct{}{}
		<-release
		return NewResponse(protocol.Success, "")
	})
	addr := startServer(t, s)
	rc := dialRaw(t, addr)
	rc.send(&Command{Code: protocol.SendMessage, Opaque: 1})
	<-entered
	rc.send(&Command{Code: protocol.SendMessage, Opaque: 2})
	wait.For(t, 5*time.Second, "request 2 queued", func() bool { return fam.Queued() == 1 })
	time.Sleep(40 * time.Millisecond) // let request 2 overstay its welcome
	close(release)
	got := map[int32]*Command{}
	for range 2 {
		r := rc.mustRead()
		got[r.Opaque] = r
	}
	if got[1] == nil || got[1].Code != protocol.Success {
		t.Fatalf("request 1: %+v", got[1])
	}
	if r := got[2]; r == nil || r.Code != protocol.SystemBusy || !strings.HasPrefix(r.Remark, "[TIMEOUT_CLEAN_QUEUE]broker busy") {
		t.Fatalf("request 2: %+v", r)
	}
	rc.send(&Command{Code: protocol.SendMessage, Opaque: 3})
	if r := rc.mustRead(); r.Opaque != 3 || r.Code != protocol.Success {
		t.Fatalf("request 3: %+v", r)
	}
}

func TestBadFrameWarningsAreRateLimited(t *testing.T) {
	var w warnLimiter
	ok, _ := w.allow()
	if !ok {
		t.Fatal("first warning held back")
	}
	for range 5 {
		if ok, _ := w.allow(); ok {
			t.Fatal("warning within a second let through")
		}
	}
	w.last.Store(time.Now().Add(-2 * time.Second).UnixNano())
	ok, suppressed := w.allow()
	if !ok || suppressed != 5 {
		t.Fatalf("after a second: ok=%v suppressed=%d", ok, suppressed)
	}
}

// TestFramesSplitAcrossReads sends several frames as one byte stream cut
// into pieces of every size from 1 byte up: the reader must reassemble them
// whatever the cuts.
func TestFramesSplitAcrossReads(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	addr := startServer(t, s)
	var stream []byte
	const frames = 6
	for i := range frames {
		c := NewRequest(protocol.HeartBeat, map[string]string{"i": strconv.Itoa(i)}, []byte(strings.Repeat("x", i*7)))
		c.Opaque = int32(i)
		c.SerializeType = SerializeType(i % 2)
		var err error
		if stream, err = c.AppendFrame(stream); err != nil {
			t.Fatal(err)
		}
	}
	for _, piece := range []int{1, 2, 3, 5, 8, 13, 64, len(stream)} {
		rc := dialRaw(t, addr)
		for off := 0; off < len(stream); off += piece {
			rc.write(stream[off:min(off+piece, len(stream))])
		}
		for i := range frames {
			r := rc.mustRead()
			if r.Opaque != int32(i) || r.ExtFields["i"] != strconv.Itoa(i) || len(r.Body) != i*7 || r.SerializeType != SerializeType(i%2) {
				t.Fatalf("piece %d: frame %d answered %+v", piece, i, r)
			}
		}
	}
}

// TestKeptBodiesSurviveLaterFrames: a handler and a caller may keep the
// Body they received while more frames arrive on the same connection. Small
// frames are decoded inside the read buffer, so this fails if a Body were
// left aliasing it.
func TestKeptBodiesSurviveLaterFrames(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	var mu sync.Mutex
	kept := map[string][]byte{}
	s.Handle(protocol.SendMessage, s.NewFamily("keep", 2, 256), func(_ *Conn, req *Command) *Command {
		mu.Lock()
		kept[req.ExtField("id")] = req.Body
		mu.Unlock()
		return echoHandler(nil, req)
	})
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	ctx := ctxTimeout(t, 10*time.Second)
	const callers, perCaller = 8, 50
	body := func(id string) []byte { return bytes.Repeat([]byte(id+";"), 20) }
	var wg sync.WaitGroup
	got := make([][]*Command, callers)
	for g := range callers {
		wg.Go(func() {
			for i := range perCaller {
				id := strconv.Itoa(g*perCaller + i)
				resp, err := c.Invoke(ctx, addr, NewRequest(protocol.SendMessage, map[string]string{"id": id}, body(id)))
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], resp)
			}
		})
	}
	wg.Wait()
	for _, resps := range got {
		for _, resp := range resps {
			id := resp.ExtField("id")
			if want := body(id); !bytes.Equal(resp.Body, want) {
				t.Fatalf("response %s: body changed after receipt: %q", id, resp.Body)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(kept) != callers*perCaller {
		t.Fatalf("handler kept %d bodies, want %d", len(kept), callers*perCaller)
	}
	for id, b := range kept {
		if !bytes.Equal(b, body(id)) {
			t.Fatalf("request %s: body changed after receipt: %q", id, b)
		}
	}
}

// TestResponsesToSlowReaderKeepOrder: a worker that writes its response
// itself (the writer idle, nothing else queued) must hand what the kernel
// did not take to the writer, ahead of the responses queued meanwhile. The
// client reads nothing until every response has been produced, so the
// socket fills and both the short-write and the queued paths are taken.
func TestResponsesToSlowReaderKeepOrder(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	var handled atomic.Int32
	s.Handle(protocol.SendMessage, s.NewFamily("one", 1, 1024), func(_ *Conn, req *Command) *Command {
		handled.Add(1)
		resp := NewResponse(protocol.Success, "")
		resp.Body = bytes.Repeat([]byte(req.ExtField("i")+","), 8000)
		return resp
	})
	addr := startServer(t, s)
	rc := dialRaw(t, addr)
	// One request at a time, so that each response finds the worker idle
	// and goes out on its own until the socket is full (a few MiB on
	// loopback); later ones queue for the writer, and once 4 MiB are
	// queued the worker waits, so the wait for each is bounded.
	const n = 300
	for i := range n {
		req := NewRequest(protocol.SendMessage, map[string]string{"i": strconv.Itoa(i)}, nil)
		req.Opaque = int32(i)
		rc.send(req)
		deadline := time.Now().Add(20 * time.Millisecond)
		for handled.Load() <= int32(i) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Microsecond)
		}
	}
	for i := range n {
		r := rc.mustRead()
		want := bytes.Repeat([]byte(strconv.Itoa(i)+","), 8000)
		if r.Opaque != int32(i) || !bytes.Equal(r.Body, want) {
			t.Fatalf("response %d: opaque %d, body of %d bytes (%.20q...)", i, r.Opaque, len(r.Body), r.Body)
		}
	}
}
