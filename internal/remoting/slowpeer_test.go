package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// serverConns returns the server's open connections by remote address.
func serverConns(s *Server) map[string]*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]*Conn, len(s.mu.conns))
	for c := range s.mu.conns {
		m[c.RemoteAddr()] = c
	}
	return m
}

// TestStalledPeersCostLittleAndCloseAtIdleTimeout is the Slowloris case:
// 100 connections each announce a 16 MiB frame and send 8 bytes of it, one
// sends 100 KiB of it, one sends nothing. The announced lengths cost no
// memory (the 100 KiB one holds a frame buffer of at most twice what it
// sent), and every connection is closed IdleTimeout after its last byte,
// within the tolerance of timers and scheduling, not a period later.
func TestStalledPeersCostLittleAndCloseAtIdleTimeout(t *testing.T) {
	const (
		// Long enough that a loaded machine (-race, a load of 12 on 2
		// cores) rarely stalls the test process for a noticeable part of
		// it.
		idle = time.Second
		// Timer and scheduling latency on such a machine; milliseconds
		// when it is idle. The bug it guards against was a whole idle
		// period late.
		tolerance = idle / 2
		stalled   = 100
		announced = DefaultMaxFrameSize - 4 // the largest length allowed
		bigPart   = 100 << 10
	)
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: idle})
	var reasons sync.Map // remote address -> close reason
	var closed atomic.Int32
	s.OnConnClose(func(c *Conn) {
		reasons.Store(c.RemoteAddr(), c.closeErr)
		closed.Add(1)
	})
	addr := startServer(t, s)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	type peer struct {
		nc net.Conn
		// The last write's start (the server cannot have read its bytes
		// earlier) and end; for the silent peer, the dial's.
		lastBefore, lastAfter time.Time
		sent                  int // bytes of the frame after the length field
	}
	dial := func() *peer {
		p := &peer{lastBefore: time.Now()}
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		p.nc, p.lastAfter = nc, time.Now()
		return p
	}
	send := func(p *peer, frameBytes int) {
		b := make([]byte, 4+frameBytes)
		binary.BigEndian.PutUint32(b, announced)
		p.lastBefore = time.Now()
		if _, err := p.nc.Write(b); err != nil {
			t.Fatal(err)
		}
		p.lastAfter = time.Now()
		p.sent = frameBytes
	}
	var peers []*peer
	for range stalled {
		p := dial()
		send(p, 8)
		peers = append(peers, p)
	}
	big := dial()
	send(big, bigPart)
	silent := dial()
	peers = append(peers, big, silent)

	// Every sending peer's connection waits for the rest of its frame; the
	// big one has taken its bytes beyond the read buffer into a frame
	// buffer; the silent one is accepted.
	bigAddr, silentAddr := big.nc.LocalAddr().String(), silent.nc.LocalAddr().String()
	wait.For(t, 10*time.Second, "all frames announced", func() bool {
		n := 0
		conns := serverConns(s)
		for a, c := range conns {
			if c.frameLen.Load() == announced && (a != bigAddr || c.frameHeld.Load() > 0) {
				n++
			}
		}
		return n == stalled+1 && conns[silentAddr] != nil
	})
	// The server has read the peers' bytes by now: on a loaded machine
	// that can be well after they were written, and the idle period runs
	// from when it read them.
	seen := time.Now()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	for a, c := range serverConns(s) {
		held := c.frameHeld.Load()
		switch {
		case a == bigAddr && held > 2*bigPart:
			t.Errorf("peer that sent %d bytes holds a frame buffer of %d, want at most twice that", bigPart, held)
		case a != bigAddr && held != 0:
			t.Errorf("peer %s that sent 8 bytes holds a frame buffer of %d", a, held)
		}
	}
	// Before chunked reads: 101 x 16 MiB. Now: the read buffers (64 KiB
	// each), the one frame buffer and the connections' bookkeeping.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB while %d connections announced 16 MiB frames", allocated>>10, stalled+1)
	if limit := uint64(len(peers)) * (256 << 10); allocated > limit {
		t.Errorf("allocated %d bytes for %d stalled connections, want at most %d", allocated, len(peers), limit)
	}

	// Each connection is closed IdleTimeout after its last byte.
	closedAt := make([]time.Time, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			_ = p.nc.SetReadDeadline(time.Now().Add(5 * idle))
			var b [1]byte
			_, err := p.nc.Read(b[:])
			closedAt[i] = time.Now()
			if err == nil || isTimeout(err) {
				t.Errorf("peer %d: read %v, want the connection closed", i, err)
			}
		})
	}
	wg.Wait()
	var latest time.Duration
	for i, p := range peers {
		if d := closedAt[i].Sub(p.lastBefore); d < idle {
			t.Errorf("peer %d (sent %d bytes) closed %v after its last write, before the idle timeout %v", i, p.sent, d, idle)
		}
		d := closedAt[i].Sub(p.lastAfter)
		if d > idle+tolerance && closedAt[i].Sub(seen) > idle+tolerance {
			t.Errorf("peer %d (sent %d bytes) closed %v after its last write, want %v (+%v)", i, p.sent, d, idle, tolerance)
		}
		latest = max(latest, d)
	}
	t.Logf("closed at most %v after the last write (idle timeout %v)", latest, idle)
	wait.For(t, 5*time.Second, "close callbacks", func() bool { return int(closed.Load()) == len(peers) })
	for _, p := range peers {
		r, _ := reasons.Load(p.nc.LocalAddr().String())
		if err, _ := r.(error); !errors.Is(err, errIdle) {
			t.Errorf("peer %s closed for %v, want the idle timeout", p.nc.LocalAddr(), r)
		}
	}
}

