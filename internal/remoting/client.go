package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// ErrClientClosed is returned by calls on a closed Client.
var ErrClientClosed = errors.New("remoting: client closed")

// ClientConfig configures a Client. The zero value of each field selects its
// default.
type ClientConfig struct {
	DialTimeout  time.Duration // default 3 s (Java connectTimeoutMillis)
	MaxFrameSize int           // default 16 MiB
	// IdleTimeout closes a pooled connection with no traffic for this
	// long (no byte read, nothing written, as the server's); the next
	// call dials again. Default 120 s (clientChannelMaxIdleTimeSeconds);
	// negative disables.
	IdleTimeout time.Duration
	Logger      *slog.Logger // default: discard
	// LazyResponseExt keeps the custom header of every response in its
	// compact received form instead of decoding it into ExtFields: a
	// caller reads it with resp.Ext(), resp.ExtField or a typed decoder
	// taking a protocol.ExtSource, and one that looks at the code only
	// (a load generator) pays for no map. Requests servers send over the
	// client's connections are decoded as always.
	LazyResponseExt bool
	// PooledResponseBodies takes the Body of a response that arrived in
	// one read buffer (up to 64 KiB) from a pool shared by the process
	// instead of a fresh allocation: the caller gives it back with
	// resp.ReleaseBody() once done with it (one not given back is left to
	// the GC). For a consumer reading 32 KiB pull responses tens of
	// thousands of times a second, the fresh buffers kept the GC sweeping
	// and the scheduler's locks busy (rocketctl bench consume).
	PooledResponseBodies bool
	// TLS, when set, makes every connection a TLS one (RocketMQ's
	// tls.enable / useTLS); the handshake counts against DialTimeout.
	TLS *tls.Config
	// BeforeRequest, when set, is called with every request the Client
	// sends (Invoke, InvokeAsync, InvokeOneway) just before it is
	// encoded, as Java's RPCHook.doBeforeRequest: the broker signs its
	// own calls with it (innerClientAuthenticationCredentials).
	BeforeRequest func(req *Command)
}

func (c *ClientConfig) ensureDefaults() {
	if c.DialTimeout <= 0 {
		c.DialTimeout = 3 * time.Second
	}
	if c.MaxFrameSize <= 0 {
		c.MaxFrameSize = DefaultMaxFrameSize
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 120 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Client calls remoting servers. It keeps one connection per address, as
// RocketMQ does, shared by all concurrent callers and dialled again after it
// breaks. Requests the server sends back over such a connection are served
// by the handlers registered with Handle.
type Client struct {
	cfg      ClientConfig
	log      *slog.Logger
	opaque   atomic.Int32
	badFrame warnLimiter
	closes   closeLimiters

	mu struct {
		sync.Mutex
		conns  map[string]*dialing
		closed bool
	}
	pol      *extPolicy                            // nil unless cfg.LazyResponseExt
	handlers atomic.Pointer[map[int32]HandlerFunc] // copy-on-write
	hmu      sync.Mutex                            // serialises Handle

	wg       sync.WaitGroup // connection goroutines, handler and callback goroutines
	handling chan struct{}  // semaphore: server-initiated requests being handled
}

// maxClientHandlers bounds the server-initiated requests a Client handles at
// once; beyond it they are answered SYSTEM_BUSY, as a server answers a
// client when a family's queue is full.
const maxClientHandlers = 64

// dialing is a pool slot: the connection to one address once ready is
// closed, or the dial error.
type dialing struct {
	ready chan struct{}
	conn  *Conn
	err   error
}

// NewClient returns a client with no connections yet.
func NewClient(cfg ClientConfig) *Client {
	cfg.ensureDefaults()
	c := &Client{cfg: cfg, log: cfg.Logger, handling: make(chan struct{}, maxClientHandlers)}
	c.mu.conns = make(map[string]*dialing)
	if cfg.LazyResponseExt || cfg.PooledResponseBodies {
		c.pol = &extPolicy{responses: cfg.LazyResponseExt, pooledBodies: cfg.PooledResponseBodies}
	}
	empty := map[int32]HandlerFunc{}
	c.handlers.Store(&empty)
	return c
}

// Handle registers h for requests with code that servers send over this
// client's connections (CHECK_TRANSACTION_STATE,
// NOTIFY_CONSUMER_IDS_CHANGED, ...). Each such request runs h in its own
// goroutine (at most 64 at once; more are answered SYSTEM_BUSY); a non-nil
// result is written back unless the request is oneway.
func (c *Client) Handle(code int32, h HandlerFunc) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	old := *c.handlers.Load()
	next := make(map[int32]HandlerFunc, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[code] = h
	c.handlers.Store(&next)
}

func (c *Client) badFrameLimiter() *warnLimiter { return &c.badFrame }

func (c *Client) closeLog() *closeLimiters { return &c.closes }

func (c *Client) nextOpaque() int32 { return c.opaque.Add(1) }

func (c *Client) extPolicy() *extPolicy { return c.pol }

// connClosed drops the pool slot of a closed connection so the next call
// dials again.
func (c *Client) connClosed(conn *Conn) {
	c.mu.Lock()
	for key, d := range c.mu.conns {
		if d.conn == conn {
			delete(c.mu.conns, key)
		}
	}
	c.mu.Unlock()
}

// dispatch serves a server-initiated request in its own goroutine: the
// handler may block (it may even call back to the server) without stalling
// the connection's reader.
func (c *Client) dispatch(conn *Conn, reqs []*Command) {
	for _, req := range reqs {
		c.dispatchOne(conn, req)
	}
}

// dispatchOne runs one request from a server in a goroutine of its own.
func (c *Client) dispatchOne(conn *Conn, req *Command) {
	h, ok := (*c.handlers.Load())[req.Code]
	if !ok {
		if !req.IsOneway() {
			_ = conn.send(NewResponseTo(req, protocol.RequestCodeNotSupported,
				" request type "+strconv.Itoa(int(req.Code))+" not supported"))
		}
		return
	}
	select {
	case c.handling <- struct{}{}:
	default:
		if !req.IsOneway() {
			_ = conn.send(NewResponseTo(req, protocol.SystemBusy, remarkOverload))
		}
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.handling }()
		resp := c.call(conn, req, h)
		if resp == nil || req.IsOneway() {
			return
		}
		resp.Opaque = req.Opaque
		resp.Flag |= flagResponse
		resp.SerializeType = req.SerializeType
		if err := conn.send(resp); err != nil {
			c.log.Debug("remoting: client response not sent", "code", req.Code, "err", err)
		}
	}()
}

func (c *Client) call(conn *Conn, req *Command, h HandlerFunc) (resp *Command) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("remoting: client handler panicked", "code", req.Code, "panic", p)
			resp = NewResponse(protocol.SystemError, fmt.Sprint(p))
		}
	}()
	return h(conn, req)
}

