//go:build unix

package remoting

import (
	"errors"
	"os"
	"syscall"
)

// nowWriter makes one non-blocking write attempt on a socket. It is made
// once per connection so that an attempt allocates nothing (a closure per
// call would); only the holder of the connection's write side (busy) uses
// it.
type nowWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // w.write, bound once
	b   []byte
	n   int
	err error
}

func newNowWriter(rc syscall.RawConn) *nowWriter {
	w := &nowWriter{rc: rc}
	w.fn = w.write
	return w
}

// write is called by RawConn.Write; returning true makes it call us once
// instead of waiting for the socket to become writable.
func (w *nowWriter) write(fd uintptr) bool {
	w.n, w.err = syscall.Write(int(fd), w.b)
	return true
}

// writeNow returns how many bytes of b the kernel took. A full socket
// buffer is not an error: the count is then short (maybe 0) and the caller
// leaves the rest to the writer goroutine, so whoever calls this never
// blocks on a slow peer.
//
// Neither is a write deadline in the past. The writer goroutine arms it
// for its blocking writes, IdleTimeout ahead, and moves it only when it
// writes again; RawConn.Write refuses before writing once it has passed,
// which says nothing about the peer when every write since took this
// path (a client waiting for each answer, a NameServer answering a
// broker's registrations). The frame then goes to the writer, which arms
// the deadline afresh. Refusing it closed such connections IdleTimeout
// after their last writer write (TestStaleWriteDeadlineKeepsConnection).
func (w *nowWriter) writeNow(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.fn)
	n, werr := max(w.n, 0), w.err
	w.b = nil
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// Refused before the write (w.write always returns true, so
		// RawConn.Write never waits): nothing was taken.
		return 0, nil
	}
	if err != nil {
		return n, err
	}
	if errors.Is(werr, syscall.EAGAIN) || errors.Is(werr, syscall.EINTR) {
		return n, nil
	}
	return n, werr
}
