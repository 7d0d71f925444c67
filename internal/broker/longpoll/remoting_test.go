package longpoll

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestOverRealConnections wires a Holder the way the pull processor and
// the broker do: the handler holds the request and answers nothing, Wake
// writes the deferred response with the request's opaque, and the
// connection-close callback drops what the connection had held.
func TestOverRealConnections(t *testing.T) {
	var maxOffset atomic.Int64
	h := newHolder(t, Config{MaxOffset: func(string, int32) int64 { return maxOffset.Load() }})
	srv := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})
	srv.Handle(protocol.PullMessage, srv.NewFamily("pull", 2, 64), func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		offset, _ := strconv.ParseInt(req.ExtField("queueOffset"), 10, 64)
		suspend, _ := strconv.ParseInt(req.ExtField("suspendTimeoutMillis"), 10, 64)
		if offset < maxOffset.Load() {
			return remoting.NewResponse(protocol.Success, "found at once")
		}
		st := h.Hold(Request{
			Topic: "T", QueueID: 0, Offset: offset, Timeout: time.Duration(suspend) * time.Millisecond, Conn: c,
			Wake: func() {
				// The re-run: found now, or still nothing.
				code, remark := int32(protocol.PullNotFound), "expired"
				if offset < maxOffset.Load() {
					code, remark = protocol.Success, "woken"
				}
				_ = c.WriteResponse(remoting.NewResponseTo(req, code, remark))
			},
		})
		if st != Held {
			return remoting.NewResponse(protocol.PullNotFound, "not held: "+st.String())
		}
		return nil // answered later by Wake
	})
	srv.OnConnClose(func(c *remoting.Conn) { h.DropConn(c) })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	addr := srv.Addr().String()
	cl := remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() { _ = cl.Close() })

	pull := func(offset int64, suspend time.Duration) <-chan *remoting.Command {
		out := make(chan *remoting.Command, 1)
		req := remoting.NewRequest(protocol.PullMessage, map[string]string{
			"queueOffset":          strconv.FormatInt(offset, 10),
			"suspendTimeoutMillis": strconv.FormatInt(suspend.Milliseconds(), 10),
		}, nil)
		err := cl.InvokeAsync(addr, req, 10*time.Second, func(resp *remoting.Command, err error) {
			if err != nil {
				resp = remoting.NewResponse(-1, err.Error()) // recv reports it
			}
			out <- resp
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	recv := func(ch <-chan *remoting.Command) *remoting.Command {
		t.Helper()
		select {
		case r := <-ch:
			return r
		case <-time.After(5 * time.Second):
			t.Fatal("no response")
			return nil
		}
	}

	// Woken by an arrival.
	resp := pull(0, 15*time.Second)
	wait.For(t, 5*time.Second, "the pull to be held", func() bool { return h.Len() == 1 })
	maxOffset.Store(1)
	h.Notify("T", 0, 1, 0)
	if r := recv(resp); r == nil || r.Code != protocol.Success || r.Remark != "woken" {
		t.Fatalf("response = %+v", r)
	}

	// Answered at its deadline.
	start := time.Now()
	resp = pull(1, 200*time.Millisecond)
	if r := recv(resp); r == nil || r.Code != protocol.PullNotFound || r.Remark != "expired" {
		t.Fatalf("response = %+v", r)
	} else if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("answered after %v, before the suspend timeout", d)
	}

	// A closed connection takes its held pulls with it.
	_ = pull(1, 15*time.Second)
	wait.For(t, 5*time.Second, "the pull to be held", func() bool { return h.Len() == 1 })
	cl.CloseConn(addr)
	wait.For(t, 5*time.Second, "the pull to be dropped", func() bool { return h.Len() == 0 })
}
