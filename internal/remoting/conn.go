package remoting

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Transport errors.
var (
	// ErrConnClosed is returned for calls on a closed connection and given
	// to every request still waiting for a response when it closes.
	ErrConnClosed = errors.New("remoting: connection closed")
	// ErrTimeout is given to an async callback whose response did not
	// arrive in time. Sync calls return the context's error instead.
	ErrTimeout = errors.New("remoting: request timed out")
	// errIdle closes a connection that saw no traffic for the idle timeout.
	errIdle = errors.New("remoting: idle timeout")
)

const (
	// readBufferSize is the read buffer's size: large enough that a burst
	// of small requests is read with one syscall. A frame that fits in it
	// is decoded in place; a larger one is assembled in chunks
	// (readLargeFrame). Held only while a read is under way or bytes wait
	// in it (readBuffer).
	readBufferSize = 64 << 10
	// maxPendingWrite bounds the bytes queued for one connection's writer.
	// A sender finding more than this waits (back-pressure towards the
	// handlers) instead of growing the buffer without limit.
	maxPendingWrite = 4 << 20
	// maxKeptWriteBuffer: a write buffer that grew past this is dropped
	// after a write of less than a quarter of this, rather than kept for
	// the connection's lifetime (see keepWriteBuffer).
	maxKeptWriteBuffer = 1 << 20
)

// connOwner is what a connection needs from the Server or Client that made
// it: request dispatch, the opaque counter for requests it sends, and its
// close notification.
type connOwner interface {
	// dispatch routes the requests the reader decoded from what one
	// socket read delivered, in arrival order; reqs is reused once it
	// returns.
	dispatch(c *Conn, reqs []*Command)
	nextOpaque() int32
	connClosed(c *Conn)
	badFrameLimiter() *warnLimiter
	// closeLog limits the lines closed connections log (logClosed).
	closeLog() *closeLimiters
	// extPolicy says which received commands keep a compact custom
	// header; nil: none.
	extPolicy() *extPolicy
}

// Conn is one TCP connection carrying remoting frames in both directions. It
// has a reader goroutine (decodes frames, routes responses to waiting calls
// and requests to the owner's handlers) and, while frames wait to be
// written, a writer goroutine (writes whatever frames have queued up since
// its last write in one syscall; it ends when nothing is left). All methods
// are safe for concurrent use.
//
// An idle connection is cheap (issue 18; BenchmarkIdleConn): its reader
// holds no read buffer while it waits (readBuffer), no writer goroutine
// runs, and the write buffers it kept are small.
type Conn struct {
	nc       net.Conn
	now      *nowWriter // frames written by their sender; nil when nc has no file descriptor
	owner    connOwner
	log      *slog.Logger
	maxFrame int
	idle     time.Duration // <= 0: never close for idleness
	readBuf  int           // the read buffer's size: readBufferSize; tests make it smaller

	in  activityReader // the socket as the reader goroutine's read buffer sees it
	raw *rawReader     // nil when nc has no file descriptor
	// probing: the read deadline found the connection idle and one last
	// read (idleProbe) is under way. Reader goroutine only.
	probing bool
	// The frame the reader waits for the rest of (a diagnostic, and what
	// tests observe): its announced length (0: none) and the bytes held for
	// it beyond the read buffer.
	frameLen, frameHeld atomic.Int64

	wmu struct {
		sync.Mutex
		cond  sync.Cond // signalled when buf drains or err is set
		buf   []byte    // encoded frames waiting for the writer
		spare []byte    // the writer's previous buffer, reused
		busy  bool      // the writer holds a buffer it has not finished writing
		// zc are the frames of buf whose bodies are not in it: their
		// BodyParts go out by a vectored write from where they are
		// (sendZeroCopy), in buf order; zcBytes counts their bodies.
		// The list comes from zcLists when needed and goes back after
		// the write, so an idle connection keeps none.
		zc      *[]zcFrame
		zcBytes int
		// writer: a writer goroutine runs (see startWriterLocked).
		writer bool
		err    error // sticky: once set nothing more is written
	}
	// wg owns the connection's goroutines (the owner's); nil before start.
	wg *sync.WaitGroup
	// writeLoopFn is c.writeLoop, bound once: `go c.writeLoop()` would
	// allocate a closure for every writer started.
	writeLoopFn func()
	// vectored: nc writes net.Buffers with one writev (a plain TCP or
	// Unix socket), so large bodies go out without being copied.
	vectored bool
	// writeDeadline is the socket's write deadline as last set; only
	// the writer goroutine of the moment uses it.
	writeDeadline time.Time
	lastWrite     atomic.Int64 // unix nanos of the last completed write
	// handling counts this connection's requests queued for or running in
	// a handler (server side). A response sent when it is zero has no
	// sibling about to follow it on this connection, so gathering could
	// only delay it.
	handling atomic.Int32

	pmu struct {
		sync.Mutex
		calls  map[int32]*call
		closed bool
	}

	closeOnce sync.Once
	closed    chan struct{} // closed when the connection is closed
	closeErr  error         // why; written once before closed is closed

	// values holds SetValue's attributes, copied on write: a connection
	// has a few at most, read on every request of some handlers (the
	// send path's born host), and most have none (a sync.Map cost a trie
	// node once used).
	values atomic.Pointer[[]connValue]
	vmu    sync.Mutex // serialises SetValue
}

// connValue is one SetValue attribute.
type connValue struct{ key, val any }

// call is one request waiting for its response: a sync caller blocked on ch,
// or an async callback with its expiry timer.
type call struct {
	ch    chan callResult
	cb    func(*Command, error)
	timer *time.Timer
}

type callResult struct {
	resp *Command
	err  error
}