// TestSlowLargeFrameArrivesWhole: a frame many times the read buffer, sent
// in pieces over more than an idle period, arrives whole and in order, with
// the frame sent right behind it, and keeps its connection: each piece is
// activity (as in Java, which counts every read).
func TestSlowLargeFrameArrivesWhole(t *testing.T) {
	// Client and server share the process: a stall of it (a loaded
	// machine) delays the next piece as much as the reader, so the gaps
	// are a small part of the idle period.
	const idle = 600 * time.Millisecond
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: idle})
	bodies := make(chan []byte, 2)
	s.Handle(protocol.SendMessage, nil, func(_ *Conn, req *Command) *Command {
		bodies <- req.Body
		return NewResponse(protocol.Success, "")
	})
	s.OnConnClose(func(c *Conn) { t.Logf("server closed the connection: %v", c.closeErr) })
	addr := startServer(t, s)
	rc := dialRaw(t, addr)
	big := make([]byte, 1<<20+12345) // crosses every chunk size up to 2 MiB
	for i := range big {
		big[i] = byte(i ^ i>>8 ^ i>>16)
	}
	small := []byte("right behind it")
	var stream []byte
	for i, body := range [][]byte{big, small} {
		req := NewRequest(protocol.SendMessage, nil, body)
		req.Opaque = int32(i + 1)
		var err error
		if stream, err = req.AppendFrame(stream); err != nil {
			t.Fatal(err)
		}
	}
	const pieces, gap = 40, 25 * time.Millisecond // over an idle period in all
	step := len(stream)/pieces + 1
	start := time.Now()
	for off := 0; off < len(stream); off += step {
		if off > 0 {
			time.Sleep(gap)
		}
		rc.write(stream[off:min(off+step, len(stream))])
	}
	if d := time.Since(start); d < idle {
		t.Fatalf("sending took %v, want more than the idle period %v", d, idle)
	}
	for i, want := range [][]byte{big, small} {
		if r := rc.mustRead(); r.Code != protocol.Success || r.Opaque != int32(i+1) {
			t.Fatalf("frame %d answered %+v", i+1, r)
		}
		if got := <-bodies; !bytes.Equal(got, want) {
			t.Fatalf("frame %d: body of %d bytes differs from the %d sent", i+1, len(got), len(want))
		}
	}
}

