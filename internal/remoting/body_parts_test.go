package remoting

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// splitBody cuts body into parts of the given sizes (the last takes the rest).
func splitBody(body []byte, sizes ...int) [][]byte {
	var parts [][]byte
	for _, n := range sizes {
		n = min(n, len(body))
		parts = append(parts, body[:n])
		body = body[n:]
	}
	return append(parts, body)
}

// A frame whose body is given as parts is the frame of the joined body, in
// both serializations.
func TestBodyPartsEncodeLikeBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 300)
	for _, st := range []SerializeType{JSON, RocketMQ} {
		for _, parts := range [][][]byte{
			splitBody(body, 1, 100, 0, 2000),
			{body},
			{},
			{nil, nil},
		} {
			joined := bytes.Join(parts, nil)
			want := NewResponse(protocol.Success, "FOUND")
			want.SerializeType, want.Opaque, want.Body = st, 7, joined
			if len(parts) == 0 || len(joined) == 0 {
				want.Body = nil
			}
			got := NewResponse(protocol.Success, "FOUND")
			got.SerializeType, got.Opaque, got.BodyParts = st, 7, parts
			a, err := want.AppendFrame(nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := got.AppendFrame(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Fatalf("%v, %d parts: frame from parts differs from the joined body's", st, len(parts))
			}
			if got.bodyLen() != len(joined) {
				t.Fatalf("bodyLen = %d, want %d", got.bodyLen(), len(joined))
			}
		}
	}
}

// A handler's response with BodyParts reaches the client as the joined
// body, small (encoded into a scratch buffer) and large (encoded straight
// into the write buffer, or written from the parts by writev), and its
// Release runs exactly once after the frame was encoded or written; a
// oneway request's result is released unsent.
func TestBodyPartsReleasedOnceSent(t *testing.T) {
	var released atomic.Int64
	var partsSeen atomic.Int64
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	handler := func(_ *Conn, req *Command) *Command {
		resp := NewResponse(protocol.Success, "ok")
		parts := splitBody(req.Body, 3, len(req.Body)/2)
		partsSeen.Add(int64(len(parts)))
		resp.BodyParts = parts
		resp.Release = func() {
			released.Add(1)
			// The transport is done with the parts: scribbling over them
			// must not change what the client receives.
			for _, p := range parts {
				clear(p)
			}
		}
		return resp
	}
	s.Handle(protocol.PullMessage, s.NewFamily("pull", 2, 8), handler)
	s.Handle(protocol.HeartBeat, nil, handler)
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})

	sent := int64(0)
	for _, code := range []int32{protocol.PullMessage, protocol.HeartBeat} {
		for _, n := range []int{0, 10, zeroCopyBody - 1, zeroCopyBody, directEncodeBody - 1, directEncodeBody, 1 << 20} {
			t.Run(fmt.Sprintf("code=%d/body=%d", code, n), func(t *testing.T) {
				body := make([]byte, n)
				for i := range body {
					body[i] = byte(i*7 + 1)
				}
				want := bytes.Clone(body)
				resp, err := c.Invoke(ctxTimeout(t, 10*time.Second), addr, NewRequest(code, nil, body))
				if err != nil {
					t.Fatal(err)
				}
				sent++
				if !bytes.Equal(resp.Body, want) {
					t.Fatalf("body changed in transit (%d bytes back, want %d)", len(resp.Body), len(want))
				}
				// A zero-copy body is released by the writer once written,
				// which may be after the client has it.
				wait.For(t, 5*time.Second, "the response released", func() bool { return released.Load() >= sent })
				if got := released.Load(); got != sent {
					t.Fatalf("released %d times after %d responses", got, sent)
				}
			})
		}
	}

	// Oneway: no answer, but the handler's result is released.
	ow := NewRequest(protocol.PullMessage, nil, []byte("oneway"))
	if err := c.InvokeOneway(addr, ow); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 5*time.Second, "the oneway result released", func() bool { return released.Load() == sent+1 })
	if partsSeen.Load() == 0 {
		t.Fatal("handler never ran")
	}
}

// A send on a failed connection releases the command too.
func TestBodyPartsReleasedOnFailedConn(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})
	conn, err := c.conn(ctxTimeout(t, 5*time.Second), addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	<-conn.Closed()
	for _, n := range []int{10, zeroCopyBody, directEncodeBody} {
		released := 0
		cmd := NewResponse(protocol.Success, "ok")
		cmd.BodyParts = [][]byte{make([]byte, n)}
		cmd.Release = func() { released++ }
		if err := conn.WriteResponse(cmd); err == nil {
			t.Fatalf("%d bytes: WriteResponse on a closed connection succeeded", n)
		}
		if released != 1 {
			t.Fatalf("%d bytes: released %d times, want 1", n, released)
		}
	}
}