func newConn(nc net.Conn, owner connOwner, log *slog.Logger, maxFrame int, idle time.Duration) *Conn {
	c := &Conn{
		nc:       nc,
		owner:    owner,
		log:      log,
		maxFrame: maxFrame,
		idle:     idle,
		readBuf:  readBufferSize,
		in:       activityReader{nc: nc, track: idle > 0},
		closed:   make(chan struct{}),
	}
	c.wmu.cond.L = &c.wmu.Mutex
	c.writeLoopFn = c.writeLoop
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		c.vectored = true
	}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			c.now = newNowWriter(rc)
			c.raw = newRawReader(rc)
		}
	}
	c.lastWrite.Store(time.Now().UnixNano())
	return c
}

// start runs the reader goroutine (and lets writers start); wg is the
// owner's, so its Close/Shutdown can wait for them.
func (c *Conn) start(wg *sync.WaitGroup) {
	c.wmu.Lock()
	c.wg = wg
	start := len(c.wmu.buf) > 0 && c.startWriterLocked()
	c.wmu.Unlock()
	if start {
		go c.writeLoopFn()
	}
	wg.Add(1)
	// Labelled so a CPU or goroutine profile tells connection work apart.
	go pprof.Do(context.Background(), pprof.Labels("remoting", "reader"), func(context.Context) {
		defer wg.Done()
		c.readLoop()
	})
}

// logAt logs msg with the connection's peer address when the logger
// takes level: a logger made per connection with the address (slog's With)
// cost every connection a few hundred bytes for the lifetime of it, to
// serve a few lines at its end.
func (c *Conn) logAt(level slog.Level, msg string, args ...any) {
	ctx := context.Background()
	if !c.log.Enabled(ctx, level) {
		return
	}
	c.log.Log(ctx, level, msg, append([]any{"remote", c.RemoteAddr()}, args...)...)
}

// Handling returns how many of this connection's requests are queued for
// or running in a handler (server side), the caller's own included: above
// 1 the peer pipelines, and more requests follow the one being handled.
func (c *Conn) Handling() int { return int(c.handling.Load()) }

// RemoteAddr returns the peer's address, "ip:port".
func (c *Conn) RemoteAddr() string { return c.nc.RemoteAddr().String() }

// LocalAddr returns this side's address, "ip:port".
func (c *Conn) LocalAddr() string { return c.nc.LocalAddr().String() }

// SetValue stores a per-connection attribute (for example the client id a
// heartbeat announced).
func (c *Conn) SetValue(key, val any) {
	c.vmu.Lock()
	defer c.vmu.Unlock()
	var next []connValue
	if old := c.values.Load(); old != nil {
		next = make([]connValue, 0, len(*old)+1)
		for _, v := range *old {
			if v.key != key {
				next = append(next, v)
			}
		}
	}
	next = append(next, connValue{key, val})
	c.values.Store(&next)
}

// Value returns the attribute stored under key, or nil.
func (c *Conn) Value(key any) any {
	if vals := c.values.Load(); vals != nil {
		for _, v := range *vals {
			if v.key == key {
				return v.val
			}
		}
	}
	return nil
}

// Closed returns a channel that is closed once the connection is closed.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// Close closes the connection. Calls waiting for a response get
// ErrConnClosed; frames not yet written are dropped. Idempotent.
func (c *Conn) Close() error {
	c.closeWith(ErrConnClosed)
	return nil
}

// closeWith closes the socket once, recording why. The reader goroutine
// notices, fails the pending calls and tells the owner.
func (c *Conn) closeWith(err error) {
	c.closeOnce.Do(func() {
		c.closeErr = err
		close(c.closed)
		_ = c.nc.Close()
		c.wmu.Lock()
		if c.wmu.err == nil {
			c.wmu.err = fmt.Errorf("%w: %w", ErrConnClosed, err)
			if errors.Is(err, ErrConnClosed) {
				c.wmu.err = ErrConnClosed
			}
		}
		// Frames not written are dropped; the bodies they alias are
		// released (the writer releases those of a write under way).
		zc := c.wmu.zc
		c.wmu.zc, c.wmu.zcBytes = nil, 0
		c.wmu.buf = c.wmu.buf[:0]
		c.wmu.cond.Broadcast()
		c.wmu.Unlock()
		releaseFrames(zc)
	})
}

// WriteResponse sends a response later than the handler's return (long
// polling): it sets the response bit and keeps resp.Opaque and
// resp.SerializeType (NewResponseTo fills both from the request).
func (c *Conn) WriteResponse(resp *Command) error {
	resp.Flag |= flagResponse
	return c.send(resp)
}

// send queues cmd's frame for the writer. It blocks only while more than
// maxPendingWrite bytes are queued (the peer is not reading).
//
// The frame is encoded outside the lock into a pooled buffer and copied in
// under it: many goroutines send on one connection (a producer's callers,
// a family's workers) and should wait for a short copy, not for each
// other's encoding.
func (c *Conn) send(cmd *Command) error { return c.sendFrame(cmd, false) }