// TestLongPollKeepsConnection: a request answered later (long polling),
// while the last traffic is less than IdleTimeout old, keeps the
// connection on both sides, though each side's read deadline fires while
// it waits: the client wrote the request, the server read it, and that is
// activity (Java: IdleStateHandler allIdle, reads and writes both count).
func TestLongPollKeepsConnection(t *testing.T) {
	const idle = time.Second
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: idle})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	type held struct {
		c   *Conn
		req *Command
	}
	polls := make(chan held, 1)
	s.Handle(protocol.PullMessage, nil, func(c *Conn, req *Command) *Command {
		polls <- held{c, req}
		return nil // answered later
	})
	var closes atomic.Int32
	s.OnConnClose(func(*Conn) { closes.Add(1) })
	addr := startServer(t, s)
	cl := newClient(t, ClientConfig{IdleTimeout: idle})
	ctx := ctxTimeout(t, 10*time.Second)
	if _, err := cl.Invoke(ctx, addr, NewRequest(protocol.HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	connected := time.Now()
	time.Sleep(idle / 2)
	type result struct {
		resp *Command
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := cl.Invoke(ctx, addr, NewRequest(protocol.PullMessage, nil, nil))
		done <- result{r, err}
	}()
	p := <-polls
	// Hold the poll past both sides' first deadline (the connection's
	// start plus IdleTimeout) but less than IdleTimeout after the request.
	time.Sleep(time.Until(connected.Add(idle + idle/5)))
	if err := p.c.WriteResponse(NewResponseTo(p.req, protocol.Success, "")); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.resp.Code != protocol.Success {
		t.Fatalf("long poll: %+v, %v", r.resp, r.err)
	}
	if _, err := cl.Invoke(ctx, addr, NewRequest(protocol.HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if n := closes.Load(); n != 0 || len(serverConns(s)) != 1 {
		t.Fatalf("%d connections closed, %d open; want the first one kept", n, len(serverConns(s)))
	}
}

// TestLongPollPastIdleTimeoutIsClosed: a request left unanswered for
// IdleTimeout with no other traffic is an idle connection, closed as Java
// closes it (its push consumers ask for pulls held 15 s at most, well
// inside the 120 s default); the waiting caller learns it at once.
func TestLongPollPastIdleTimeoutIsClosed(t *testing.T) {
	const idle = 400 * time.Millisecond
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: idle})
	s.Handle(protocol.PullMessage, nil, func(*Conn, *Command) *Command { return nil })
	addr := startServer(t, s)
	cl := newClient(t, ClientConfig{IdleTimeout: -1})
	start := time.Now()
	_, err := cl.Invoke(ctxTimeout(t, 10*time.Second), addr, NewRequest(protocol.PullMessage, nil, nil))
	if !errors.Is(err, ErrConnClosed) {
		t.Fatalf("unanswered poll: %v, want ErrConnClosed", err)
	}
	if d := time.Since(start); d < idle || d > idle+idle/2 {
		t.Fatalf("closed after %v, want the idle timeout %v", d, idle)
	}
}

// TestClientClosesStalledResponse: the client's connections share the
// reader. A server that answers with the first bytes of a 16 MiB response
// and stalls costs the client no frame buffer, and the connection is
// closed IdleTimeout after those bytes, failing the call.
func TestClientClosesStalledResponse(t *testing.T) {
	const idle = 400 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sent := make(chan time.Time, 1)
	var srv sync.WaitGroup
	defer srv.Wait()
	srv.Go(func() {
		nc, err := ln.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		var l [4]byte
		if _, err := io.ReadFull(nc, l[:]); err != nil { // the request's length
			t.Error(err)
			return
		}
		b := make([]byte, 4+100)
		binary.BigEndian.PutUint32(b, DefaultMaxFrameSize-4)
		before := time.Now()
		if _, err := nc.Write(b); err != nil {
			t.Error(err)
			return
		}
		sent <- before
		_, _ = io.Copy(io.Discard, nc) // until the client hangs up
	})
	cl := newClient(t, ClientConfig{IdleTimeout: idle})
	addr := ln.Addr().String()
	done := make(chan error, 1)
	go func() {
		_, err := cl.Invoke(ctxTimeout(t, 10*time.Second), addr, NewRequest(protocol.HeartBeat, nil, nil))
		done <- err
	}()
	var c *Conn
	wait.For(t, 5*time.Second, "the response announced", func() bool {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		if d := cl.mu.conns[addr]; d != nil && d.conn != nil {
			c = d.conn
		}
		return c != nil && c.frameLen.Load() == DefaultMaxFrameSize-4
	})
	if held := c.frameHeld.Load(); held != 0 {
		t.Errorf("client holds a frame buffer of %d for 100 bytes received", held)
	}
	err = <-done
	end := time.Now()
	if !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call answered by a stalled frame: %v, want ErrConnClosed", err)
	}
	if d := end.Sub(<-sent); d < idle || d > idle+idle/2 {
		t.Fatalf("closed %v after the server's last bytes, want the idle timeout %v", d, idle)
	}
}
