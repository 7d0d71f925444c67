package remoting

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// readBuffer is the reader goroutine's buffer over the socket, the subset
// of bufio.Reader the frame reader uses (Peek, Discard, Buffered, Read),
// with one difference that matters when thousands of clients are
// connected and quiet: the buffer is held only while bytes are in it or a
// read is taking them. A socket read that finds nothing to read gives an
// empty buffer back to a pool shared by all connections before it waits
// for the socket to become readable, and takes one again when it is
// (rawRead). An idle connection then holds no read buffer at all, where a
// bufio.Reader held 64 KiB for its lifetime; a busy one pays a pool Put and
// Get per read that had to wait, and the same syscalls as before.
//
// Connections without a file descriptor (TLS, test fakes) read through
// net.Conn and keep their buffer once they have one.
type readBuffer struct {
	src  *activityReader
	raw  *rawReader // nil: read through src
	size int
	buf  []byte // nil: none held (idle, or nothing read yet)
	// pooled holds buf while it is in use, so that giving it back
	// allocates nothing (a *[]byte made at Put would).
	pooled *[]byte
	r, w   int     // buf[r:w] is buffered
	given  *[]byte // the buffer handOff gave up, until handedOff
	err    error   // returned by the next fill: a read that also returned bytes
}

func newReadBuffer(src *activityReader, raw *rawReader, size int) *readBuffer {
	b := &readBuffer{src: src, raw: raw, size: size}
	if raw != nil {
		raw.b = b
	}
	return b
}

// Read buffers of connections between reads (*[]byte of readBufferSize)
// wait in a short list that garbage collections leave alone, and beyond
// it in a sync.Pool. A pool alone is emptied by every other collection: a
// few busy connections, each giving its buffer back at every read that
// waits, then allocated 64 KiB afresh every few hundred requests
// (BenchmarkRoundTrip/conns=16: 3.5% more bytes allocated). The list
// holds at most keptReadBuffers, and only as many as were ever given back
// at once: a broker with thousands of idle connections keeps one or two.
var (
	readBuffers    sync.Pool
	keptReadBufs   []*[]byte // LIFO
	keptReadBufsMu sync.Mutex
	keptReadBufsN  atomic.Int32 // len(keptReadBufs), read without the lock
)

// keptReadBuffers bounds the list: 1 MiB.
const keptReadBuffers = 16

func getReadBuffer() *[]byte {
	if keptReadBufsN.Load() > 0 {
		keptReadBufsMu.Lock()
		if n := len(keptReadBufs); n > 0 {
			b := keptReadBufs[n-1]
			keptReadBufs[n-1] = nil
			keptReadBufs = keptReadBufs[:n-1]
			keptReadBufsN.Store(int32(n - 1))
			keptReadBufsMu.Unlock()
			return b
		}
		keptReadBufsMu.Unlock()
	}
	if b, ok := readBuffers.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, readBufferSize)
	return &b
}

func putReadBuffer(b *[]byte) {
	if keptReadBufsN.Load() < keptReadBuffers {
		keptReadBufsMu.Lock()
		if n := len(keptReadBufs); n < keptReadBuffers {
			keptReadBufs = append(keptReadBufs, b)
			keptReadBufsN.Store(int32(n + 1))
			keptReadBufsMu.Unlock()
			return
		}
		keptReadBufsMu.Unlock()
	}
	readBuffers.Put(b)
}

// take gives b a buffer.
func (b *readBuffer) take() {
	if b.size != readBufferSize {
		b.buf = make([]byte, b.size) // tests' small buffers are not pooled
		return
	}
	b.pooled = getReadBuffer()
	b.buf = *b.pooled
}

// release returns b's buffer to the pool; REQUIRES: nothing buffered.
func (b *readBuffer) release() {
	if b.buf == nil {
		return
	}
	if b.pooled != nil {
		putReadBuffer(b.pooled)
	}
	b.buf, b.pooled, b.r, b.w = nil, nil, 0, 0
}

// handOff consumes the next n buffered bytes, a frame with a body of
// bodyLen bytes, by giving up the pooled buffer that holds them (handedOff
// returns it) instead of having the body copied out of it: what is
// buffered after the frame moves into a fresh buffer, or, when nothing is,
// the next read takes one. It declines (false, nothing consumed) for a
// buffer that is not pooled, or when more follows the frame than the body
// holds, so the move would cost more than the copy it saves.
func (b *readBuffer) handOff(n, bodyLen int) bool {
	rest := b.w - b.r - n
	if b.pooled == nil || rest >= bodyLen {
		return false
	}
	b.given = b.pooled
	if rest == 0 {
		b.buf, b.pooled, b.r, b.w = nil, nil, 0, 0
		return true
	}
	old := b.buf[b.r+n : b.w]
	b.pooled = getReadBuffer()
	b.buf = *b.pooled
	b.r, b.w = 0, copy(b.buf, old)
	return true
}

// handedOff returns the buffer the last handOff gave up; the caller owns
// it (putReadBuffer when done).
func (b *readBuffer) handedOff() *[]byte {
	p := b.given
	b.given = nil
	return p
}

// Size is the buffer's size: the longest Peek.
func (b *readBuffer) Size() int { return b.size }

// Buffered is how many bytes can be peeked without a read.
func (b *readBuffer) Buffered() int { return b.w - b.r }

// Peek returns the next n bytes (n <= Size) without consuming them,
// reading until they have arrived. With an error it returns what is
// buffered, shorter than n.
func (b *readBuffer) Peek(n int) ([]byte, error) {
	for b.w-b.r < n {
		if err := b.fill(); err != nil {
			return b.buf[b.r:b.w], err
		}
	}
	return b.buf[b.r : b.r+n], nil
}

// Discard consumes n buffered bytes (n <= Buffered).
func (b *readBuffer) Discard(n int) {
	b.r += n
	if b.r == b.w {
		b.r, b.w = 0, 0
	}
}

// Read reads into p: what is buffered, else, for a p at least as large as
// the buffer, straight from the socket (a large frame's remainder), else
// through the buffer.
func (b *readBuffer) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.r == b.w {
		if len(p) >= b.size {
			if err := b.takeErr(); err != nil {
				return 0, err
			}
			return b.read(p)
		}
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.r:b.w])
	b.Discard(n)
	return n, nil
}

// fill reads once more into the buffer after what it holds; an error only
// when the read delivered nothing.
func (b *readBuffer) fill() error {
	if err := b.takeErr(); err != nil {
		return err
	}
	if b.r > 0 {
		copy(b.buf, b.buf[b.r:b.w])
		b.w -= b.r
		b.r = 0
	}
	n, err := b.read(nil)
	if n > 0 {
		b.err = err
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

func (b *readBuffer) takeErr() error {
	err := b.err
	b.err = nil
	return err
}

// read reads into p, or with p nil into the buffer after w (advancing w),
// noting the time of a read that delivered bytes for the idle timeout.
func (b *readBuffer) read(p []byte) (n int, err error) {
	switch {
	case b.raw != nil:
		n, err = b.raw.read(p)
	case p != nil:
		n, err = b.src.nc.Read(p)
	default:
		if b.buf == nil {
			b.take()
		}
		n, err = b.src.nc.Read(b.buf[b.w:])
		b.w += n
	}
	if n > 0 && b.src.track {
		b.src.last = time.Now().UnixNano()
	}
	return n, err
}

// close drops whatever is buffered and gives the buffer back: the
// connection is done reading.
func (b *readBuffer) close() {
	b.r, b.w, b.err = 0, 0, nil
	b.release()
}