// sendFrame is send; with mayWriteNow the caller also offers to write the
// frame itself, without waking the writer goroutine, when nothing else is
// queued or being written (see tryWriteNow). A sender passes it when it
// knows no other frame will follow soon, which the writer's gathering would
// otherwise wait for.
func (c *Conn) sendFrame(cmd *Command, mayWriteNow bool) error {
	if n := cmd.bodyLen(); n >= zeroCopyBody && c.vectored && cmd.Body == nil && cmd.Release != nil {
		return c.sendZeroCopy(cmd, n)
	} else if n >= directEncodeBody {
		return c.sendDirect(cmd)
	}
	bp := encodeBuffers.Get().(*[]byte)
	frame, err := cmd.AppendFrame((*bp)[:0])
	cmd.release()
	defer func() {
		if cap(frame) <= maxPooledEncodeBuffer {
			*bp = frame[:0]
			encodeBuffers.Put(bp)
		}
	}()
	if err != nil {
		return fmt.Errorf("remoting: send code %d to %s: %w", cmd.Code, c.RemoteAddr(), err)
	}
	if err := c.lockRoom(); err != nil {
		return err
	}
	wasEmpty := len(c.wmu.buf) == 0
	if mayWriteNow && wasEmpty && !c.wmu.busy && c.now != nil {
		return c.tryWriteNowLocked(frame)
	}
	c.growPendingLocked(len(frame))
	c.wmu.buf = append(c.wmu.buf, frame...)
	// Whoever makes the buffer non-empty sees to a writer; later senders
	// find it non-empty and know one is on its way.
	start := wasEmpty && c.startWriterLocked()
	c.wmu.Unlock()
	if start {
		go c.writeLoopFn()
	}
	return nil
}

// tryWriteNowLocked writes frame on the caller's goroutine with one
// non-blocking write, saving the writer goroutine's wake-up and its
// gathering yields (a few microseconds) for a frame that would leave alone
// anyway. It holds the write side like the writer does (busy), so frames
// queued meanwhile wait behind it and order is kept; whatever the kernel
// did not take, and whatever queued meanwhile, goes to the writer.
//
// REQUIRES: wmu held, buf empty, not busy; releases wmu.
func (c *Conn) tryWriteNowLocked(frame []byte) error {
	c.wmu.busy = true
	c.wmu.Unlock()
	n, err := c.now.writeNow(frame)
	c.lastWrite.Store(time.Now().UnixNano())
	c.wmu.Lock()
	return c.wroteNowLocked(frame, n, err)
}

// wroteNowLocked ends tryWriteNowLocked once the kernel took n bytes of
// frame (or err).
//
// REQUIRES: wmu held, busy set by the caller; releases wmu.
func (c *Conn) wroteNowLocked(frame []byte, n int, err error) error {
	c.wmu.busy = false
	if err != nil {
		if c.wmu.err == nil {
			c.wmu.err = fmt.Errorf("remoting: write to %s: %w", c.RemoteAddr(), err)
		}
		c.wmu.cond.Broadcast()
		c.wmu.Unlock()
		c.closeWith(fmt.Errorf("remoting: write to %s: %w", c.RemoteAddr(), err))
		return err
	}
	if n < len(frame) {
		// The rest goes first; frames queued meanwhile follow it (and
		// the bodies of zero-copy ones move with their heads).
		rest := make([]byte, 0, len(frame)-n+len(c.wmu.buf))
		rest = append(append(rest, frame[n:]...), c.wmu.buf...)
		c.wmu.buf = rest
		if zc := c.wmu.zc; zc != nil {
			for i := range *zc {
				(*zc)[i].at += len(frame) - n
			}
		}
	}
	start := len(c.wmu.buf) > 0 && c.startWriterLocked()
	c.wmu.cond.Broadcast()
	c.wmu.Unlock()
	if start {
		go c.writeLoopFn()
	}
	return nil
}

// lockRoom takes wmu once the pending writes are below maxPendingWrite
// (a slow peer holds its senders back here). On a failed connection it
// leaves wmu unlocked and returns the failure.
func (c *Conn) lockRoom() error {
	c.wmu.Lock()
	for c.pendingLocked() >= maxPendingWrite && c.wmu.err == nil {
		c.wmu.cond.Wait()
	}
	if err := c.wmu.err; err != nil {
		c.wmu.Unlock()
		return err
	}
	return nil
}

// directEncodeBody is the body size from which send encodes straight into
// the write buffer, under its lock: the frame is then mostly a copy of the
// body, which has to be made once anyway, and a scratch copy of a large
// pull response would double it.
const directEncodeBody = 32 << 10

// sendDirect is send for frames with a large body.
func (c *Conn) sendDirect(cmd *Command) error {
	if err := c.lockRoom(); err != nil {
		cmd.release()
		return err
	}
	wasEmpty := len(c.wmu.buf) == 0
	c.growPendingLocked(cmd.bodyLen() + directHeaderRoom)
	var err error
	c.wmu.buf, err = cmd.AppendFrame(c.wmu.buf)
	start := wasEmpty && len(c.wmu.buf) > 0 && c.startWriterLocked()
	c.wmu.Unlock()
	cmd.release()
	if start {
		go c.writeLoopFn()
	}
	if err != nil {
		return fmt.Errorf("remoting: send code %d to %s: %w", cmd.Code, c.RemoteAddr(), err)
	}
	return nil
}

// zeroCopyBody is the body size from which a command whose body is
// BodyParts with a Release (a pull response's records as the store read
// them) is not copied at all on a plain socket: its frame head goes into
// the write buffer and the parts follow it by a vectored write
// (sendZeroCopy). Below it copying the parts costs less than the iovec
// entries, the later Release and the writer's separate write
// (BenchmarkPullResponse).
var zeroCopyBody = 16 << 10 // a variable for BenchmarkPullResponse only

// zcFrame is a frame in the pending buffer whose body is not in it.
type zcFrame struct {
	at      int // where the body goes in the buffer: right after its head
	parts   [][]byte
	release func()
}

// zcLists holds the lists of zero-copy frames (*[]zcFrame) and iovecs
// holds the writer's vectored-write lists (*net.Buffers): pooled rather
// than kept per connection, which must stay small when idle.
var (
	zcLists = sync.Pool{New: func() any { l := make([]zcFrame, 0, 16); return &l }}
	iovecs  = sync.Pool{New: func() any { l := make(net.Buffers, 0, 64); return &l }}
)

