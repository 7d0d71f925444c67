package remoting

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// What an idle connection costs (issue 18): live heap and goroutine stacks
// after a forced collection, per connection, once each connection has
// carried one request and its response (as a producer's heartbeat does) and
// then gone quiet.
//
// Each figure is the growth from before the connections were opened to
// after, divided by their number, so it holds everything a connection
// keeps: the Conn, its read buffer, its write buffers, its goroutines'
// stacks, the runtime's socket and timer state, and the peer end's where
// that is in this process too.

// idleSide is the end of the connections being measured.
type idleSide int

const (
	// sideServer: N raw sockets (no goroutine, no buffer of their own)
	// connected to a Server; the figure is the Server's connection plus
	// the raw socket pair underneath.
	sideServer idleSide = iota
	// sideClient: N Clients connected to a raw server; the figure is the
	// Client's connection plus the raw socket pair.
	sideClient
	// sideRaw: N raw socket pairs, nothing else: the floor both include.
	sideRaw
)

func (s idleSide) String() string { return [...]string{"server", "client", "raw"}[s] }

// idleCost is what openIdle measured.
type idleCost struct {
	bytesPerConn      float64 // live heap + stacks in use
	stackPerConn      float64 // of which stacks
	goroutinesPerConn float64
}

// liveMem is what liveBytes measured.
type liveMem struct {
	heap, stack float64
	goroutines  int
}

// liveBytes is the heap in use and the goroutine stacks after a
// collection.
func liveBytes() liveMem {
	runtime.GC()
	runtime.GC() // the first may leave what finalizers released
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return liveMem{heap: float64(ms.HeapAlloc), stack: float64(ms.StackInuse), goroutines: runtime.NumGoroutine()}
}

// heartbeatBody is what the measured connections send once, as a
// producer's heartbeat.
func heartbeatBody(i int) []byte {
	return fmt.Appendf(nil, `{"clientID":"127.0.0.1@idle-%d","producerDataSet":[{"groupName":"idle_producer"}],"consumerDataSet":[]}`, i)
}

// heartbeatFrame is heartbeatBody's request as a frame.
func heartbeatFrame(tb testing.TB, i int) []byte {
	req := NewRequest(int32(protocol.HeartBeat), nil, heartbeatBody(i))
	req.Opaque = int32(i + 1)
	frame, err := req.AppendFrame(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return frame
}

// readRawFrame reads one length-prefixed frame from nc.
func readRawFrame(nc net.Conn) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(nc, l[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(l[:]))
	_, err := io.ReadFull(nc, b)
	return b, err
}

// rawListener accepts sockets and keeps them; with answer it serves each
// with a goroutine that answers one request (the sideClient peer), and
// then lets that goroutine end so that only the socket remains.
type rawListener struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newRawListener(tb testing.TB, answer bool) *rawListener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r := &rawListener{ln: ln}
	r.wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conns = append(r.conns, nc)
			r.mu.Unlock()
			if !answer {
				continue
			}
			r.wg.Go(func() {
				req, err := readRawFrame(nc)
				if err != nil {
					return
				}
				cmd, err := decodeFrame(req, nil)
				if err != nil {
					return
				}
				resp := NewResponseTo(cmd, protocol.Success, "")
				resp.Flag |= flagResponse
				frame, _ := resp.AppendFrame(nil)
				_, _ = nc.Write(frame)
			})
		}
	})
	return r
}

func (r *rawListener) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

func (r *rawListener) close() {
	_ = r.ln.Close()
	r.mu.Lock()
	for _, nc := range r.conns {
		_ = nc.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// openIdle opens n idle connections of the given side, measures them and
// closes everything again.
func openIdle(tb testing.TB, side idleSide, n int) idleCost {
	tb.Helper()
	base := liveBytes()
	var (
		cleanup []func()
		raws    []net.Conn
	)
	defer func() {
		for _, nc := range raws {
			_ = nc.Close()
		}
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	switch side {
	case sideServer:
		s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
		s.Handle(int32(protocol.HeartBeat), s.NewFamily("heartbeat", 1, 1024), func(*Conn, *Command) *Command {
			return NewResponse(protocol.Success, "")
		})
		if err := s.Start(); err != nil {
			tb.Fatal(err)
		}
		cleanup = append(cleanup, func() { _ = s.Shutdown(context.Background()) })
		// The server's own fixed cost (listener, family worker) is not
		// the connections'.
		base = liveBytes()
		for i := range n {
			nc, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				tb.Fatal(err)
			}
			raws = append(raws, nc)
			if _, err := nc.Write(heartbeatFrame(tb, i)); err != nil {
				tb.Fatal(err)
			}
			if _, err := readRawFrame(nc); err != nil {
				tb.Fatal(err)
			}
		}
		wait.For(tb, 30*time.Second, "the server to hold every connection", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.mu.conns) == n
		})
	case sideClient:
		r := newRawListener(tb, true)
		cleanup = append(cleanup, r.close)
		addr := r.ln.Addr().String()
		base = liveBytes()
		for i := range n {
			c := NewClient(ClientConfig{})
			cleanup = append(cleanup, func() { _ = c.Close() })
			req := NewRequest(int32(protocol.HeartBeat), nil, heartbeatBody(i))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			resp, err := c.Invoke(ctx, addr, req)
			cancel()
			if err != nil {
				tb.Fatal(err)
			}
			if resp.Code != protocol.Success {
				tb.Fatalf("heartbeat %d: code %d", i, resp.Code)
			}
		}
		// The answering goroutines end after their one answer.
		wait.For(tb, 30*time.Second, "the raw server's goroutines to end", func() bool {
			return runtime.NumGoroutine()-base.goroutines <= 2*n
		})
	case sideRaw:
		r := newRawListener(tb, false)
		cleanup = append(cleanup, r.close)
		base = liveBytes()
		for range n {
			nc, err := net.Dial("tcp", r.ln.Addr().String())
			if err != nil {
				tb.Fatal(err)
			}
			raws = append(raws, nc)
		}
		wait.For(tb, 30*time.Second, "every raw connection accepted", func() bool { return r.count() == n })
	}
	live := liveBytes()
	return idleCost{
		bytesPerConn:      (live.heap + live.stack - base.heap - base.stack) / float64(n),
		stackPerConn:      (live.stack - base.stack) / float64(n),
		goroutinesPerConn: float64(live.goroutines-base.goroutines) / float64(n),
	}
}

