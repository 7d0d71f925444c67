package ha

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// Defaults (rocketmq-spec.md §12, 4.9.8 MessageStoreConfig).
const (
	DefaultTransferBatchSize    = config.DefaultHATransferBatchSize
	DefaultHeartbeatInterval    = config.DefaultHASendHeartbeatInterval
	DefaultHousekeepingInterval = config.DefaultHAHousekeepingInterval
	DefaultMaxGap               = config.DefaultHASlaveFallbehindMax
	DefaultWaitTimeout          = 5 * time.Second
	// pollInterval bounds how late a writer notices data appended by a put
	// that did not wait (no kick). committedPoll is the sleep while data is
	// appended but not yet committed (readable) and the Source does not
	// announce commits; with announcements (store arrivals, which come
	// after the dispatcher ran) the writer also wakes at most commitWait
	// after the commit. Every SYNC_MASTER put waits for one slave round
	// trip, so this period adds to its latency: BenchmarkProduce64 went
	// from 32% to over 50% of ASYNC_MASTER when it dropped from 200 µs.
	pollInterval  = 5 * time.Millisecond
	committedPoll = 50 * time.Microsecond
	commitWait    = 50 * time.Microsecond
)

// Source is the master's CommitLog as the HA server reads it (*store.Store).
type Source interface {
	// CommitLogMaxOffset is the end of everything appended.
	CommitLogMaxOffset() int64
	// ReadRaw returns up to maxBytes committed bytes from offset, never
	// crossing a segment end; empty at the committed end.
	ReadRaw(offset int64, maxBytes int) (store.Buffer, error)
}

// ServerConfig configures the master side.
type ServerConfig struct {
	// Addr is the HA listen address (":10912"; "127.0.0.1:0" in tests).
	Addr string
	// TLS chooses TLS or plaintext per slave connection, as on the
	// remoting ports (tls.server.mode); zero: plaintext only. A slave
	// that sends nothing within HousekeepingInterval is dropped.
	TLS remoting.TLSListener
	// SegmentSize is the CommitLog segment size: an empty slave starts at
	// the master's last segment.
	SegmentSize int64
	// Sync makes Wait wait for a slave's ack (SYNC_MASTER); otherwise Wait
	// only wakes the transfer loops (ASYNC_MASTER).
	Sync bool
	// TransferBatchSize bounds one transfer (haTransferBatchSize, 32 KiB).
	TransferBatchSize int
	// HeartbeatInterval: an idle connection gets a heartbeat this often
	// (haSendHeartbeatInterval, 5 s).
	HeartbeatInterval time.Duration
	// HousekeepingInterval: a slave silent this long is dropped
	// (haHousekeepingInterval, 20 s).
	HousekeepingInterval time.Duration
	// MaxGap: a SYNC_MASTER answers SLAVE_NOT_AVAILABLE when no connected
	// slave's ack is within this many bytes of its end
	// (haSlaveFallbehindMax / haMaxGapNotInSync, 256 MiB).
	MaxGap int64
	// WaitTimeout bounds a SYNC_MASTER put's wait for the slave
	// (syncFlushTimeout, 5 s) before FLUSH_SLAVE_TIMEOUT.
	WaitTimeout time.Duration
	// Authenticator, when set (authenticationEnabled), makes every slave
	// answer a challenge with the signature of an enabled SUPER user
	// before anything is streamed to it (doc.go, "Authentication").
	Authenticator *auth.Authenticator
	// Logger receives events. Default: discard.
	Logger *slog.Logger

	// AutoSwitch speaks RocketMQ 5's controller-mode protocol (doc.go,
	// "AutoSwitch mode") instead of the classic one; the Source must be
	// an EpochSource. Not with Authenticator (refused by Start).
	AutoSwitch bool
	// LocalBrokerID is the master's own broker id, a member of the
	// SyncStateSets it is given (AutoSwitch).
	LocalBrokerID int64
	// AllAckInSyncStateSet makes a waiting put (Sync) wait for every
	// slave of the SyncStateSet instead of any one slave
	// (allAckInSyncStateSet; AutoSwitch).
	AllAckInSyncStateSet bool
	// OnSlaveChange, when set, is called when the SyncStateSet may need
	// to change (AutoSwitch): a slave connected or disconnected, or a
	// slave outside the set acked at or above the confirm offset. It runs
	// on a connection's goroutine and must not block (kick the broker's
	// loop that calls ProposeSyncStateSet).
	OnSlaveChange func()
}