// maxPooledFrames and maxPooledIovecs bound the entries of a list put
// back into zcLists or iovecs: one grown by a larger burst is left to the
// GC. A write gathers up to 256 KiB of frames beyond the first, 8 pull
// responses of 128 records being over 1,000 iovecs.
const (
	maxPooledFrames = 1 << 10
	maxPooledIovecs = 4 << 10
)

// releaseFrames calls the Release of each frame of zc (outside wmu: it
// returns buffers to the store's pools) and puts the list back into
// zcLists. zc may be nil.
func releaseFrames(zc *[]zcFrame) {
	if zc == nil {
		return
	}
	l := *zc
	for i := range l {
		if f := l[i].release; f != nil {
			f()
		}
		l[i] = zcFrame{}
	}
	if cap(l) <= maxPooledFrames {
		*zc = l[:0]
		zcLists.Put(zc)
	}
}

// pendingLocked is the number of bytes waiting to be written, bodies of
// zero-copy frames included. REQUIRES: wmu held.
func (c *Conn) pendingLocked() int { return len(c.wmu.buf) + c.wmu.zcBytes }

// sendZeroCopy is send for a large body given as BodyParts on a socket that
// takes vectored writes: the frame's head is encoded into the pending
// buffer and the parts are written from where they are, after the head, by
// the writer goroutine's writev. cmd.Release runs once the writer is done
// with them (written or failed), or when the connection closes before.
func (c *Conn) sendZeroCopy(cmd *Command, bodyLen int) error {
	if err := c.lockRoom(); err != nil {
		cmd.release()
		return err
	}
	wasEmpty := len(c.wmu.buf) == 0
	c.growPendingLocked(directHeaderRoom)
	var err error
	c.wmu.buf, err = cmd.appendFrameHead(c.wmu.buf)
	if err != nil {
		c.wmu.Unlock()
		cmd.release()
		return fmt.Errorf("remoting: send code %d to %s: %w", cmd.Code, c.RemoteAddr(), err)
	}
	if c.wmu.zc == nil {
		c.wmu.zc = zcLists.Get().(*[]zcFrame)
	}
	*c.wmu.zc = append(*c.wmu.zc, zcFrame{at: len(c.wmu.buf), parts: cmd.BodyParts, release: cmd.Release})
	c.wmu.zcBytes += bodyLen
	cmd.Release = nil
	start := wasEmpty && c.startWriterLocked()
	c.wmu.Unlock()
	if start {
		go c.writeLoopFn()
	}
	return nil
}

// writeVectored writes buf with the bodies of the zero-copy frames zc
// spliced in at their places, in one writev where the socket takes it all
// (net.Buffers.WriteTo goes on until everything is written or it fails).
// Writer goroutine only.
func (c *Conn) writeVectored(buf []byte, zc []zcFrame) error {
	p := iovecs.Get().(*net.Buffers)
	iov := (*p)[:0]
	from := 0
	for _, f := range zc {
		if f.at > from {
			iov = append(iov, buf[from:f.at])
		}
		for _, p := range f.parts {
			if len(p) > 0 {
				iov = append(iov, p)
			}
		}
		from = f.at
	}
	if from < len(buf) {
		iov = append(iov, buf[from:])
	}
	*p = iov
	_, err := p.WriteTo(c.nc) // consumes *p
	clear(iov)                // no reference to the bodies stays behind
	if cap(iov) <= maxPooledIovecs {
		*p = iov[:0]
		iovecs.Put(p)
	}
	return err
}

// directHeaderRoom is the room sendDirect reserves for a large frame's
// header beyond its body; a longer header still fits, by append's growth.
const directHeaderRoom = 1 << 10

// growPendingLocked makes room for n more bytes in the pending buffer,
// doubling it: append grows a large slice by a quarter at a time, and a
// burst of pipelined frames (several MiB) would be copied over and over.
// REQUIRES: wmu held.
func (c *Conn) growPendingLocked(n int) {
	buf := c.wmu.buf
	if len(buf)+n <= cap(buf) {
		return
	}
	// No minimum: an idle connection keeps two buffers (pending and
	// spare), which must stay small with thousands connected.
	size := max(2*cap(buf), len(buf)+n)
	var grown []byte
	if size > maxKeptWriteBuffer {
		// Past the kept size, straight to the senders' bound (and a
		// read buffer's worth for the frame that crosses it): a burst
		// then grows a buffer once rather than copying it at every
		// doubling, and the pooled buffers have one size.
		size = max(size, bigWriteBufferSize)
		grown = getBigWriteBuffer(size)
	}
	if grown == nil {
		grown = make([]byte, 0, size)
	}
	grown = append(grown, buf...)
	c.wmu.buf = grown
	putBigWriteBuffer(buf)
}

// bigWriteBuffers holds pending-write buffers larger than
// maxKeptWriteBuffer that connections let go of (*[]byte): a producer's
// bursts of pipelined requests grow the buffer to a few MiB again and
// again, and a fresh one each time cost a tenth of its CPU in zeroing,
// page faults and the scavenger. The pool, not the connection, keeps
// them, so an idle connection still holds none, and the GC frees those
// left unused.
var bigWriteBuffers sync.Pool

// bigWriteBufferSize is the least size of a pending-write buffer past
// maxKeptWriteBuffer: what senders may queue (maxPendingWrite) plus a
// frame of up to a read buffer's size.
const bigWriteBufferSize = maxPendingWrite + readBufferSize

// getBigWriteBuffer returns an empty pooled buffer of at least size
// bytes, or nil. A pooled one that is too small is left to the GC.
func getBigWriteBuffer(size int) []byte {
	p, _ := bigWriteBuffers.Get().(*[]byte)
	if p == nil || cap(*p) < size {
		return nil
	}
	return (*p)[:0]
}

