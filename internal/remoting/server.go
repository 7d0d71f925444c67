package remoting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// Remarks the framework itself answers with (rocketmq-spec.md §1.7). The
// exact text is what Java brokers send; tools match on the prefixes.
const (
	remarkOverload = "[OVERLOAD]system busy, start flow control for a while"
	remarkShutdown = "[SHUTDOWN]broker is shutting down, try another one"
)

// HandlerFunc serves one request. It returns the response to send, or nil
// to send nothing (a oneway request, or a reply deferred to a later
// Conn.WriteResponse). The transport sets the response's opaque, response
// bit and serialization from the request. A panic is answered with
// SYSTEM_ERROR carrying the panic text; ErrorResponse does the same for an
// error. The request, including its Body, belongs to the handler.
type HandlerFunc func(conn *Conn, req *Command) *Command

// Guard checks a request before its handler runs (authentication): it
// returns nil to let the request through, or the response that refuses
// it. It runs where the handler would (a family worker, or the reader for
// inline handlers), before the handler, for every request that has a
// handler or reaches the default one (an unknown code without a default
// is answered REQUEST_CODE_NOT_SUPPORTED first, as in Java). It must not
// keep req.
type Guard func(conn *Conn, req *Command) (refusal *Command)

// ErrorResponse returns the SYSTEM_ERROR response Java sends when a
// processor throws: the error's text as remark.
func ErrorResponse(err error) *Command {
	return NewResponse(protocol.SystemError, err.Error())
}

// ServerConfig configures a Server. The zero value of each field selects
// its default.
type ServerConfig struct {
	Addr string // listen address; "127.0.0.1:0" in tests
	// IdleTimeout closes a connection with no traffic in either direction
	// for this long: no byte read (part of a frame counts) and nothing
	// written, as Java's allIdle. Default 120 s
	// (serverChannelMaxIdleTimeSeconds); negative disables it.
	IdleTimeout time.Duration
	// MaxFrameSize limits a received frame, counting the 4-byte length
	// field. Default 16 MiB.
	MaxFrameSize int
	Logger       *slog.Logger // default: discard
	// TLS chooses between TLS and plaintext per connection
	// (tls.server.mode); the zero value serves plaintext only. Before
	// the choice a connection waits at most IdleTimeout for its first
	// byte.
	TLS TLSListener
	// Observer, when set, is told of every answered request (metrics).
	Observer RequestObserver
}

func (c *ServerConfig) ensureDefaults() {
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 120 * time.Second
	}
	if c.MaxFrameSize <= 0 {
		c.MaxFrameSize = DefaultMaxFrameSize
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// route is where requests with one code go.
type route struct {
	f *Family
	h HandlerFunc
	// lazyExt: h reads the custom header through LookupExt or Ext, so
	// requests keep it in the compact form (HandleLazyExt).
	lazyExt bool
	// lentBody: h is done with the request's Body when it returns
	// (LentBody).
	lentBody bool
}

// RouteOption changes how the requests of a route are received.
type RouteOption int

const (
	// LentBody says the handler is done with req.Body when it returns:
	// whatever it keeps, it has copied (a send's records are copied into
	// the CommitLog's ring before the put returns). A body of at least
	// 16 KiB that fits the connection's read buffer then stays in that
	// buffer, handed over to the request instead of copied out of it
	// (or is copied into a pooled one), and goes back to the pool once
	// the handler returned: no allocation per request for a producer's
	// batches.
	LentBody RouteOption = iota + 1
)

// Server accepts remoting connections and serves requests by code. Register
// handlers (Handle, HandleDefault) and families before Start; handlers may
// also be added later, they take effect for the next request.
type Server struct {
	cfg ServerConfig
	log *slog.Logger

	routes   atomic.Pointer[map[int32]route] // copy-on-write
	pol      atomic.Pointer[extPolicy]       // the lazyExt codes of routes; nil: none
	fallback atomic.Pointer[route]
	guard    atomic.Pointer[Guard]
	opaque   atomic.Int32
	badFrame warnLimiter
	closes   closeLimiters
	inflight atomic.Int64 // requests accepted and not yet answered
	stopping atomic.Bool

	mu struct {
		sync.Mutex
		ln       net.Listener
		conns    map[*Conn]struct{}
		pending  map[net.Conn]struct{} // accepted, TLS not yet decided
		families []*Family
		onClose  []func(*Conn)
		started  bool
	}

	quit    chan struct{} // closed by Shutdown: workers exit
	conns   sync.WaitGroup
	workers sync.WaitGroup
	accept  chan struct{} // closed when the accept loop exits
}

// NewServer returns a server that is not listening yet.
func NewServer(cfg ServerConfig) *Server {
	cfg.ensureDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger, quit: make(chan struct{}), accept: make(chan struct{})}
	empty := map[int32]route{}
	s.routes.Store(&empty)
	s.mu.conns = make(map[*Conn]struct{})
	s.mu.pending = make(map[net.Conn]struct{})
	if s.cfg.TLS.FirstByteTimeout == 0 && cfg.IdleTimeout > 0 {
		s.cfg.TLS.FirstByteTimeout = cfg.IdleTimeout
	}
	return s
}

