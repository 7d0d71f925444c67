package txn

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// Producer is a live connection of a producer group: where a check-back
// goes. *remoting.Conn implements it.
type Producer interface {
	RemoteAddr() string
	// InvokeOneway sends CHECK_TRANSACTION_STATE; it may block while the
	// peer does not read (until its connection closes).
	InvokeOneway(req *remoting.Command) error
}

// Config describes a Service.
type Config struct {
	Store   *store.Store  // required
	Topics  *meta.Topics  // required: TRANS_CHECK_MAX_TIME_TOPIC is created on demand
	Offsets *meta.Offsets // required: the check progress
	// PickProducer returns a live connection of a producer group (the
	// broker's client registry). Nil: checks are counted but never sent.
	PickProducer func(group string) (Producer, bool)
	// StoreHost is brokerIP1:port (born host of op records).
	StoreHost netip.AddrPort
	// Timeout: a half message younger than this is not checked
	// (transactionTimeOut, default 6 s).
	Timeout time.Duration
	// CheckMax is the number of checks before a half message is discarded
	// (transactionCheckMax, default 15).
	CheckMax int
	// CheckInterval is the period of the check rounds
	// (transactionCheckInterval, default 60 s).
	CheckInterval time.Duration
	// FileReservedTime: a half message born longer ago is discarded
	// unchecked (fileReservedTime, default 72 h).
	FileReservedTime time.Duration
	// Committed, when set, is told of every committed message stored:
	// its topic, message count and bytes written (the broker's statistics
	// count it as a put, as Java's EndTransactionProcessor does).
	Committed func(topic string, msgs, bytes int)
	// Observer, when set, is told of half messages stored, settled and
	// discarded (the transaction metrics); it must not block.
	Observer Observer
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger // default: discard
}

// Observer follows the half messages per real topic (REAL_TOPIC):
// metrics.Events implements it.
type Observer interface {
	// HalfPut: a half message was stored.
	HalfPut(topic string)
	// Finished: a half message born at bornMs was committed or rolled
	// back at nowMs.
	Finished(topic string, commit bool, bornMs, nowMs int64)
	// HalfDone: a half message was discarded after too many checks.
	HalfDone(topic string)
}

// Defaults of Config (rocketmq-spec.md §11.1).
const (
	DefaultTimeout          = 6 * time.Second
	DefaultCheckMax         = 15
	DefaultCheckInterval    = 60 * time.Second
	DefaultFileReservedTime = 72 * time.Hour
)

// Service handles half messages, END_TRANSACTION and the check-back. End
// and PutHalf are safe for concurrent use; the check rounds run on one
// goroutine between Start and Close.
type Service struct {
	cfg Config
	log *slog.Logger

	mu struct {
		sync.Mutex
		// settled holds the UNIQ_KEY of every transaction this process
		// committed or rolled back, with when (pruned after settleMemory).
		settled map[string]time.Time
	}
	settleMemory time.Duration
	// halfProgress mirrors the check walk's progress in the half queue
	// (set at New from the stored progress, then by every round).
	halfProgress atomic.Int64

	// Owned by the check goroutine (or a test calling checkRound).
	ops opState

	// loopMu guards loop, the running check goroutine (nil: stopped). A
	// Loop runs once: each Start after a Stop (a role change) gets a new one.
	loopMu  sync.Mutex
	loop    *lifecycle.Loop
	closed  atomic.Bool  // set by Close before it stops the loop
	halting atomic.Bool  // set by Stop before it stops the loop
	rounds  atomic.Int64 // check rounds the goroutine finished
}

// New returns a Service; Start begins the check rounds.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Topics == nil || cfg.Offsets == nil {
		return nil, errors.New("txn: Store, Topics and Offsets are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.CheckMax <= 0 {
		cfg.CheckMax = DefaultCheckMax
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	if cfg.FileReservedTime <= 0 {
		cfg.FileReservedTime = DefaultFileReservedTime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		cfg: cfg, log: log,
		// After CheckMax rounds every copy of a transaction is discarded:
		// no END can name a live copy later than that.
		settleMemory: time.Duration(cfg.CheckMax+2)*cfg.CheckInterval + cfg.Timeout,
	}
	s.mu.settled = make(map[string]time.Time)
	s.ops.reset(0)
	s.halfProgress.Store(s.progress(meta.TransHalfTopic))
	return s, nil
}

// Start begins the check rounds (masters only). A broker promoted at
// runtime calls it again after Stop: the rounds go on from the progress
// committed to Offsets (a slave's copy of its old master's).
func (s *Service) Start() error {
	s.loopMu.Lock()
	defer s.loopMu.Unlock()
	switch {
	case s.closed.Load():
		return errors.New("txn: closed")
	case s.loop != nil:
		return errors.New("txn: already started")
	}
	s.halting.Store(false)
	s.halfProgress.Store(s.progress(meta.TransHalfTopic))
	l := &lifecycle.Loop{}
	s.loop = l
	l.Start("txn-check", func(ctx context.Context) { s.run(ctx, l) })
	return nil
}

// Stop ends the check rounds (a demoted master), waiting for a running
// round to end; END_TRANSACTION and PutHalf are still served. The
// progress of the finished rounds is already committed to Offsets.
func (s *Service) Stop() {
	s.loopMu.Lock()
	defer s.loopMu.Unlock()
	if s.loop == nil {
		return
	}
	s.halting.Store(true)
	s.loop.Close()
	s.loop = nil
}

// Running reports whether the check rounds run (between Start and Stop).
func (s *Service) Running() bool {
	s.loopMu.Lock()
	defer s.loopMu.Unlock()
	return s.loop != nil
}

// Close stops the check rounds, waiting for a running round to end (a
// check blocked on a connection ends when that connection closes). The
// progress of the finished rounds is already committed to Offsets.
// Idempotent.
func (s *Service) Close() error {
	s.closed.Store(true)
	s.Stop()
	return nil
}

// Kick runs a check round now (tests, admin); coalesced with a pending
// one; nothing while stopped.
func (s *Service) Kick() {
	s.loopMu.Lock()
	defer s.loopMu.Unlock()
	if s.loop != nil {
		s.loop.Kick()
	}
}

func (s *Service) run(ctx context.Context, l *lifecycle.Loop) {
	t := time.NewTicker(s.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.Kicked():
		}
		s.checkRound()
		s.rounds.Add(1)
	}
}

// Rounds is how many check rounds the goroutine has finished: a test (or
// an operator) waits on it for "n more rounds" instead of guessing a time.
func (s *Service) Rounds() int64 { return s.rounds.Load() }

// stopping reports whether Stop or Close was called (a long round gives
// up early).
func (s *Service) stopping() bool {
	return s.closed.Load() || s.halting.Load()
}

// markSettled records key as settled; false when it already was.
func (s *Service) markSettled(key string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.mu.settled[key]; dup {
		return false
	}
	s.mu.settled[key] = now
	return true
}

// unmarkSettled forgets key (the settlement failed to store).
func (s *Service) unmarkSettled(key string) {
	s.mu.Lock()
	delete(s.mu.settled, key)
	s.mu.Unlock()
}

// isSettled reports whether this process settled key.
func (s *Service) isSettled(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.mu.settled[key]
	return ok
}

// pruneSettled forgets settlements older than settleMemory.
func (s *Service) pruneSettled(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, at := range s.mu.settled {
		if now.Sub(at) > s.settleMemory {
			delete(s.mu.settled, k)
		}
	}
}