// putBigWriteBuffer pools b when it is larger than maxKeptWriteBuffer.
// Nothing may use b afterwards.
func putBigWriteBuffer(b []byte) {
	if cap(b) > maxKeptWriteBuffer {
		b = b[:0]
		bigWriteBuffers.Put(&b)
	}
}

// startWriterLocked reports whether the caller, which just left frames in
// the pending buffer, must start a writer goroutine (go c.writeLoop()): not
// when one runs (it looks at the buffer again before it ends), nor while a
// sender writes a frame itself (busy: it sees to the rest when done), nor
// once the connection failed or before start. The goroutine is counted in
// the owner's WaitGroup here, under wmu: the reader, whose own count keeps
// the WaitGroup from reaching zero, takes wmu to fail the connection before
// it ends, so no writer is counted after the owner's Wait returned.
//
// Starting a goroutine costs about what waking a parked one did, and an
// idle connection keeps none (its stack was 8 KiB).
//
// REQUIRES: wmu held.
func (c *Conn) startWriterLocked() bool {
	if c.wmu.writer || c.wmu.busy || c.wmu.err != nil || c.wg == nil {
		return false
	}
	c.wmu.writer = true
	c.wg.Add(1)
	return true
}

// writerLabels label writer goroutines for CPU and goroutine profiles.
var writerLabels = pprof.WithLabels(context.Background(), pprof.Labels("remoting", "writer"))

// encodeBuffers holds *[]byte scratch buffers for send.
var encodeBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 4096)
	return &b
}}

// maxPooledEncodeBuffer: buffers grown by a large frame (a pull response
// body) are left to the GC rather than pooled.
const maxPooledEncodeBuffer = 64 << 10

// writeLoop takes everything queued since its last write and writes it in
// one call, so responses produced while a write is in flight leave
// together; it returns once nothing is left to write (a sender starts the
// next writer, see startWriterLocked) or the connection failed.
func (c *Conn) writeLoop() {
	defer c.wg.Done()
	pprof.SetGoroutineLabels(writerLabels)
	for {
		// Give the goroutines that are about to send (handlers finishing,
		// callers invoking) a chance to add their frames, so one syscall
		// carries them all. Costs nothing when no one else is runnable.
		c.gatherFrames()
		c.wmu.Lock()
		if c.wmu.busy || len(c.wmu.buf) == 0 || c.wmu.err != nil {
			// Nothing to do, or a sender is writing a frame itself
			// (it starts a writer when it is done if anything is
			// left): keep the buffers as they are.
			c.wmu.writer = false
			c.wmu.Unlock()
			return
		}
		buf, zc := c.wmu.buf, c.wmu.zc
		c.wmu.buf = c.wmu.spare[:0]
		c.wmu.spare = nil
		c.wmu.zc, c.wmu.zcBytes = nil, 0
		c.wmu.busy = true
		c.wmu.Unlock()
		// The write deadline stops a peer that never reads from blocking
		// us forever. It is moved only when half of it is used up: a timer
		// update per write would cost more than the write's bookkeeping.
		now := time.Now()
		if c.idle > 0 && c.writeDeadline.Sub(now) < c.idle/2 {
			c.writeDeadline = now.Add(c.idle)
			_ = c.nc.SetWriteDeadline(c.writeDeadline)
		}
		var err error
		if zc == nil {
			_, err = c.nc.Write(buf)
		} else {
			err = c.writeVectored(buf, *zc)
		}
		c.lastWrite.Store(now.UnixNano())
		// The bodies were written (or never will be): their buffers go
		// back before the next frames are taken.
		releaseFrames(zc)
		c.wmu.Lock()
		if keepWriteBuffer(len(buf), cap(buf), len(c.wmu.buf) > 0) {
			c.wmu.spare = buf[:0]
		} else {
			putBigWriteBuffer(buf)
		}
		c.wmu.busy = false
		if err != nil {
			if c.wmu.err == nil {
				c.wmu.err = fmt.Errorf("remoting: write to %s: %w", c.RemoteAddr(), err)
			}
			c.wmu.writer = false
		}
		c.wmu.cond.Broadcast()
		c.wmu.Unlock()
		if err != nil {
			c.closeWith(fmt.Errorf("remoting: write to %s: %w", c.RemoteAddr(), err))
			return
		}
	}
}

// keepWriteBuffer reports whether the writer keeps a buffer of capacity
// capacity after writing n bytes from it; more says frames queued while it
// wrote (the burst goes on). A large one is kept while the writes stay
// large or the burst goes on: a pipelining producer's requests (4,000 of
// 1 KiB in flight, or batches of 32 KiB) fill several MiB between writes,
// and regrowing that for every write cost a sixth of the client's CPU in
// copies and fresh pages (BenchmarkInvokeAsyncPipelined), a fifth with
// batches whose writes are often small while the senders keep adding. Once
// the burst is over (a small write, nothing queued) it goes. The senders'
// wait at maxPendingWrite bounds its size.
func keepWriteBuffer(n, capacity int, more bool) bool {
	return capacity <= maxKeptWriteBuffer || n >= maxKeptWriteBuffer/4 || more
}

// gatherFrames yields to let the goroutines about to send add their frames
// before the writer takes the buffer, and goes on yielding while that makes
// the buffer grow (a few times at most), so one write carries them all.
func (c *Conn) gatherFrames() {
	c.wmu.Lock()
	n := c.pendingLocked()
	c.wmu.Unlock()
	for range maxGatherYields {
		runtime.Gosched()
		c.wmu.Lock()
		grown := c.pendingLocked()
		c.wmu.Unlock()
		if grown == n || grown >= maxGatherBytes {
			return
		}
		n = grown
	}
}

const (
	maxGatherYields = 3
	maxGatherBytes  = 256 << 10
)