// Handle routes requests with code to h, run by a worker of f; with f == nil
// h runs on the connection's reader goroutine, which suits only handlers
// that never block: nothing else is read from that connection meanwhile, so
// such a handler must not Invoke over its own connection (the response
// could never be read).
func (s *Server) Handle(code int32, f *Family, h HandlerFunc) {
	s.handle(code, route{f: f, h: h})
}

// HandleLazyExt is Handle for a handler that reads its request header
// with a typed decoder taking a protocol.ExtSource (the request itself,
// e.g. protocol.SendMessageRequestHeader.DecodeFrom), or with req.Ext()
// or req.ExtField: its requests arrive with ExtFields nil and the fields
// kept as received, so that no map is built for a header read once (the
// send path). A malformed header is rejected exactly as for Handle.
func (s *Server) HandleLazyExt(code int32, f *Family, h HandlerFunc, opts ...RouteOption) {
	r := route{f: f, h: h, lazyExt: true}
	for _, o := range opts {
		if o == LentBody {
			r.lentBody = true
		}
	}
	s.handle(code, r)
}

func (s *Server) handle(code int32, r route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.routes.Load()
	next := make(map[int32]route, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[code] = r
	var pol *extPolicy
	for k, v := range next {
		if v.lazyExt { // LentBody is an option of HandleLazyExt
			if pol == nil {
				pol = &extPolicy{}
			}
			pol.requests = append(pol.requests, k)
			if v.lentBody {
				pol.lentBodies = append(pol.lentBodies, k)
			}
		}
	}
	s.routes.Store(&next)
	s.pol.Store(pol)
}

// SetGuard installs g in front of every handler (nil removes it). A
// request g refuses gets g's response (nothing when it is oneway) and
// never reaches its handler.
func (s *Server) SetGuard(g Guard) {
	if g == nil {
		s.guard.Store(nil)
		return
	}
	s.guard.Store(&g)
}

// HandleDefault routes requests whose code has no handler. Without it they
// are answered REQUEST_CODE_NOT_SUPPORTED.
func (s *Server) HandleDefault(f *Family, h HandlerFunc) {
	s.fallback.Store(&route{f: f, h: h})
}

// OnConnClose registers fn to run (on the connection's reader goroutine)
// after a connection closed, for whatever reason.
func (s *Server) OnConnClose(fn func(*Conn)) {
	s.mu.Lock()
	s.mu.onClose = append(s.mu.onClose, fn)
	s.mu.Unlock()
}

// Start listens on cfg.Addr and accepts connections in the background.
func (s *Server) Start() error {
	if err := s.cfg.TLS.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("remoting: listen %s: %w", s.cfg.Addr, err)
	}
	s.mu.Lock()
	if s.mu.started || s.stopping.Load() {
		s.mu.Unlock()
		_ = ln.Close()
		return errors.New("remoting: server already started or shut down")
	}
	s.mu.started = true
	s.mu.ln = ln
	families := s.mu.families
	s.mu.Unlock()
	for _, f := range families {
		f.start()
	}
	go s.acceptLoop(ln)
	s.log.Info("remoting: listening", "addr", ln.Addr().String(), "tls", s.cfg.TLS.Mode.String())
	return nil
}

// Addr returns the listening address (nil before Start).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.ln == nil {
		return nil
	}
	return s.mu.ln.Addr()
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer close(s.accept)
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: back off as
			// net/http does rather than spin.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("remoting: accept failed", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
				continue
			case <-s.quit:
				return
			}
		}
		backoff = 0
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		if s.cfg.TLS.Mode == TLSDisabled {
			s.serveConn(nc)
			continue
		}
		// Deciding TLS waits for the peer's first byte and maybe a
		// handshake: off the accept loop, so a silent peer delays no one.
		s.mu.Lock()
		if s.stopping.Load() {
			s.mu.Unlock()
			_ = nc.Close()
			continue
		}
		s.mu.pending[nc] = struct{}{}
		s.conns.Add(1)
		s.mu.Unlock()
		go s.secure(nc)
	}
}