// BenchmarkIdleConn reports what one idle connection keeps alive (B/conn:
// heap and stacks after a forced GC, stack-B/conn of which stacks;
// goroutines/conn), for a Server's
// connection, a Client's, and a bare socket pair (the floor under both).
// The loop only repeats the measurement; ns/op is the time to open,
// measure and close 1,000 connections.
func BenchmarkIdleConn(b *testing.B) {
	const n = 1000
	for _, side := range []idleSide{sideServer, sideClient, sideRaw} {
		b.Run("side="+side.String(), func(b *testing.B) {
			var cost idleCost
			for b.Loop() {
				cost = openIdle(b, side, n)
			}
			b.ReportMetric(cost.bytesPerConn, "B/conn")
			b.ReportMetric(cost.stackPerConn, "stack-B/conn")
			b.ReportMetric(cost.goroutinesPerConn, "goroutines/conn")
		})
	}
}

// maxIdleConnBytes bounds what an idle connection (Server's or Client's,
// with the raw socket pair under it) may keep. It measures about 6 KiB: the
// reader's stack (4 KiB), the Conn and the runtime's socket. It was 77 KiB
// with a read buffer held for the connection's lifetime and a writer
// goroutine parked beside the reader; the bound leaves room for -race and
// runtime changes, not for either of those.
const maxIdleConnBytes = 20 << 10

// TestIdleConnMemory is the regression check of issue 18's per-connection
// figure: a measurement against a generous bound, and at most one goroutine
// (the reader) per idle connection.
func TestIdleConnMemory(t *testing.T) {
	const n = 300
	for _, side := range []idleSide{sideServer, sideClient} {
		t.Run(side.String(), func(t *testing.T) {
			cost := openIdle(t, side, n)
			t.Logf("%s: %.0f B/conn (stacks %.0f), %.2f goroutines/conn", side, cost.bytesPerConn, cost.stackPerConn, cost.goroutinesPerConn)
			if cost.bytesPerConn > maxIdleConnBytes {
				t.Errorf("an idle %s connection keeps %.0f bytes, want at most %d", side, cost.bytesPerConn, maxIdleConnBytes)
			}
			// A few goroutines of the test's own may come and go.
			if cost.goroutinesPerConn > 1+10.0/n {
				t.Errorf("an idle %s connection keeps %.2f goroutines, want 1 (its reader)", side, cost.goroutinesPerConn)
			}
		})
	}
}

