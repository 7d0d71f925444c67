//go:build unix

package remoting

import (
	"io"
	"net"
	"syscall"
)

// peekByte returns the first byte waiting on nc without consuming it
// (recv with MSG_PEEK), honouring nc's read deadline, and nc itself.
// A connection that is not a socket falls back to peekByteBuffered.
func peekByte(nc net.Conn) (byte, net.Conn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return peekByteBuffered(nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return peekByteBuffered(nc)
	}
	var (
		b    [1]byte
		n    int
		rerr error
	)
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		// EAGAIN: nothing yet, wait for readability (and the deadline).
		return rerr != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, nil, err
	case rerr != nil:
		return 0, nil, rerr
	case n == 0:
		return 0, nil, io.EOF
	}
	return b[0], nc, nil
}