// EnsureDefaults fills in the default of every zero field.
func (c *ServerConfig) EnsureDefaults() {
	if c.TransferBatchSize <= 0 {
		c.TransferBatchSize = DefaultTransferBatchSize
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = DefaultHousekeepingInterval
	}
	if c.MaxGap <= 0 {
		c.MaxGap = DefaultMaxGap
	}
	if c.WaitTimeout <= 0 {
		c.WaitTimeout = DefaultWaitTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Server is the master side: it accepts slaves on the HA port, streams the
// CommitLog to each from the offset it reports, and tracks their acks. It
// implements store.ReplicaWaiter. Create it with NewServer (before the
// store opens: the store needs it as its Replica), then Start it with the
// store.
type Server struct {
	cfg ServerConfig
	log *slog.Logger
	src Source
	ln  net.Listener

	quit    chan struct{}
	wg      sync.WaitGroup // the accept loop and every connection's goroutines
	started atomic.Bool
	closed  atomic.Bool

	mu      sync.Mutex
	conns   map[*masterConn]struct{}
	pending map[net.Conn]struct{} // accepted, TLS not yet decided

	lastRefusal atomic.Int64    // unix nanos of the last refusal logged
	closeLog    lograte.Limiter // slave connections that end with an error
	// writers is a copy of conns for kickWriters, which runs on every put
	// and every dispatched message: no lock there.
	writers atomic.Pointer[[]*masterConn]
	// arrivals: the Source announces committed data (store arrival
	// listener), so a writer waiting for a commit needs no short poll.
	arrivals bool

	// acked is the highest offset any slave has reported: everything below
	// it is on some slave. It only grows.
	acked   atomic.Int64
	waiters waiterList

	// AutoSwitch mode (autoswitch.go): the epoch file, the SyncStateSet
	// the broker set, the confirm offset last computed, what every slave
	// of the set acked (AllAckInSyncStateSet) and the caught-up times of
	// the slaves whose connections closed (unix nanos by broker id).
	epochs   *store.Epochs
	syncSet  atomic.Pointer[[]int64]
	confirm  atomic.Int64
	setAcked atomic.Int64
	setMu    sync.Mutex
	caughtUp map[int64]int64
}

// NewServer returns a Server that is not listening yet.
func NewServer(cfg ServerConfig) *Server {
	cfg.EnsureDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger, quit: make(chan struct{}), conns: map[*masterConn]struct{}{}, pending: map[net.Conn]struct{}{}}
	if s.cfg.TLS.FirstByteTimeout == 0 {
		s.cfg.TLS.FirstByteTimeout = cfg.HousekeepingInterval
	}
	s.acked.Store(-1)
	s.confirm.Store(-1)
	s.setAcked.Store(-1)
	s.caughtUp = map[int64]int64{}
	return s
}

// Start listens on cfg.Addr and serves slaves from src.
func (s *Server) Start(src Source) error {
	if s.closed.Load() {
		return errors.New("ha: server closed")
	}
	if s.started.Swap(true) {
		return errors.New("ha: server already started")
	}
	if s.cfg.SegmentSize <= 0 {
		return fmt.Errorf("ha: segment size %d", s.cfg.SegmentSize)
	}
	if err := s.cfg.TLS.Check(); err != nil {
		return fmt.Errorf("ha: %w", err)
	}
	if s.cfg.AutoSwitch {
		es, ok := src.(EpochSource)
		switch {
		case !ok:
			return fmt.Errorf("ha: AutoSwitch mode needs the store's epoch file (%T has none)", src)
		case s.cfg.Authenticator != nil:
			// The challenge is a classic frame; an AutoSwitch answer is
			// not designed yet.
			return errors.New("ha: AutoSwitch mode does not support authenticationEnabled on the HA port yet")
		}
		s.epochs = es.Epochs()
		s.confirm.Store(src.CommitLogMaxOffset())
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("ha: listen %s: %w", s.cfg.Addr, err)
	}
	s.src, s.ln = src, ln
	if a, ok := src.(interface{ AddArrivalListener(store.ArrivalListener) }); ok {
		// Kick the writers when data becomes readable: SYNC_MASTER puts
		// wait for a slave round trip, and polling for the commit would
		// add its period to every one of them.
		a.AddArrivalListener(func(string, int32, int64, int64, int64) { s.kickWriters() })
		s.arrivals = true
	}
	s.wg.Add(1)
	go s.acceptLoop()
	s.log.Info("ha: master listening", "addr", ln.Addr().String(), "sync", s.cfg.Sync, "tls", s.cfg.TLS.Mode.String())
	return nil
}

// Addr is the bound listen address (nil before Start).
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops accepting, closes every slave connection, fails waiting puts
// with FLUSH_SLAVE_TIMEOUT and waits for every goroutine. Idempotent.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.quit)
	if s.ln != nil {
		_ = s.ln.Close()
	}
	s.mu.Lock()
	for c := range s.conns {
		_ = c.nc.Close()
	}
	for nc := range s.pending {
		_ = nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.waiters.failAll(store.FlushSlaveTimeout)
	return nil
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.quit:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.log.Error("ha: accept failed; not accepting slaves any more", "err", err)
			return
		}
		if s.cfg.TLS.Mode == remoting.TLSDisabled {
			if !s.serve(nc) {
				return
			}
			continue
		}
		// TLS or not is decided off the accept loop (a silent peer
		// delays no one); Close closes the undecided.
		s.mu.Lock()
		if s.closed.Load() {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.pending[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.secure(nc)
	}
}

// secure serves nc once its TLS mode is settled.
func (s *Server) secure(nc net.Conn) {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc, err := s.cfg.TLS.Accept(ctx, nc)
	s.mu.Lock()
	delete(s.pending, nc)
	s.mu.Unlock()
	if err != nil {
		_ = nc.Close()
		now, last := time.Now().UnixNano(), s.lastRefusal.Load()
		if !s.closed.Load() && now-last >= int64(time.Second) && s.lastRefusal.CompareAndSwap(last, now) {
			// At most one a second: the peer may retry without end.
			s.log.Warn("ha: slave connection refused", "slave", nc.RemoteAddr().String(), "tls", s.cfg.TLS.Mode.String(), "err", err)
		}
		return
	}
	s.serve(sc)
}

// serve starts the goroutines of a slave connection; false once closed.
func (s *Server) serve(nc net.Conn) bool {
	c := newMasterConn(s, nc)
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		_ = nc.Close()
		return false
	}
	s.conns[c] = struct{}{}
	s.snapshotWritersLocked()
	s.mu.Unlock()
	s.log.Info("ha: slave connected", "slave", c.addr)
	s.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	return true
}

