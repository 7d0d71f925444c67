package remoting

import (
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestStaleWriteDeadlineKeepsConnection: the writer goroutine arms the
// socket's write deadline (IdleTimeout ahead) for its blocking writes, and
// responses written by their handler (tryWriteNow) leave it alone. Once a
// connection's writes all take the second path for longer than
// IdleTimeout, the deadline armed by its last writer write has passed; a
// non-blocking write must not take that for a failure of the peer. It did:
// RawConn.Write refused with "i/o timeout" and the connection was closed
// (a NameServer dropped a broker's registration connection this way,
// interop runs then found no route for a while).
//
// The client paces sync requests (each answered by its handler directly)
// over three IdleTimeouts after one response went through the writer; the
// traffic keeps the connection from being idle, so it must stay open.
func TestStaleWriteDeadlineKeepsConnection(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: idle})
	// Answered later than the handler's return: through the writer
	// goroutine, which arms the write deadline.
	s.Handle(protocol.HeartBeat, nil, func(c *Conn, req *Command) *Command {
		if err := c.WriteResponse(NewResponseTo(req, protocol.Success, "")); err != nil {
			t.Error(err)
		}
		return nil
	})
	// Answered by the handler on its own goroutine, the writer idle.
	s.Handle(protocol.GetMinOffset, nil, echoHandler)
	addr := startServer(t, s)
	rc := dialRaw(t, addr)

	req := NewRequest(protocol.HeartBeat, nil, nil)
	req.Opaque = 1
	rc.send(req)
	if r, err := rc.read(5 * time.Second); err != nil || r.Opaque != 1 {
		t.Fatalf("deferred response: %v, %v", r, err)
	}
	start := time.Now()
	for i := int32(2); time.Since(start) < 3*idle; i++ {
		req := NewRequest(protocol.GetMinOffset, map[string]string{"i": strconv.Itoa(int(i))}, nil)
		req.Opaque = i
		rc.send(req)
		r, err := rc.read(5 * time.Second)
		if err != nil {
			t.Fatalf("request %d, %v after the deferred response: %v", i, time.Since(start).Round(time.Millisecond), err)
		}
		if r.Opaque != i {
			t.Fatalf("request %d answered as %d", i, r.Opaque)
		}
		// Paced: the wall time is what this test is about, and a
		// request per quarter of IdleTimeout keeps the connection busy.
		time.Sleep(idle / 4)
	}
}
