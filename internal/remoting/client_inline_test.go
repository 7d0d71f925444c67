package remoting

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestInvokeAsyncInline: the callback gets the response, the expiry or the
// connection's close, exactly once each, without a goroutine of its own.
func TestInvokeAsyncInline(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	held := make(chan *Conn, 4)
	s.Handle(protocol.PullMessage, nil, func(c *Conn, _ *Command) *Command {
		held <- c
		return nil // never answered
	})
	s.Handle(protocol.HeartBeat, nil, echoHandler)
	addr := startServer(t, s)
	c := newClient(t, ClientConfig{})

	type result struct {
		r   *Command
		err error
	}
	var calls atomic.Int32
	got := make(chan result, 8)
	cb := func(r *Command, err error) {
		calls.Add(1)
		got <- result{r, err}
	}
	// Before any connection exists: it is dialled.
	if err := c.InvokeAsyncInline(addr, NewRequest(protocol.HeartBeat, nil, []byte("a")), 5*time.Second, cb); err != nil {
		t.Fatal(err)
	}
	if res := <-got; res.err != nil || string(res.r.Body) != "a" {
		t.Fatalf("response: %+v %v", res.r, res.err)
	}
	if err := c.InvokeAsyncInline(addr, NewRequest(protocol.PullMessage, nil, nil), 50*time.Millisecond, cb); err != nil {
		t.Fatal(err)
	}
	<-held
	if res := <-got; !errors.Is(res.err, ErrTimeout) {
		t.Fatalf("expiry: %v", res.err)
	}
	if err := c.InvokeAsyncInline(addr, NewRequest(protocol.PullMessage, nil, nil), time.Minute, cb); err != nil {
		t.Fatal(err)
	}
	(<-held).Close()
	if res := <-got; !errors.Is(res.err, ErrConnClosed) {
		t.Fatalf("close: %v", res.err)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d callbacks for 3 calls", n)
	}
	_ = c.Close()
	if err := c.InvokeAsyncInline(addr, NewRequest(protocol.HeartBeat, nil, nil), time.Second, cb); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