// drop forgets a connection once both its goroutines are done with it.
func (s *Server) drop(c *masterConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.snapshotWritersLocked()
	s.mu.Unlock()
}

// snapshotWritersLocked republishes the connection list for kickWriters.
// REQUIRES: mu held.
func (s *Server) snapshotWritersLocked() {
	ws := make([]*masterConn, 0, len(s.conns))
	for c := range s.conns {
		ws = append(ws, c)
	}
	s.writers.Store(&ws)
}

// kickWriters wakes every transfer loop (data was appended or committed).
func (s *Server) kickWriters() {
	if ws := s.writers.Load(); ws != nil {
		for _, c := range *ws {
			c.kickWriter()
		}
	}
}

// onAck records a slave's report and completes the puts it covers.
func (s *Server) onAck(offset int64) {
	for {
		cur := s.acked.Load()
		if offset <= cur {
			break
		}
		if s.acked.CompareAndSwap(cur, offset) {
			if !s.cfg.AllAckInSyncStateSet || !s.cfg.AutoSwitch {
				s.waiters.complete(offset)
			}
			break
		}
	}
}

// SlaveStatus describes one connected slave.
type SlaveStatus struct {
	Addr string
	// BrokerID is the id of an AutoSwitch slave's handshake (-1: classic,
	// or not received yet).
	BrokerID int64
	// Acked is the slave's last reported CommitLog end (-1: no report yet).
	Acked int64
	// InSync: Acked is within MaxGap of the master's end (the rule
	// SYNC_MASTER puts and the HA status use).
	InSync bool
	// Next is the next offset the master transfers (-1: not streaming yet).
	Next int64
	// BytesPerSecond is what the master sent it in the last whole second.
	BytesPerSecond int64
}