// secure serves nc once its TLS mode is settled (see TLSListener.Accept).
func (s *Server) secure(nc net.Conn) {
	defer s.conns.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := s.cfg.TLS.Accept(ctx, nc)
	s.mu.Lock()
	delete(s.mu.pending, nc)
	s.mu.Unlock()
	if err != nil {
		_ = nc.Close()
		if s.stopping.Load() {
			return
		}
		if errors.Is(err, io.EOF) {
			// A port probe (load balancer, monitoring) connects and
			// closes without a byte.
			s.log.Debug("remoting: connection closed before its first byte", "remote", nc.RemoteAddr().String())
			return
		}
		if ok, suppressed := s.badFrame.allow(); ok {
			s.log.Warn("remoting: connection refused", "remote", nc.RemoteAddr().String(),
				"tls", s.cfg.TLS.Mode.String(), "err", err, "suppressed", suppressed)
		}
		return
	}
	s.serveConn(c)
}

// serveConn registers an accepted connection and starts its goroutines.
func (s *Server) serveConn(nc net.Conn) {
	c := newConn(nc, s, s.log, s.cfg.MaxFrameSize, s.cfg.IdleTimeout)
	s.mu.Lock()
	if s.stopping.Load() {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	s.mu.conns[c] = struct{}{}
	s.mu.Unlock()
	s.log.Debug("remoting: connection accepted", "remote", c.RemoteAddr())
	c.start(&s.conns)
}

func (s *Server) badFrameLimiter() *warnLimiter { return &s.badFrame }

func (s *Server) closeLog() *closeLimiters { return &s.closes }

func (s *Server) nextOpaque() int32 { return s.opaque.Add(1) }

func (s *Server) extPolicy() *extPolicy { return s.pol.Load() }

func (s *Server) connClosed(c *Conn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	callbacks := s.mu.onClose
	s.mu.Unlock()
	for _, fn := range callbacks {
		s.runCloseCallback(fn, c)
	}
}

// runCloseCallback runs one close callback; a panic in it is logged, not
// allowed to take the server down.
func (s *Server) runCloseCallback(fn func(*Conn), c *Conn) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("remoting: connection close callback panicked", "remote", c.RemoteAddr(), "panic", p)
		}
	}()
	fn(c)
}

// reply sends a framework-made response to req unless req is oneway.
func (s *Server) reply(c *Conn, req *Command, code int32, remark string) {
	if req.IsOneway() {
		return
	}
	if err := c.send(NewResponseTo(req, code, remark)); err != nil {
		s.log.Debug("remoting: reply failed", "remote", c.RemoteAddr(), "err", err)
	}
}

// dispatch routes the requests c's reader goroutine decoded from one
// read. Consecutive requests for one family are queued together (see
// Family.offerAll); an inline handler runs after the requests before it
// are queued, so each family sees the connection's requests in order.
func (s *Server) dispatch(c *Conn, reqs []*Command) {
	var (
		small   [smallDispatchBatch]task
		pending = small[:0] // for fam, not yet queued
		fam     *Family
	)
	if len(reqs) > len(small) {
		// A longer burst's tasks go in a pooled array: one of
		// maxDispatchBatch on the reader's stack (2.5 KiB) made every
		// reader's stack grow to 8 KiB, for the connection's lifetime or
		// until a GC shrank it, and left the freed halves to the heap.
		big := dispatchTasks.Get().(*[maxDispatchBatch]task)
		defer dispatchTasks.Put(big)
		pending = big[:0]
	}
	for _, req := range reqs {
		r, ok := s.route(c, req)
		if !ok {
			continue
		}
		s.inflight.Add(1)
		c.handling.Add(1)
		received := s.received()
		if r.f == nil {
			s.queue(fam, pending)
			pending, fam = pending[:0], nil
			s.run(c, req, r.h, nil, received)
			continue
		}
		if r.f != fam {
			s.queue(fam, pending)
			pending, fam = pending[:0], r.f
		}
		pending = append(pending, task{conn: c, req: req, h: r.h, received: received})
	}
	s.queue(fam, pending)
}

// errServerShutdown is the close reason of the connections Shutdown closes.
var errServerShutdown = fmt.Errorf("%w: server shut down", ErrConnClosed)

// smallDispatchBatch is how many tasks dispatch keeps on the reader's
// stack: a lone request, a few pipelined ones.
const smallDispatchBatch = 4

// dispatchTasks holds *[maxDispatchBatch]task for dispatch; queue leaves
// them cleared.
var dispatchTasks = sync.Pool{New: func() any { return new([maxDispatchBatch]task) }}

