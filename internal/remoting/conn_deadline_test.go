package remoting

import (
	"log/slog"
	"net"
	"strconv"
	"strings"
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

// TestCloseReasonLogged: every closed connection logs why and which side
// ended it (debug level; the idle timeout at info), so a connection that
// vanished can be explained from the log: a peer hanging up, a peer
// resetting, the idle timeout, a bad frame, and a Close made here.
func TestCloseReasonLogged(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: logger, IdleTimeout: 200 * time.Millisecond})
	s.Handle(protocol.HeartBeat, nil, func(c *Conn, req *Command) *Command {
		if req.ExtField("close") != "" {
			_ = c.Close()
			return nil
		}
		return echoHandler(c, req)
	})
	closed := make(chan *Conn, 8)
	s.OnConnClose(func(c *Conn) { closed <- c })
	addr := startServer(t, s)

	for _, tc := range []struct {
		name string
		act  func(rc *rawConn)
		want []string // in the connection's close line
	}{
		{"peer hangs up", func(rc *rawConn) { _ = rc.nc.Close() }, []string{"level=DEBUG", "by=peer", "EOF"}},
		{"peer resets", func(rc *rawConn) {
			_ = rc.nc.(*net.TCPConn).SetLinger(0)
			_ = rc.nc.Close()
		}, []string{"level=DEBUG", "by=peer", "reset"}},
		{"idle", func(*rawConn) {}, []string{"level=INFO", "by=here", "idle timeout"}},
		{"bad frame", func(rc *rawConn) { rc.write([]byte{0, 0, 0, 2, 0, 0}) }, []string{"level=DEBUG", "by=here", "frame too large"}},
		{"closed here", func(rc *rawConn) {
			rc.send(NewRequest(protocol.HeartBeat, map[string]string{"close": "1"}, nil))
		}, []string{"level=DEBUG", "by=here", "reason=\"remoting: connection closed\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			// One round trip: the server has the connection.
			rc.send(&Command{Code: protocol.HeartBeat, Opaque: 1})
			rc.mustRead()
			local := rc.nc.LocalAddr().String()
			tc.act(rc)
			var c *Conn
			select {
			case c = <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("the connection did not close")
			}
			if c.RemoteAddr() != local {
				t.Fatalf("closed %s, want %s", c.RemoteAddr(), local)
			}
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "remote="+local) && strings.Contains(l, "connection closed") {
					line = l
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Fatalf("close line %q lacks %q; log:\n%s", line, w, logs.String())
				}
			}
			// Each case's line must come through: start the next with
			// a fresh allowance (one line a second per kind).
			for _, l := range []*warnLimiter{&s.closes.byPeer, &s.closes.here} {
				l.last.Store(0)
				l.suppressed.Store(0)
			}
		})
	}
}
