package remoting

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// rawConn is a test peer that speaks frames by hand over plain TCP.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) write(b []byte) {
	r.t.Helper()
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawConn) send(c *Command) {
	r.t.Helper()
	f, err := c.AppendFrame(nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.write(f)
}

// read returns the next frame decoded, or an error (io.EOF when the server
// closed the connection) within d.
func (r *rawConn) read(d time.Duration) (*Command, error) {
	_ = r.nc.SetReadDeadline(time.Now().Add(d))
	var lb [4]byte
	if _, err := io.ReadFull(r.br, lb[:]); err != nil {
		return nil, err
	}
	frame := make([]byte, binary.BigEndian.Uint32(lb[:]))
	if _, err := io.ReadFull(r.br, frame); err != nil {
		return nil, err
	}
	return DecodeFrame(frame)
}

func (r *rawConn) mustRead() *Command {
	r.t.Helper()
	c, err := r.read(5 * time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// expectClosed waits for the server to close the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	for {
		c, err := r.read(5 * time.Second)
		if err == nil {
			r.t.Fatalf("got frame %+v, want the connection closed", c)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			r.t.Fatal("connection still open after 5 s")
		}
		return // EOF or reset: closed
	}
}
