//go:build unix

package remoting

import (
	"io"
	"os"
	"syscall"
)

// rawReader reads a socket through its syscall.RawConn, so that the
// reader can give its buffer back while it waits (see readBuffer). Reads
// keep net.Conn's behaviour: deadlines (a timeout error), a closed
// connection (net.ErrClosed), io.EOF at the end of the stream.
type rawReader struct {
	rc syscall.RawConn
	fn func(fd uintptr) bool // r.readFD, bound once: a closure per read would allocate
	b  *readBuffer
	p  []byte // the destination; nil: b's buffer after b.w
	n  int
	// err is the read's own error; rc.Read's (deadline, closed) come
	// back from rc.Read.
	err error
}

func newRawReader(rc syscall.RawConn) *rawReader {
	r := &rawReader{rc: rc}
	r.fn = r.readFD
	return r
}

// read reads into p, or with p nil into the buffer (advancing b.w).
func (r *rawReader) read(p []byte) (int, error) {
	r.p, r.n, r.err = p, 0, nil
	err := r.rc.Read(r.fn)
	r.p = nil
	if err != nil {
		return 0, err
	}
	return r.n, r.err
}

// readFD is called by RawConn.Read until it returns true; false makes it
// wait for the socket to become readable (or the deadline, or a close).
func (r *rawReader) readFD(fd uintptr) bool {
	b := r.b
	p := r.p
	if p == nil {
		if b.buf == nil {
			b.take()
		}
		p = b.buf[b.w:]
	}
	for {
		n, err := syscall.Read(int(fd), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if r.p == nil && b.w == 0 {
				// Nothing held and nothing to read: wait without a
				// buffer.
				b.release()
			}
			return false
		case err != nil:
			r.err = os.NewSyscallError("read", err)
		case n == 0:
			r.err = io.EOF
		default:
			r.n = n
			if r.p == nil {
				b.w += n
			}
		}
		return true
	}
}
