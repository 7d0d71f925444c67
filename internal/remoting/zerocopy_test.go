package remoting

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// partsServer answers PULL_MESSAGE (a family of 4) and HEART_BEAT (inline
// on the reader) with a body given as BodyParts: the request's body holds
// the size and a seed; the response carries size bytes made from the seed,
// in parts of a few hundred bytes, each part its own buffer. Release
// scribbles over the parts, so a Release before the bytes were written
// shows as a corrupt body at the client. It counts responses, releases,
// and the responses sent on connections that take vectored writes.
type partsServer struct {
	addr                      string
	made, released, vectored  atomic.Int64
	releasedTwice, emptyParts atomic.Int64
}

func startPartsServer(t *testing.T, l *TLSListener) *partsServer {
	t.Helper()
	ps := &partsServer{}
	cfg := ServerConfig{Addr: "127.0.0.1:0"}
	if l != nil {
		cfg.TLS = *l
	}
	s := NewServer(cfg)
	handler := func(c *Conn, req *Command) *Command {
		size := int(binary.BigEndian.Uint32(req.Body))
		seed := req.Body[4]
		body := partsBody(size, seed)
		var parts [][]byte
		for len(body) > 0 {
			n := min(len(body), 300+int(seed)%700)
			parts = append(parts, bytes.Clone(body[:n]))
			body = body[n:]
		}
		if c.vectored {
			ps.vectored.Add(1)
		}
		ps.made.Add(1)
		resp := NewResponse(protocol.Success, "FOUND")
		resp.BodyParts = parts
		var once atomic.Bool
		resp.Release = func() {
			if !once.CompareAndSwap(false, true) {
				ps.releasedTwice.Add(1)
			}
			for _, p := range parts {
				for i := range p {
					p[i] = 0xEE
				}
			}
			ps.released.Add(1)
		}
		return resp
	}
	s.Handle(protocol.PullMessage, s.NewFamily("pull", 4, 64), handler)
	s.Handle(protocol.HeartBeat, nil, handler)
	ps.addr = startServer(t, s)
	return ps
}

// partsBody is the body partsServer makes for size and seed.
func partsBody(size int, seed byte) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

func partsRequest(code int32, size int, seed byte) *Command {
	body := make([]byte, 5)
	binary.BigEndian.PutUint32(body, uint32(size))
	body[4] = seed
	return NewRequest(code, nil, body)
}

// hammerParts runs callers goroutines on one client, each making rounds
// calls of mixed codes and sizes (small, around zeroCopyBody, around
// directEncodeBody, large) and checking every body.
func hammerParts(t *testing.T, ps *partsServer, cfg ClientConfig, callers, rounds int) int64 {
	t.Helper()
	c := newClient(t, cfg)
	sizes := []int{0, 100, 4 << 10, zeroCopyBody - 1, zeroCopyBody, zeroCopyBody + 1000, directEncodeBody, 200 << 10, 1 << 20}
	var calls atomic.Int64
	var wg sync.WaitGroup
	ctx := ctxTimeout(t, 60*time.Second)
	for g := range callers {
		wg.Go(func() {
			for i := range rounds {
				size := sizes[(g+i)%len(sizes)]
				seed := byte(g*rounds + i)
				code := protocol.PullMessage
				if (g+i)%3 == 0 {
					code = protocol.HeartBeat
				}
				resp, err := c.Invoke(ctx, ps.addr, partsRequest(code, size, seed))
				if err != nil {
					t.Errorf("caller %d call %d (%d bytes): %v", g, i, size, err)
					return
				}
				calls.Add(1)
				if want := partsBody(size, seed); !bytes.Equal(resp.Body, want) && !(size == 0 && resp.Body == nil) {
					t.Errorf("caller %d call %d: body of %d bytes differs from the %d sent", g, i, len(resp.Body), size)
					return
				}
			}
		})
	}
	wg.Wait()
	n := calls.Load()
	wait.For(t, 10*time.Second, "every response released", func() bool { return ps.released.Load() >= ps.made.Load() })
	if ps.releasedTwice.Load() != 0 {
		t.Fatalf("%d responses released twice", ps.releasedTwice.Load())
	}
	return n
}

// Responses of every size, small ones copied and coalesced and large ones
// written from their parts, from many callers at once on one connection:
// every frame arrives whole and in its place, and each Release runs once,
// after its bytes were written (it scribbles over the parts).
func TestZeroCopyFramesIntact(t *testing.T) {
	ps := startPartsServer(t, nil)
	n := hammerParts(t, ps, ClientConfig{}, 16, 27)
	if n != 16*27 {
		t.Fatalf("%d calls answered, want %d", n, 16*27)
	}
	if ps.vectored.Load() == 0 {
		t.Fatal("no response went out on a connection taking vectored writes")
	}
}

// Over TLS there is no writev: the bodies are copied into the write buffer
// (crypto/tls encrypts from it), and are intact and released all the same.
func TestZeroCopyTLSCopies(t *testing.T) {
	f := newTLSFixture(t)
	ps := startPartsServer(t, &TLSListener{Mode: TLSPermissive, Config: f.serverConfig()})
	n := hammerParts(t, ps, ClientConfig{TLS: f.clientConfig(), DialTimeout: 5 * time.Second}, 8, 20)
	if n != 8*20 {
		t.Fatalf("%d calls answered, want %d", n, 8*20)
	}
	if v := ps.vectored.Load(); v != 0 {
		t.Fatalf("%d responses on TLS connections were taken for vectored writes", v)
	}
	// Plaintext on the same permissive port stays the socket: writev.
	hammerParts(t, ps, ClientConfig{}, 2, 10)
	if ps.vectored.Load() == 0 {
		t.Fatal("plaintext on a permissive port did not take vectored writes")
	}
}