// flush waits until everything queued so far has been written, the
// connection failed, or ctx is done.
func (c *Conn) flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		c.wmu.Lock()
		c.wmu.cond.Broadcast()
		c.wmu.Unlock()
	})
	defer stop()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for (len(c.wmu.buf) > 0 || c.wmu.busy) && c.wmu.err == nil && ctx.Err() == nil {
		c.wmu.cond.Wait()
	}
	if c.wmu.err != nil {
		return c.wmu.err
	}
	return ctx.Err()
}

// readLoop decodes frames until the connection fails or closes, then fails
// the pending calls and tells the owner.
func (c *Conn) readLoop() {
	err := c.readFrames()
	c.closeWith(err)
	c.logClosed()
	c.failPending()
	c.owner.connClosed(c)
}

// closeLimiters are an owner's limits on the lines logClosed writes: one
// a second for connections the peer ended and one for those this side
// ended, each line counting those held back. A port scan, a client fleet
// restarting or thousands of idle connections timing out together would
// otherwise log a line per connection; the closes this side makes (idle
// timeout, a bad frame, a write failure, Close) are rare and have their
// own allowance, so a burst of the others does not hide them.
type closeLimiters struct{ byPeer, here warnLimiter }

// logClosed logs why the connection closed (closeErr) and which side
// ended it: at debug level, the idle timeout at info. Every close goes
// through here once, whoever caused it, so a connection that disappeared
// can be explained from the log (the lines are rate-limited, see
// closeLimiters).
func (c *Conn) logClosed() {
	err := c.closeErr
	level := slog.LevelDebug
	if errors.Is(err, errIdle) {
		level = slog.LevelInfo
	}
	if !c.log.Enabled(context.Background(), level) {
		return
	}
	byPeer := closedByPeer(err)
	lims := c.owner.closeLog()
	lim, by := &lims.here, "here"
	if byPeer {
		lim, by = &lims.byPeer, "peer"
	}
	ok, suppressed := lim.allow()
	if !ok {
		return
	}
	args := []any{"by", by, "reason", err}
	if suppressed > 0 {
		args = append(args, "suppressed_since_last", suppressed)
	}
	c.logAt(level, "remoting: connection closed", args...)
}

// closedByPeer reports whether a close reason says the peer ended the
// connection (end of stream, reset, broken pipe) rather than this side.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (c *Conn) readFrames() error {
	br := newReadBuffer(&c.in, c.raw, c.readBuf)
	defer br.close()
	first := true
	if c.idle > 0 {
		c.in.last = time.Now().UnixNano()
		_ = c.nc.SetReadDeadline(time.Unix(0, c.in.last).Add(c.idle))
	}
	// The requests decoded from the read buffer and not yet dispatched:
	// every whole frame a read delivered goes to the owner in one call
	// (one queue lock and one round of worker wake-ups per family for a
	// pipelining peer's burst), and before the reader waits for more.
	var batch []*Command
	defer func() {
		if len(batch) > 0 {
			c.owner.dispatch(c, batch)
		}
	}()
	for {
		if len(batch) > 0 && (len(batch) == maxDispatchBatch || !frameBuffered(br)) {
			c.owner.dispatch(c, batch)
			clear(batch)
			batch = batch[:0]
		}
		lenBytes, err := br.Peek(4)
		if err != nil {
			if err = c.readFailed(err, false); err != nil {
				return err
			}
			continue
		}
		if first && lenBytes[0] == tlsHandshake {
			// Java servers in "permissive" mode would negotiate TLS here
			// (spec §1.9); we speak plain TCP only, so say so clearly
			// rather than report a 350 MiB frame.
			c.warnBadFrame("remoting: TLS handshake on a plain connection (TLS is not supported), closing it")
			return errors.New("remoting: TLS not supported")
		}
		first = false
		length := int64(int32(binary.BigEndian.Uint32(lenBytes)))
		// Checked before allocating: a hostile length must not cost memory.
		if length < 4 || length+4 > int64(c.maxFrame) {
			c.warnBadFrame("remoting: bad frame length, closing connection", "length", length, "max", c.maxFrame)
			return fmt.Errorf("%w: length %d (max frame %d)", ErrFrameTooLarge, length, c.maxFrame)
		}
		br.Discard(4)
		cmd, err := c.readFrame(br, int(length))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				return err
			}
			c.warnBadFrame("remoting: undecodable frame, closing connection", "err", err)
			return err
		}
		if cmd.IsResponse() {
			c.complete(cmd)
			continue
		}
		batch = append(batch, cmd)
	}
}

// maxDispatchBatch bounds the requests the reader hands over at once, so
// that the first of a long burst is not held while the rest are decoded.
const maxDispatchBatch = 64

// frameBuffered reports whether the read buffer holds a whole frame, so
// that decoding it needs no read.
func frameBuffered(br *readBuffer) bool {
	n := br.Buffered()
	if n < 4 {
		return false
	}
	lenBytes, _ := br.Peek(4)
	length := int64(int32(binary.BigEndian.Uint32(lenBytes)))
	return length >= 4 && length+4 <= int64(n)
}

// readFailed decides what a failed read of the reader goroutine means. The
// read deadline is moved lazily: when it fires before IdleTimeout has passed
// since the last byte read or written, it is moved to that point and
// readFailed returns nil (read again); past it one last read is made
// (idleProbe) and, if that times out too, the connection is idle (errIdle).
// Any other error ends the connection too; an end of stream inside a frame
// (inFrame) is io.ErrUnexpectedEOF.
//
// Bytes of a frame still arriving count as activity as whole frames do
// (Java's IdleStateHandler counts every read), so a frame sent slowly is
// not cut off; a peer that stops sending, between frames or inside one, is
// closed IdleTimeout after its last byte.
func (c *Conn) readFailed(err error, inFrame bool) error {
	if c.idle > 0 && isTimeout(err) {
		now := time.Now()
		last := max(c.in.last, c.lastWrite.Load())
		if next := time.Unix(0, last).Add(c.idle); now.Before(next) {
			c.probing = false
			_ = c.nc.SetReadDeadline(next)
			return nil
		}
		if !c.probing {
			c.probing = true
			_ = c.nc.SetReadDeadline(now.Add(idleProbe))
			return nil
		}
		if inFrame {
			return fmt.Errorf("%w: no byte for %v inside a frame", errIdle, c.idle)
		}
		return fmt.Errorf("%w: no traffic for %v", errIdle, c.idle)
	}
	if inFrame && errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return c.readErr(err)
}