// TestReadBufferAcrossSizes sends pipelined requests of sizes around the
// read buffer's (whole frames in one read, frames split across reads,
// frames larger than the buffer) over real sockets, where the reader gives
// its buffer back between reads, and checks every echoed body.
func TestReadBufferAcrossSizes(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	s.Handle(int32(protocol.SendMessageV2), s.NewFamily("echo", 4, 4096), func(_ *Conn, req *Command) *Command {
		r := NewResponse(protocol.Success, "")
		r.Body = req.Body
		return r
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Shutdown(context.Background()) }()
	c := NewClient(ClientConfig{})
	defer c.Close()
	addr := s.Addr().String()
	sizes := []int{0, 1, 100, readBufferSize - 200, readBufferSize - 20, readBufferSize, readBufferSize + 1, 3 * readBufferSize / 2, 5 * readBufferSize, 1 << 20}
	type result struct {
		i   int
		err error
	}
	const rounds = 4
	done := make(chan result, rounds*len(sizes))
	for round := range rounds {
		for i, n := range sizes {
			body := make([]byte, n)
			for j := range body {
				body[j] = byte(i + j + round)
			}
			err := c.InvokeAsync(addr, NewRequest(int32(protocol.SendMessageV2), nil, body), 30*time.Second, func(resp *Command, err error) {
				if err == nil && !bytes.Equal(resp.Body, body) {
					err = fmt.Errorf("body of %d bytes came back as %d different bytes", n, len(resp.Body))
				}
				done <- result{i, err}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for range rounds * len(sizes) {
		r := <-done
		if r.err != nil {
			t.Errorf("size %d: %v", sizes[r.i], r.err)
		}
	}
	// Then one at a time: each read finds the socket empty first.
	for i, n := range sizes {
		body := make([]byte, n)
		for j := range body {
			body[j] = byte(3*i + j)
		}
		resp, err := c.Invoke(ctxTimeout(t, 30*time.Second), addr, NewRequest(int32(protocol.SendMessageV2), nil, body))
		if err != nil {
			t.Fatalf("size %d: %v", n, err)
		}
		if !bytes.Equal(resp.Body, body) {
			t.Fatalf("size %d: body differs", n)
		}
	}
}

// TestConnValues: SetValue replaces a key's value and keeps the others.
func TestConnValues(t *testing.T) {
	var c Conn
	if c.Value("a") != nil {
		t.Fatal("value before any SetValue")
	}
	c.SetValue("a", 1)
	c.SetValue("b", 2)
	c.SetValue("a", 3)
	if c.Value("a") != 3 || c.Value("b") != 2 || c.Value("c") != nil {
		t.Fatalf("values: a=%v b=%v c=%v", c.Value("a"), c.Value("b"), c.Value("c"))
	}
}

// TestReadBuffersUnderChurn is the Java lite pull consumer's pattern of
// issue 18 against the pooled read buffers, over real sockets: several
// connections at once, each a stream of pipelined requests of mixed sizes
// (a few larger than the read buffer) written in pieces of every length
// from 1 to 97 bytes with yields between them, so that the readers find
// frames split at every offset, the socket empty between pieces (and give
// their buffers back to the pool the connections share) and other
// connections' buffers coming and going; responses are written meanwhile,
// by the workers themselves and, for every third request, later from
// another goroutine through the writer. Every request must be answered
// once with its own body, and no connection may close.
func TestReadBuffersUnderChurn(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	var deferred sync.WaitGroup
	t.Cleanup(deferred.Wait)
	s.Handle(protocol.SendMessage, s.NewFamily("churn", 4, 4096), func(c *Conn, req *Command) *Command {
		resp := NewResponseTo(req, protocol.Success, "")
		resp.Body = req.Body
		if req.Opaque%3 == 0 {
			deferred.Go(func() {
				runtime.Gosched()
				_ = c.WriteResponse(resp)
			})
			return nil
		}
		return resp
	})
	var closes atomic.Int32
	s.OnConnClose(func(*Conn) { closes.Add(1) })
	addr := startServer(t, s)

	const conns, frames = 4, 200
	body := func(conn, i int) []byte {
		n := (i * 37) % 300
		if i%50 == 7 {
			n = readBufferSize + i // assembled beyond the read buffer
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(conn*31 + i + j)
		}
		return b
	}
	errs := make(chan error, 2*conns)
	var wg sync.WaitGroup
	for k := range conns {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		var stream []byte
		for i := range frames {
			req := NewRequest(protocol.SendMessage, map[string]string{"conn": strconv.Itoa(k)}, body(k, i))
			req.Opaque = int32(i)
			req.SerializeType = SerializeType(i % 2)
			if stream, err = req.AppendFrame(stream); err != nil {
				t.Fatal(err)
			}
		}
		wg.Go(func() {
			for off, piece := 0, 1; off < len(stream); off, piece = off+piece, piece%97+1 {
				if _, err := nc.Write(stream[off:min(off+piece, len(stream))]); err != nil {
					errs <- fmt.Errorf("conn %d: write: %w", k, err)
					return
				}
				runtime.Gosched()
			}
		})
		wg.Go(func() {
			rc := &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
			seen := make(map[int32]bool, frames)
			for range frames {
				r, err := rc.read(30 * time.Second)
				if err != nil {
					errs <- fmt.Errorf("conn %d: %d of %d answered, then: %w", k, len(seen), frames, err)
					return
				}
				if seen[r.Opaque] || r.Opaque < 0 || r.Opaque >= frames {
					errs <- fmt.Errorf("conn %d: response %d unexpected (seen: %v)", k, r.Opaque, seen[r.Opaque])
					return
				}
				seen[r.Opaque] = true
				if want := body(k, int(r.Opaque)); !bytes.Equal(r.Body, want) {
					errs <- fmt.Errorf("conn %d: request %d: body of %d bytes came back as %d different bytes", k, r.Opaque, len(want), len(r.Body))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := closes.Load(); n != 0 {
		t.Errorf("%d connections closed", n)
	}
}