// route finds where req goes; false when it was answered already (server
// stopping, unknown code without a default handler).
func (s *Server) route(c *Conn, req *Command) (route, bool) {
	if s.stopping.Load() {
		s.reply(c, req, protocol.SystemBusy, remarkShutdown)
		return route{}, false
	}
	r, ok := (*s.routes.Load())[req.Code]
	if !ok {
		fb := s.fallback.Load()
		if fb == nil {
			s.reply(c, req, protocol.RequestCodeNotSupported, " request type "+strconv.Itoa(int(req.Code))+" not supported")
			return route{}, false
		}
		r = *fb
	}
	if !r.lazyExt && req.ext.ok {
		// Decoded for a route that changed since (or for the fallback):
		// give the handler the map it expects.
		req.Ext()
	}
	return r, true
}

// queue hands ts to f's workers; those its full queue refuses are
// answered SYSTEM_BUSY at once.
func (s *Server) queue(f *Family, ts []task) {
	if len(ts) == 0 {
		return
	}
	accepted := f.offerAll(ts)
	for _, t := range ts[accepted:] {
		s.inflight.Add(-1)
		t.conn.handling.Add(-1)
		s.log.Debug("remoting: family queue full", "family", f.name, "code", t.req.Code)
		s.observe(t.req, protocol.SystemBusy, t.received)
		s.reply(t.conn, t.req, protocol.SystemBusy, remarkOverload)
		t.req.ReleaseBody()
	}
	clear(ts)
}

// run calls h and sends what it returns. A panicking handler is answered
// with SYSTEM_ERROR and the panic text (never for oneway requests).
// f is the family whose worker runs it (nil: the reader runs it inline);
// received is the request's arrival for the observer (0: none).
func (s *Server) run(c *Conn, req *Command, h HandlerFunc, f *Family, received int64) {
	defer s.inflight.Add(-1)
	resp := s.call(c, req, h)
	// A lent body (LentBody) goes back to its pool; any other request's
	// Body is the handler's, and this does nothing.
	req.ReleaseBody()
	// Write the response on this goroutine (when the connection's writer
	// is idle) if that delays nothing and nothing is about to join it: no
	// request waits for a worker, and either no other request of this
	// connection is being handled (a client that waits for each answer,
	// as sync producers do, e.g. a SYNC_FLUSH send woken by a group commit
	// while many other workers run) or no other worker is busy. With
	// requests queued the writer goroutine takes the write, so a small
	// pool (ASYNC_FLUSH sends run on one worker, as in Java) goes on
	// handling while another core writes.
	alone := c.handling.Add(-1) == 0
	if resp == nil {
		return
	}
	if req.IsOneway() {
		s.observe(req, resp.Code, received)
		resp.release()
		return
	}
	code := resp.Code // resp is released once written
	resp.Opaque = req.Opaque
	resp.Flag |= flagResponse
	resp.SerializeType = req.SerializeType
	if err := c.sendFrame(resp, f.writeNowOK(alone)); err != nil {
		s.log.Debug("remoting: response not sent", "remote", c.RemoteAddr(), "code", req.Code, "err", err)
	}
	s.observe(req, code, received)
}

func (s *Server) call(c *Conn, req *Command, h HandlerFunc) (resp *Command) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("remoting: handler panicked", "code", req.Code, "remote", c.RemoteAddr(), "panic", p)
			resp = NewResponse(protocol.SystemError, fmt.Sprint(p))
		}
	}()
	if g := s.guard.Load(); g != nil {
		if refusal := (*g)(c, req); refusal != nil {
			return refusal
		}
	}
	return h(c, req)
}

// Shutdown stops accepting connections, answers new requests with
// SYSTEM_BUSY, waits until the requests already accepted are handled and
// their responses written (or ctx is done), then closes every connection
// and stops the workers. It returns ctx's error if the drain was cut short;
// a handler still running then is not waited for.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopping.Swap(true) {
		s.mu.Unlock()
		return nil // idempotent
	}
	ln := s.mu.ln
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
		<-s.accept
	}

	// Drain: poll the in-flight count as net/http's Shutdown does; a
	// deferred reply (long poll) is the handler's business, not counted.
	err := func() error {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for s.inflight.Load() > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
		return nil
	}()

	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.mu.conns))
	for c := range s.mu.conns {
		conns = append(conns, c)
	}
	for nc := range s.mu.pending {
		_ = nc.Close() // its secure goroutine then ends
	}
	s.mu.Unlock()
	for _, c := range conns {
		if err == nil {
			// Let the responses just produced reach the wire.
			_ = c.flush(ctx)
		}
		c.closeWith(errServerShutdown)
	}
	close(s.quit)
	s.conns.Wait()
	if err == nil {
		s.workers.Wait()
	}
	s.log.Info("remoting: server stopped", "err", err)
	if err != nil {
		return fmt.Errorf("remoting: shutdown: %w", err)
	}
	return nil
}