// idleProbe is how long the last read before an idle close may wait. A
// deadline fires as a timer: a reader that the machine did not schedule for
// a while can find it expired with bytes waiting in the socket that arrived
// well before it, and a read with an expired deadline does not look at
// them. The probe, a read with a fresh short deadline, takes them.
const idleProbe = 10 * time.Millisecond

// activityReader is the socket as the reader's read buffer sees it: the
// buffer notes when bytes last arrived, for the idle timeout. One clock
// read per read syscall, which carries many small frames in a burst.
type activityReader struct {
	nc    net.Conn
	track bool  // idle timeout enabled
	last  int64 // unix nanos of the last read that returned bytes; reader goroutine only
}

// readFrame reads and decodes the frame of length bytes (the length field
// already consumed). A read error ends the connection (see readFailed); a
// decoding error wraps ErrMalformed.
//
// A frame that fits in the read buffer is decoded where it lies once it has
// all arrived (usually it already has: small frames come in bursts), and
// only its body is copied out: the header strings are copies anyway, so a
// frame without a body costs no buffer at all. A larger frame is assembled
// by readLargeFrame in a buffer that its Body then aliases. Either way the
// Body belongs to whoever receives the Command.
func (c *Conn) readFrame(br *readBuffer, length int) (*Command, error) {
	pol := c.owner.extPolicy()
	if length > br.Size() {
		frame, err := c.readLargeFrame(br, length)
		if err != nil {
			return nil, err
		}
		return decodeFrame(frame, pol)
	}
	if br.Buffered() < length {
		c.frameLen.Store(int64(length))
		_, err := c.peekFull(br, length)
		c.frameLen.Store(0)
		if err != nil {
			return nil, err
		}
	}
	frame, _ := br.Peek(length)
	cmd, err := decodeFrame(frame, pol)
	if err == nil && cmd.Body != nil && pooledBody(cmd, pol) && br.handOff(length, len(cmd.Body)) {
		// The read buffer itself became the body's pooled buffer.
		cmd.Body = cmd.Body[:len(cmd.Body):len(cmd.Body)]
		cmd.pooledBody = br.handedOff()
		return cmd, nil
	}
	if err == nil && cmd.Body != nil {
		keepBody(cmd, pol)
	}
	br.Discard(length)
	return cmd, err
}

// peekFull returns the next n bytes (at most the read buffer's size) once
// they have all arrived, reading through deadlines as readFailed allows.
func (c *Conn) peekFull(br *readBuffer, n int) ([]byte, error) {
	for {
		b, err := br.Peek(n)
		if err == nil {
			return b, nil
		}
		if err = c.readFailed(err, true); err != nil {
			return nil, err
		}
	}
}

// readLargeFrame reads a frame longer than the read buffer. Its memory
// grows with the bytes that actually arrive, not with the length the peer
// announced: nothing is allocated until the read buffer is full of the
// frame; then a buffer of at most twice that takes it over and is doubled
// each time it fills. The sizes are length halved k times, k-1 times, ...,
// once, then length itself, so the last doubling ends exactly at length
// (doubling from 64 KiB would make a frame just past a power of two pay a
// last full-size step). So the buffer is never more than twice the bytes
// received (those it outgrew are garbage, about length in all), and a
// peer that announces 16 MiB and sends a little costs only its read
// buffer. The price for a frame that does arrive is about one extra copy
// of it, spread over the doublings (BenchmarkLargeRequest).
func (c *Conn) readLargeFrame(br *readBuffer, length int) ([]byte, error) {
	c.frameLen.Store(int64(length))
	defer c.frameLen.Store(0)
	defer c.frameHeld.Store(0)
	head, err := c.peekFull(br, br.Size())
	if err != nil {
		return nil, err
	}
	halvings := 0
	for halve(length, halvings) > 2*len(head) {
		halvings++
	}
	frame := make([]byte, len(head), halve(length, halvings))
	copy(frame, head)
	br.Discard(len(head))
	c.frameHeld.Store(int64(cap(frame)))
	for len(frame) < length {
		if len(frame) == cap(frame) {
			halvings-- // > 0: cap(frame) < length
			grown := make([]byte, len(frame), halve(length, halvings))
			copy(grown, frame)
			frame = grown
			c.frameHeld.Store(int64(cap(frame)))
		}
		// Never past cap(frame) <= length: what follows the frame stays in
		// the read buffer for the next one. An empty read buffer hands
		// reads this large straight to the socket.
		n, err := br.Read(frame[len(frame):cap(frame)])
		frame = frame[:len(frame)+n]
		if err != nil {
			if err = c.readFailed(err, true); err != nil {
				return nil, err
			}
		}
	}
	return frame, nil
}

// halve returns n halved k times, rounded up: at most twice n halved k+1
// times.
func halve(n, k int) int { return (n + 1<<k - 1) >> k }

// tlsHandshake is the first byte of a TLS ClientHello record.
const tlsHandshake = 0x16