// establishedConn returns the open connection to addr, or nil when there
// is none yet (or it is being dialled, failed or closed): then conn dials.
func (c *Client) establishedConn(addr string) *Conn {
	c.mu.Lock()
	d := c.mu.conns[addr]
	closed := c.mu.closed
	c.mu.Unlock()
	if d == nil || closed {
		return nil
	}
	select {
	case <-d.ready:
	default:
		return nil
	}
	if d.err != nil {
		return nil
	}
	select {
	case <-d.conn.closed:
		return nil
	default:
		return d.conn
	}
}

// conn returns the pooled connection to addr, dialling when there is none
// or it broke. Concurrent callers share one dial.
func (c *Client) conn(ctx context.Context, addr string) (*Conn, error) {
	for {
		c.mu.Lock()
		if c.mu.closed {
			c.mu.Unlock()
			return nil, ErrClientClosed
		}
		d := c.mu.conns[addr]
		if d == nil {
			d = &dialing{ready: make(chan struct{})}
			c.mu.conns[addr] = d
			c.mu.Unlock()
			c.dial(ctx, addr, d)
		} else {
			c.mu.Unlock()
		}
		select {
		case <-d.ready: // an established connection wins over an expired ctx
		default:
			select {
			case <-d.ready:
			case <-ctx.Done():
				return nil, fmt.Errorf("remoting: connect %s: %w", addr, ctx.Err())
			}
		}
		if d.err != nil {
			return nil, d.err
		}
		select {
		case <-d.conn.closed:
			// Broken and not yet removed by its reader: drop the slot
			// ourselves and dial again.
			c.mu.Lock()
			if c.mu.conns[addr] == d {
				delete(c.mu.conns, addr)
			}
			c.mu.Unlock()
			continue
		default:
			return d.conn, nil
		}
	}
}