// Zero-copy frames pending when the connection closes are released without
// being written, those being written once the write ends, those sent after
// by the failed send; nothing is released twice and the closed connection
// keeps no reference to them.
func TestZeroCopyReleasedOnClose(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	connCh := make(chan *Conn, 1)
	s.Handle(protocol.HeartBeat, nil, func(c *Conn, req *Command) *Command {
		select {
		case connCh <- c:
		default:
		}
		return NewResponse(protocol.Success, "")
	})
	addr := startServer(t, s)
	cl := newClient(t, ClientConfig{})
	if _, err := cl.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	sc := <-connCh
	if !sc.vectored {
		t.Fatal("a loopback TCP connection does not take vectored writes")
	}
	// Frames queued, some written and some maybe not when the connection
	// closes half-way, then sends that fail: each Release runs once,
	// whichever way its frame ended.
	var released, twice atomic.Int64
	const frames = 64
	for i := range frames {
		cmd := NewResponse(protocol.Success, fmt.Sprint(i))
		cmd.BodyParts = [][]byte{make([]byte, zeroCopyBody), make([]byte, 5000)}
		var once atomic.Bool
		cmd.Release = func() {
			if !once.CompareAndSwap(false, true) {
				twice.Add(1)
			}
			released.Add(1)
		}
		if err := sc.WriteResponse(cmd); err != nil {
			// Released by the failed send.
			continue
		}
		if i == frames/2 {
			_ = sc.Close()
		}
	}
	wait.For(t, 10*time.Second, "every frame released", func() bool { return released.Load() == frames })
	if twice.Load() != 0 {
		t.Fatalf("%d frames released twice", twice.Load())
	}
	sc.wmu.Lock()
	pending, zc := len(sc.wmu.buf), sc.wmu.zc != nil
	sc.wmu.Unlock()
	if pending != 0 || zc {
		t.Fatalf("closed connection keeps %d pending bytes, zero-copy frames: %v", pending, zc)
	}
}

// A frame its sender wrote itself only in part (a full socket buffer) goes
// first, ahead of the frames queued meanwhile; a zero-copy frame among
// them keeps its body right after its own head, wherever the rest of the
// first frame moved the buffer.
func TestZeroCopyAfterPartialWriteNow(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(nc, &dropOwner{}, slog.New(slog.DiscardHandler), DefaultMaxFrameSize, -1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.Close() // before wg.Wait (deferred calls run last-in first-out)

	small, err := NewResponse(protocol.Success, "first").AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The sender holds the write side (busy) as tryWriteNowLocked does
	// while its write is under way; a zero-copy frame and a small one
	// queue behind it.
	c.wmu.Lock()
	c.wg = &wg
	c.wmu.busy = true
	c.wmu.Unlock()
	body := partsBody(zeroCopyBody+777, 9)
	zc := NewResponse(protocol.Success, "zc")
	zc.BodyParts = splitBody(bytes.Clone(body), 1000, 5000)
	var released atomic.Int64
	zc.Release = func() { released.Add(1) }
	wantZC := *zc
	wantZC.BodyParts, wantZC.Body, wantZC.Release = nil, body, nil
	if err := c.send(zc); err != nil {
		t.Fatal(err)
	}
	last := NewResponse(protocol.Success, "last")
	if err := c.send(last); err != nil {
		t.Fatal(err)
	}
	// The kernel took 3 bytes of the first frame.
	c.wmu.Lock()
	if err := c.wroteNowLocked(small, 3, nil); err != nil {
		t.Fatal(err)
	}

	zcBytes, _ := wantZC.AppendFrame(nil)
	lastBytes, _ := last.AppendFrame(nil)
	want := slices.Concat(small[3:], zcBytes, lastBytes)
	got := make([]byte, len(want))
	_ = peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("bytes on the wire differ from the frames in order (%d bytes)", len(want))
	}
	wait.For(t, 10*time.Second, "the zero-copy frame released after its write", func() bool { return released.Load() == 1 })
}

// A peer that stops reading: zero-copy frames fill the socket and the
// pending buffer (their bodies counted against its bound, so the sender
// waits), the writer's writev fails at the write deadline or the idle
// timeout closes the connection, the waiting sender gets the error, and
// every frame is released exactly once: those written, the one in the
// failed writev, those dropped with the pending buffer and the refused.
func TestZeroCopyStalledPeer(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: 300 * time.Millisecond})
	connCh := make(chan *Conn, 1)
	s.Handle(protocol.HeartBeat, nil, func(c *Conn, req *Command) *Command {
		connCh <- c
		return nil
	})
	addr := startServer(t, s)
	peer, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	hb, _ := NewRequest(protocol.HeartBeat, nil, nil).AppendFrame(nil)
	if _, err := peer.Write(hb); err != nil {
		t.Fatal(err)
	}
	sc := <-connCh
	var sent, released, twice atomic.Int64
	body := make([]byte, 1<<20)
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("1000 MiB queued to a peer that does not read")
		}
		cmd := NewResponse(protocol.Success, "")
		cmd.BodyParts = [][]byte{body[:1000], body[1000:]}
		var once atomic.Bool
		cmd.Release = func() {
			if !once.CompareAndSwap(false, true) {
				twice.Add(1)
			}
			released.Add(1)
		}
		sent.Add(1)
		if err := sc.WriteResponse(cmd); err != nil {
			break
		}
	}
	wait.For(t, 10*time.Second, "every frame released", func() bool { return released.Load() == sent.Load() })
	if twice.Load() != 0 {
		t.Fatalf("%d frames released twice", twice.Load())
	}
	// The failed send closes the connection; the close may finish on
	// another goroutine just after WriteResponse returned.
	select {
	case <-sc.Closed():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection is still open 10 s after a failed send")
	}
}
