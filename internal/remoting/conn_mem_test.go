package remoting

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
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
	goroutinesPerConn float64
}

// liveBytes is the heap in use plus goroutine stacks after a collection.
func liveBytes() (uint64, int) {
	runtime.GC()
	runtime.GC() // the first may leave what finalizers released
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse, runtime.NumGoroutine()
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
	base, g0 := liveBytes()
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
		base, g0 = liveBytes()
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
		base, g0 = liveBytes()
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
			return runtime.NumGoroutine()-g0 <= 2*n
		})
	case sideRaw:
		r := newRawListener(tb, false)
		cleanup = append(cleanup, r.close)
		base, g0 = liveBytes()
		for range n {
			nc, err := net.Dial("tcp", r.ln.Addr().String())
			if err != nil {
				tb.Fatal(err)
			}
			raws = append(raws, nc)
		}
		wait.For(tb, 30*time.Second, "every raw connection accepted", func() bool { return r.count() == n })
	}
	live, g := liveBytes()
	return idleCost{
		bytesPerConn:      (float64(live) - float64(base)) / float64(n),
		goroutinesPerConn: float64(g-g0) / float64(n),
	}
}

// BenchmarkIdleConn reports what one idle connection keeps alive (B/conn:
// heap and stacks after a forced GC; goroutines/conn), for a Server's
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
			b.ReportMetric(cost.goroutinesPerConn, "goroutines/conn")
		})
	}
}