// warnBadFrame logs why a connection is dropped for a bad frame, at most
// once a second per server or client; the rest go to debug.
func (c *Conn) warnBadFrame(msg string, args ...any) {
	ok, suppressed := c.owner.badFrameLimiter().allow()
	if !ok {
		c.logAt(slog.LevelDebug, msg, args...)
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed_since_last", suppressed)
	}
	c.logAt(slog.LevelWarn, msg, args...)
}

// readErr turns the reader's terminal error into the close reason (a
// close made here first keeps its own); logClosed logs it.
func (c *Conn) readErr(err error) error {
	select {
	case <-c.closed:
		return c.closeErr
	default:
	}
	return fmt.Errorf("remoting: read from %s: %w", c.RemoteAddr(), err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// register adds a pending call under opaque; false if the connection is
// already closed.
func (c *Conn) register(opaque int32, cl *call) bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.pmu.closed {
		return false
	}
	if c.pmu.calls == nil {
		c.pmu.calls = make(map[int32]*call)
	}
	c.pmu.calls[opaque] = cl
	return true
}

// take removes and returns the pending call for opaque, if any.
func (c *Conn) take(opaque int32) *call {
	c.pmu.Lock()
	cl := c.pmu.calls[opaque]
	if cl != nil {
		delete(c.pmu.calls, opaque)
	}
	c.pmu.Unlock()
	return cl
}

// complete hands a response to the call waiting for its opaque. Unmatched
// responses (the caller gave up) are dropped as in Java.
func (c *Conn) complete(resp *Command) {
	cl := c.take(resp.Opaque)
	if cl == nil {
		c.logAt(slog.LevelDebug, "remoting: response nobody waits for", "opaque", resp.Opaque, "code", resp.Code)
		return
	}
	cl.finish(resp, nil)
}

func (cl *call) finish(resp *Command, err error) {
	if cl.timer != nil {
		cl.timer.Stop()
	}
	if cl.cb != nil {
		cl.cb(resp, err)
		return
	}
	cl.ch <- callResult{resp, err}
}

// failPending gives ErrConnClosed to every waiting call and refuses new ones.
func (c *Conn) failPending() {
	c.pmu.Lock()
	calls := c.pmu.calls
	c.pmu.calls = nil
	c.pmu.closed = true
	c.pmu.Unlock()
	for _, cl := range calls {
		cl.finish(nil, ErrConnClosed)
	}
}

// Invoke sends a request over this connection and waits for its response
// or ctx. The request's opaque is assigned here; its response bit is
// cleared. Used by a server to call a client (GET_CONSUMER_RUNNING_INFO).
func (c *Conn) Invoke(ctx context.Context, req *Command) (*Command, error) {
	req.Opaque = c.owner.nextOpaque()
	req.Flag &^= flagResponse | flagOneway
	// A sync call is recycled once its result is received: finish runs
	// exactly once, for whoever took the call out of the table, so after
	// the receive (or after our own take) nothing refers to it.
	cl := syncCalls.Get().(*call)
	if !c.register(req.Opaque, cl) {
		syncCalls.Put(cl)
		return nil, ErrConnClosed
	}
	// The caller waits for the answer, so no frame of its own follows:
	// write it now when the connection is idle instead of waking the writer.
	if err := c.sendFrame(req, true); err != nil {
		if c.take(req.Opaque) == nil {
			<-cl.ch // failed by a concurrent close
		}
		syncCalls.Put(cl)
		return nil, err
	}
	select {
	case r := <-cl.ch:
		syncCalls.Put(cl)
		return r.resp, r.err
	case <-ctx.Done():
		if c.take(req.Opaque) == nil {
			// The response won the race; prefer it.
			r := <-cl.ch
			syncCalls.Put(cl)
			return r.resp, r.err
		}
		syncCalls.Put(cl)
		return nil, fmt.Errorf("remoting: invoke code %d on %s: %w", req.Code, c.RemoteAddr(), ctx.Err())
	}
}

// syncCalls recycles the call (and its channel) of synchronous invokes.
var syncCalls = sync.Pool{New: func() any { return &call{ch: make(chan callResult, 1)} }}

// invokeAsync sends req and calls cb exactly once with the response, or with
// ErrTimeout after timeout, or ErrConnClosed, unless it returns an error.
// cb is called on the reader goroutine, the expiry timer's goroutine or the
// sender's, so it must not block (Client.InvokeAsync hands it on to a
// goroutine of its own).
func (c *Conn) invokeAsync(req *Command, timeout time.Duration, cb func(*Command, error)) error {
	req.Opaque = c.owner.nextOpaque()
	req.Flag &^= flagResponse | flagOneway
	opaque, code := req.Opaque, req.Code
	cl := &call{cb: cb}
	// Registered and armed under one lock: the expiry cannot run before the
	// call is in the table, and whoever later takes the call (response,
	// expiry, close) sees its timer.
	c.pmu.Lock()
	if c.pmu.closed {
		c.pmu.Unlock()
		return ErrConnClosed
	}
	if c.pmu.calls == nil {
		c.pmu.calls = make(map[int32]*call)
	}
	c.pmu.calls[opaque] = cl
	cl.timer = time.AfterFunc(timeout, func() {
		if c.take(opaque) != nil {
			cb(nil, fmt.Errorf("%w: code %d to %s after %v", ErrTimeout, code, c.RemoteAddr(), timeout))
		}
	})
	c.pmu.Unlock()
	if err := c.send(req); err != nil {
		if c.take(opaque) != nil {
			cl.timer.Stop()
			return err
		}
		return nil // already finished (closed) and reported to cb
	}
	return nil
}

// InvokeOneway sends a request with the oneway bit set; the peer does not
// answer.
func (c *Conn) InvokeOneway(req *Command) error {
	req.Opaque = c.owner.nextOpaque()
	req.Flag = req.Flag&^flagResponse | flagOneway
	return c.send(req)
}