// Slaves lists the connected slaves, sorted by address.
func (s *Server) Slaves() []SlaveStatus {
	now := time.Now()
	s.mu.Lock()
	out := make([]SlaveStatus, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, SlaveStatus{Addr: c.addr, BrokerID: c.brokerID.Load(), Acked: c.acked.Load(), Next: c.next.Load(),
			BytesPerSecond: c.sent.perSecond(now)})
	}
	s.mu.Unlock()
	if len(out) > 0 {
		// A connection exists only once Start set src.
		end := s.src.CommitLogMaxOffset()
		for i := range out {
			out[i].InSync = s.inSync(end, out[i].Acked)
		}
	}
	slices.SortFunc(out, func(a, b SlaveStatus) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// inSync is spec §12.3's "slave OK": a report within MaxGap of end.
func (s *Server) inSync(end, acked int64) bool {
	return acked >= 0 && end-acked < s.cfg.MaxGap
}

// Acked is the highest CommitLog offset any slave has acknowledged (-1:
// none yet).
func (s *Server) Acked() int64 { return s.acked.Load() }

// slaveInSync reports whether a connected slave's ack is within MaxGap of
// the master's end (spec §12.3 "slave OK").
func (s *Server) slaveInSync() bool {
	if s.src == nil {
		return false
	}
	ws := s.writers.Load()
	if ws == nil {
		return false
	}
	end := s.src.CommitLogMaxOffset()
	for _, c := range *ws {
		if s.inSync(end, c.acked.Load()) {
			return true
		}
	}
	return false
}

// Wait implements store.ReplicaWaiter; the CommitLog calls it after a
// put that waits, outside the put lock. It wakes the transfer loops; on a
// SYNC_MASTER it then waits until a slave's ack reaches endOffset:
// PutOK, SlaveNotAvailable (no slave in sync, at once) or
// FlushSlaveTimeout (WaitTimeout passed, ctx ended or the server closed).
func (s *Server) Wait(ctx context.Context, endOffset int64) store.PutStatus {
	s.kickWriters()
	acked := &s.acked
	if s.cfg.AllAckInSyncStateSet && s.cfg.AutoSwitch {
		// Every slave of the SyncStateSet (none: the master alone).
		acked = &s.setAcked
		if p := s.syncSet.Load(); p == nil || len(*p) <= 1 {
			return store.PutOK
		}
	}
	if !s.cfg.Sync || acked.Load() >= endOffset {
		return store.PutOK
	}
	if acked == &s.acked && !s.slaveInSync() {
		return store.SlaveNotAvailable
	}
	w := s.waiters.add(endOffset, acked)
	if w == nil {
		return store.PutOK // acked between the check and the add
	}
	timer := time.NewTimer(s.cfg.WaitTimeout)
	defer timer.Stop()
	select {
	case st := <-w.done:
		return st
	case <-timer.C:
	case <-ctx.Done():
	case <-s.quit:
	}
	if st, done := s.waiters.remove(w); done {
		return st
	}
	return store.FlushSlaveTimeout
}

var _ store.ReplicaWaiter = (*Server)(nil)
