package remoting

import (
	"bufio"
	"net"
)

// peekByteBuffered peeks through a one-byte buffer and returns a
// connection that replays it, for connections that are not sockets.
func peekByteBuffered(nc net.Conn) (byte, net.Conn, error) {
	br := bufio.NewReaderSize(nc, 16)
	b, err := br.Peek(1)
	if err != nil {
		return 0, nil, err
	}
	return b[0], &replayConn{Conn: nc, r: br}, nil
}

// replayConn reads what a peek buffered before the socket.
type replayConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