// dial fills slot d. A failed dial leaves no slot behind, so the next call
// tries again.
func (c *Client) dial(ctx context.Context, addr string, d *dialing) {
	defer close(d.ready)
	dctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	var dialer net.Dialer
	nc, err := dialer.DialContext(dctx, "tcp", addr)
	if err == nil {
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		if c.cfg.TLS != nil {
			var sc net.Conn
			if sc, err = DialTLS(dctx, nc, addr, c.cfg.TLS); err != nil {
				_ = nc.Close()
			} else {
				nc = sc
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.mu.closed {
		_ = nc.Close()
		err = ErrClientClosed
	}
	if err != nil {
		d.err = fmt.Errorf("remoting: connect %s: %w", addr, err)
		if c.mu.conns[addr] == d {
			delete(c.mu.conns, addr)
		}
		c.log.Debug("remoting: dial failed", "addr", addr, "err", err)
		return
	}
	d.conn = newConn(nc, c, c.log, c.cfg.MaxFrameSize, c.cfg.IdleTimeout)
	d.conn.start(&c.wg)
}

// Invoke sends req to addr and waits for the response or ctx (give ctx a
// deadline: it is the call's timeout). Invoke sets req.Opaque and clears
// its response and oneway bits, so one req must not be in two calls at
// once; it may be reused after Invoke returns.
func (c *Client) Invoke(ctx context.Context, addr string, req *Command) (*Command, error) {
	conn, err := c.conn(ctx, addr)
	if err != nil {
		return nil, err
	}
	c.beforeRequest(req)
	return conn.Invoke(ctx, req)
}

// InvokeAsync sends req to addr and returns once it is queued; cb is then
// called exactly once, in its own goroutine, with the response or an error
// (ErrTimeout after timeout, ErrConnClosed). When InvokeAsync returns an
// error cb is not called.
func (c *Client) InvokeAsync(addr string, req *Command, timeout time.Duration, cb func(*Command, error)) error {
	conn, err := c.asyncConn(addr, timeout)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return ErrClientClosed
	}
	c.wg.Add(1) // released by the callback goroutine
	c.mu.Unlock()
	var once sync.Once
	deliver := func(resp *Command, err error) {
		once.Do(func() {
			go func() {
				defer c.wg.Done()
				cb(resp, err)
			}()
		})
	}
	c.beforeRequest(req)
	if err := conn.invokeAsync(req, timeout, deliver); err != nil {
		c.wg.Done()
		return err
	}
	return nil
}

// InvokeAsyncInline is InvokeAsync with cb called on the goroutine that
// settles the call rather than on one of its own: the connection's reader
// for a response, the expiry timer's for ErrTimeout, the reader's or the
// caller's for ErrConnClosed. cb must be short and never block (the
// connection's other responses wait for it) and must not call back into
// this connection synchronously. For a producer keeping thousands of sends
// in flight the goroutine per callback is a tenth of its CPU (rocketctl
// bench produce --mode async).
func (c *Client) InvokeAsyncInline(addr string, req *Command, timeout time.Duration, cb func(*Command, error)) error {
	conn, err := c.asyncConn(addr, timeout)
	if err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.mu.closed
	c.mu.Unlock()
	if closed {
		return ErrClientClosed
	}
	c.beforeRequest(req)
	return conn.invokeAsync(req, timeout, cb)
}

// asyncConn is the connection an async invoke uses: the open one to addr,
// or one dialled within timeout.
func (c *Client) asyncConn(addr string, timeout time.Duration) (*Conn, error) {
	if conn := c.establishedConn(addr); conn != nil {
		return conn, nil
	}
	// Only now a context with a deadline: it costs a timer, per request
	// for a producer that pipelines.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.conn(ctx, addr)
}

// InvokeOneway sends req to addr with the oneway bit set and does not wait.
func (c *Client) InvokeOneway(addr string, req *Command) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.DialTimeout)
	defer cancel()
	conn, err := c.conn(ctx, addr)
	if err != nil {
		return err
	}
	c.beforeRequest(req)
	return conn.InvokeOneway(req)
}

func (c *Client) beforeRequest(req *Command) {
	if f := c.cfg.BeforeRequest; f != nil {
		f(req)
	}
}

// CloseConn closes the pooled connection to addr, if any (for example
// after a server was found dead); the next call dials again.
func (c *Client) CloseConn(addr string) {
	c.mu.Lock()
	d := c.mu.conns[addr]
	delete(c.mu.conns, addr)
	c.mu.Unlock()
	if d != nil {
		<-d.ready
		if d.conn != nil {
			d.conn.closeWith(errCloseConn)
		}
	}
}

// Close reasons of the connections a Client closes itself.
var (
	errCloseConn    = fmt.Errorf("%w: CloseConn", ErrConnClosed)
	errClientClosed = fmt.Errorf("%w: client closed", ErrConnClosed)
)

// Close closes every connection, fails the calls still waiting and waits
// for the client's goroutines, including running handlers and callbacks.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil
	}
	c.mu.closed = true
	slots := make([]*dialing, 0, len(c.mu.conns))
	for _, d := range c.mu.conns {
		slots = append(slots, d)
	}
	c.mu.Unlock()
	for _, d := range slots {
		<-d.ready
		if d.conn != nil {
			d.conn.closeWith(errClientClosed)
		}
	}
	c.wg.Wait()
	return nil
}
