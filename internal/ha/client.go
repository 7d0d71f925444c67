package ha

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// Sink is the slave's CommitLog as the HA client writes it (*store.Store).
type Sink interface {
	// CommitLogMaxOffset is the end of everything appended.
	CommitLogMaxOffset() int64
	// AppendRaw appends master bytes at offset, which must be the end.
	AppendRaw(offset int64, data []byte) error
}

// State is what a slave's HA client is doing.
type State int32

const (
	// NoMaster: the master's HA address is not known yet.
	NoMaster State = iota
	// Connecting: dialing, or waiting to dial again after a failure.
	Connecting
	// Replicating: connected, appending what the master streams.
	Replicating
	// Diverged: the slave's CommitLog holds data the master does not have;
	// it refuses to replicate until an operator repairs it.
	Diverged
)

func (s State) String() string {
	switch s {
	case NoMaster:
		return "NO_MASTER"
	case Connecting:
		return "CONNECTING"
	case Replicating:
		return "REPLICATING"
	case Diverged:
		return "DIVERGED"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// ErrDiverged: the slave's CommitLog is ahead of the master's.
var ErrDiverged = errors.New("ha: slave diverged: its CommitLog is ahead of the master's")

// DefaultMaxTransfer bounds one transfer a slave accepts (Java's slave
// read buffer is 4 MiB).
const DefaultMaxTransfer = 4 << 20

// ClientConfig configures the slave side.
type ClientConfig struct {
	// MasterAddr returns the master's HA address ("" while unknown): the
	// configured haMasterAddress, or the one learnt from the NameServer's
	// registration answer. Asked before every connection attempt.
	MasterAddr func() string
	// HeartbeatInterval: the slave reports its offset at least this often
	// (haSendHeartbeatInterval, 5 s).
	HeartbeatInterval time.Duration
	// HousekeepingInterval: a master silent this long is dropped (20 s).
	HousekeepingInterval time.Duration
	// RetryInterval is the pause between connection attempts (1 s; ten
	// times that once diverged).
	RetryInterval time.Duration
	// MaxTransfer bounds one transfer's size (4 MiB).
	MaxTransfer int
	// Credentials answer a master's authentication challenge
	// (innerClientAuthenticationCredentials); nil: a master that
	// challenges is refused with ErrAuthRequired.
	Credentials *auth.Credentials
	// Logger receives events. Default: discard.
	Logger *slog.Logger
	// TLS, when set, makes the connection to the master a TLS one
	// (tls.enable).
	TLS *tls.Config

	// AutoSwitch speaks RocketMQ 5's controller-mode protocol (doc.go,
	// "AutoSwitch mode"); the Sink must be an EpochSink.
	AutoSwitch bool
	// BrokerID is the slave's broker id, sent in its handshake.
	BrokerID int64
	// SyncFromLastFile: an empty slave asks for the master's last
	// segment only (syncFromLastFile); otherwise for everything.
	SyncFromLastFile bool
	// AsyncLearner: the slave asks never to join the SyncStateSet.
	AsyncLearner bool
	// MasterEpoch, when set, returns the epoch the controller named for
	// the master (0: unknown): a master whose last epoch is older is
	// refused (ErrStaleMaster) before anything is truncated.
	MasterEpoch func() int32
}

// EnsureDefaults fills in the default of every zero field.
func (c *ClientConfig) EnsureDefaults() {
	if c.MasterAddr == nil {
		c.MasterAddr = func() string { return "" }
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = DefaultHousekeepingInterval
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = time.Second
	}
	if c.MaxTransfer <= 0 {
		c.MaxTransfer = DefaultMaxTransfer
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Client is the slave side: one goroutine keeps a connection to the master,
// appends every transfer to the local CommitLog (whose dispatcher builds
// the ConsumeQueues from it) and reports the new end after each batch.
type Client struct {
	cfg  ClientConfig
	log  *slog.Logger
	sink Sink

	loop   lifecycle.Loop // the replicating goroutine; Kick: retry now (the master address changed)
	closed atomic.Bool    // set by Close first: a session dialled after it stores no connection

	state   atomic.Int32
	mu      sync.Mutex
	nc      net.Conn // current connection, closed by Close
	lastErr error
	master  string

	// For the HA status: unix ms of the last read from and write to the
	// master (0: none yet), and the bytes received per second.
	lastRead, lastWrite atomic.Int64
	received            flow
	// confirm is the master's confirm offset, capped at the local end
	// (AutoSwitch; -1: none received yet).
	confirm atomic.Int64
	// retryLog limits the line logged per failed connection attempt (a
	// master down, stale or of the other protocol fails every round).
	retryLog lograte.Limiter
}

// NewClient returns a Client that is not running yet.
func NewClient(cfg ClientConfig) *Client {
	cfg.EnsureDefaults()
	c := &Client{cfg: cfg, log: cfg.Logger}
	c.confirm.Store(-1)
	return c
}

// ConfirmOffset is the master's confirm offset as last received, at most
// the local end (AutoSwitch mode; -1 before any transfer): what every
// replica of the SyncStateSet holds.
func (c *Client) ConfirmOffset() int64 { return c.confirm.Load() }

// Start begins replicating into sink.
func (c *Client) Start(sink Sink) error {
	if _, ok := sink.(EpochSink); c.cfg.AutoSwitch && !ok {
		return fmt.Errorf("ha: AutoSwitch mode needs the store's epoch file and truncation (%T has none)", sink)
	}
	started := c.loop.Start("ha-client", func(ctx context.Context) {
		c.mu.Lock()
		c.sink = sink
		c.mu.Unlock()
		c.run(ctx.Done())
	})
	switch {
	case started:
		return nil
	case c.closed.Load():
		return errors.New("ha: client closed")
	default:
		return errors.New("ha: client already started")
	}
}

// Close stops replicating and waits for the goroutines. Idempotent.
func (c *Client) Close() error {
	c.closed.Store(true)
	// Cut a session short first: the loop's goroutine may be blocked
	// reading from the master, and Loop.Close waits for it.
	c.mu.Lock()
	if c.nc != nil {
		_ = c.nc.Close()
	}
	c.mu.Unlock()
	c.loop.Close()
	return nil
}

// Kick makes a waiting client try to connect now (the master address may
// have changed).
func (c *Client) Kick() {
	c.loop.Kick()
}

// Status is a snapshot of the client.
type Status struct {
	State State
	// Master is the HA address of the last connection attempt.
	Master string
	// Offset is the local CommitLog end.
	Offset int64
	// Err is why the last connection ended (nil while none has).
	Err error
	// LastRead and LastWrite are when the client last read from and wrote
	// to a master (zero: never); BytesPerSecond is what it received in
	// the last whole second.
	LastRead, LastWrite time.Time
	BytesPerSecond      int64
	// ConfirmOffset is the master's confirm offset (AutoSwitch; -1: none).
	ConfirmOffset int64
}

// Status reports what the client is doing and, when it is not
// replicating, why.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{State: State(c.state.Load()), Master: c.master, Err: c.lastErr,
		LastRead: unixMilli(c.lastRead.Load()), LastWrite: unixMilli(c.lastWrite.Load()),
		BytesPerSecond: c.received.perSecond(time.Now()), ConfirmOffset: c.confirm.Load()}
	if c.sink != nil {
		st.Offset = c.sink.CommitLogMaxOffset()
	}
	return st
}

func (c *Client) run(quit <-chan struct{}) {
	for {
		addr := c.cfg.MasterAddr()
		wait := c.cfg.RetryInterval
		if addr == "" {
			c.state.Store(int32(NoMaster))
		} else {
			err := c.session(addr)
			c.mu.Lock()
			c.lastErr = err
			c.mu.Unlock()
			if c.closed.Load() { // the session ended because Close cut it
				return
			}
			if errors.Is(err, ErrDiverged) {
				c.state.Store(int32(Diverged))
				c.log.Error("ha: not replicating", "master", addr, "err", err)
				wait *= 10
			} else {
				c.state.Store(int32(Connecting))
				c.retryLog.Log(c.log, slog.LevelWarn, "ha: connection to master ended; will reconnect", "master", addr, "err", err)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-quit:
			t.Stop()
			return
		case <-c.loop.Kicked():
		case <-t.C:
		}
		t.Stop()
	}
}

// session runs one connection to the master until it fails.
func (c *Client) session(addr string) error {
	c.mu.Lock()
	c.master = addr
	c.mu.Unlock()
	if State(c.state.Load()) != Diverged {
		c.state.Store(int32(Connecting))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("ha: dial master %s: %w", addr, err)
	}
	if c.cfg.TLS != nil {
		sc, err := remoting.DialTLS(ctx, nc, addr, c.cfg.TLS)
		if err != nil {
			_ = nc.Close()
			return fmt.Errorf("ha: %w", err)
		}
		nc = sc
	}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		_ = nc.Close()
		return nil
	}
	c.nc = nc
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.nc = nil
		c.mu.Unlock()
		_ = nc.Close()
	}()

	br := bufio.NewReaderSize(nc, 1<<20)
	encode := appendReport
	var announced []store.EpochEntry
	if c.cfg.AutoSwitch {
		var err error
		if _, announced, err = c.handshakeMaster(nc, br, addr); err != nil {
			return err
		}
		encode = appendSlaveReport
	}
	report := make(chan struct{}, 1)
	stop := make(chan struct{})
	repDone := make(chan struct{})
	go func() {
		defer close(repDone)
		c.reportLoop(nc, encode, report, stop)
	}()
	defer func() {
		close(stop)
		_ = nc.Close()
		<-repDone
	}()
	report <- struct{}{} // report at once: the master waits for it
	if c.cfg.AutoSwitch {
		return c.receiveAutoSwitch(nc, br, addr, announced)
	}

	var rep []byte
	var hb [HeaderSize]byte
	var data []byte
	for {
		if err := c.readHeader(nc, br, hb[:], addr); err != nil {
			return err
		}
		if isChallenge(hb[:]) {
			if err := c.answer(nc, hb[:8]); err != nil {
				return fmt.Errorf("ha: master %s: %w", addr, err)
			}
			continue
		}
		h, err := DecodeHeader(hb[:], c.cfg.MaxTransfer)
		if err != nil {
			return fmt.Errorf("ha: from master %s: %w", addr, err)
		}
		own := c.sink.CommitLogMaxOffset()
		switch {
		case own != 0 && h.Offset < own:
			return fmt.Errorf("%w: local end %d, master %s sends from %d", ErrDiverged, own, addr, h.Offset)
		case own != 0 && h.Offset > own:
			return fmt.Errorf("ha: master %s sent offset %d, local end is %d", addr, h.Offset, own)
		}
		if h.Size == 0 {
			continue // heartbeat
		}
		if err := c.readTransfer(br, &data, h.Offset, h.Size, addr, c.sink); err != nil {
			return err
		}
		if State(c.state.Swap(int32(Replicating))) != Replicating {
			c.retryLog.Reset()
			c.log.Info("ha: replicating from master", "master", addr, "from", h.Offset)
		}
		// Ack once the bytes already received are appended: one report
		// per batch, not per transfer, keeps the stream flowing. Written
		// here, not by the heartbeat goroutine: a SYNC_MASTER's puts wait
		// for it, and a hand-over would add a wake-up to each round trip
		// (net.Conn serialises the two writers; 8 bytes never interleave).
		if br.Buffered() < HeaderSize {
			if err := c.report(nc, appendReport, &rep); err != nil {
				return fmt.Errorf("ha: report to master %s: %w", addr, err)
			}
		}
	}
}

// ErrAuthRequired: the master challenged and the slave has no
// credentials to answer with.
var ErrAuthRequired = errors.New("ha: the master requires authentication: set innerClientAuthenticationCredentials (a SUPER user of the master)")

// answer signs the master's challenge and sends the answer followed by a
// fresh report (the master skips those sent before the answer), in one
// write so that the reporter's 8-byte writes cannot split it.
func (c *Client) answer(nc net.Conn, challenge []byte) error {
	cr := c.cfg.Credentials
	if cr == nil {
		return ErrAuthRequired
	}
	if len(cr.AccessKey) > maxAnswerKey {
		return fmt.Errorf("ha: AccessKey longer than %d bytes", maxAnswerKey)
	}
	b := appendAnswer(nil, cr.AccessKey, cr.SignHAChallenge(challenge))
	b = appendReport(b, c.sink.CommitLogMaxOffset())
	if err := nc.SetWriteDeadline(time.Now().Add(c.cfg.HousekeepingInterval)); err != nil {
		return err
	}
	if _, err := nc.Write(b); err != nil {
		return fmt.Errorf("answer challenge: %w", err)
	}
	return nil
}

// report writes the local end as an offset report; buf is reused.
func (c *Client) report(nc net.Conn, encode func([]byte, int64) []byte, buf *[]byte) error {
	if err := nc.SetWriteDeadline(time.Now().Add(c.cfg.HousekeepingInterval)); err != nil {
		return err
	}
	*buf = encode((*buf)[:0], c.sink.CommitLogMaxOffset())
	_, err := nc.Write(*buf)
	if err == nil {
		c.lastWrite.Store(time.Now().UnixMilli())
	}
	return err
}

// unixMilli is ms as a time, the zero time for 0.
func unixMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// reportLoop writes offset reports: when asked and every heartbeat interval.
func (c *Client) reportLoop(nc net.Conn, encode func([]byte, int64) []byte, report <-chan struct{}, stop <-chan struct{}) {
	t := time.NewTicker(c.cfg.HeartbeatInterval)
	defer t.Stop()
	last := int64(-1)
	var b []byte
	for {
		select {
		case <-stop:
			return
		case <-report:
		case <-t.C:
			last = -1 // a heartbeat even without progress
		}
		off := c.sink.CommitLogMaxOffset()
		if off == last {
			continue
		}
		if err := nc.SetWriteDeadline(time.Now().Add(c.cfg.HousekeepingInterval)); err != nil {
			return
		}
		b = encode(b[:0], off)
		if _, err := nc.Write(b); err != nil {
			_ = nc.Close() // ends the session's read
			return
		}
		c.lastWrite.Store(time.Now().UnixMilli())
		last = off
	}
}

// readHeader reads the next header of the master's stream into hb,
// waiting at most HousekeepingInterval (a master sends a heartbeat within
// it), and notes the time for the liveness check.
func (c *Client) readHeader(nc net.Conn, br *bufio.Reader, hb []byte, addr string) error {
	if err := nc.SetReadDeadline(time.Now().Add(c.cfg.HousekeepingInterval)); err != nil {
		return err
	}
	if _, err := io.ReadFull(br, hb); err != nil {
		return fmt.Errorf("ha: read from master %s: %w", addr, err)
	}
	c.lastRead.Store(time.Now().UnixMilli())
	return nil
}

// readTransfer reads a transfer's size bytes into *data (grown when
// short; reused across transfers) and appends them at offset.
func (c *Client) readTransfer(br *bufio.Reader, data *[]byte, offset int64, size int32, addr string, sink interface {
	AppendRaw(offset int64, data []byte) error
}) error {
	if cap(*data) < int(size) {
		*data = make([]byte, size)
	}
	buf := (*data)[:size]
	if _, err := io.ReadFull(br, buf); err != nil {
		return fmt.Errorf("ha: read %d bytes at %d from master %s: %w", size, offset, addr, err)
	}
	c.received.add(len(buf), time.Now())
	if err := sink.AppendRaw(offset, buf); err != nil {
		return fmt.Errorf("ha: append %d bytes at %d: %w", size, offset, err)
	}
	return nil
}

// receiveAutoSwitch appends what an AutoSwitch master streams after the
// handshake: each transfer's epoch first, then its bytes; it keeps the
// master's confirm offset and reports after each batch.
func (c *Client) receiveAutoSwitch(nc net.Conn, br *bufio.Reader, addr string, announced []store.EpochEntry) error {
	es := c.sink.(EpochSink)
	var rep []byte
	var hb [TransferHeaderSize]byte
	var data []byte
	for {
		if err := c.readHeader(nc, br, hb[:], addr); err != nil {
			return err
		}
		h, err := DecodeTransferHeader(hb[:], c.cfg.MaxTransfer)
		if err != nil {
			return fmt.Errorf("ha: from master %s: %w", addr, err)
		}
		if h.Offset == -1 {
			continue // a Java master's heartbeat before it streams
		}
		if own := es.CommitLogMaxOffset(); own != 0 && h.Offset != own {
			return fmt.Errorf("ha: master %s sent offset %d, local end is %d", addr, h.Offset, own)
		}
		if err := checkAnnounced(&announced, h); err != nil {
			return fmt.Errorf("ha: master %s: %w", addr, err)
		}
		if err := c.applyEpoch(es, h); err != nil {
			return fmt.Errorf("ha: master %s: %w", addr, err)
		}
		if h.Size > 0 {
			if err := c.readTransfer(br, &data, h.Offset, h.Size, addr, es); err != nil {
				return err
			}
		}
		c.confirm.Store(min(h.ConfirmOffset, es.CommitLogMaxOffset()))
		if State(c.state.Swap(int32(Replicating))) != Replicating {
			c.retryLog.Reset()
			c.log.Info("ha: replicating from master", "master", addr, "from", h.Offset, "epoch", h.Epoch)
		}
		if h.Size > 0 && br.Buffered() < TransferHeaderSize {
			if err := c.report(nc, appendSlaveReport, &rep); err != nil {
				return fmt.Errorf("ha: report to master %s: %w", addr, err)
			}
		}
	}
}
