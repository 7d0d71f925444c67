package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/lifecycle"
)

// Defaults (Java ProducerManager/ConsumerManager/RebalanceLockManager and
// ClientHousekeepingService, 4.9.8).
const (
	DefaultChannelExpiry  = 120 * time.Second // CHANNEL_EXPIRED_TIMEOUT
	DefaultScanInterval   = 10 * time.Second  // ClientHousekeepingService period
	DefaultLockMaxLive    = 60 * time.Second  // rocketmq.broker.rebalance.lockMaxLiveTime
	DefaultNotifyWorkers  = 2
	DefaultNotifyQueueLen = 4096
	DefaultNotifyGrace    = 2 * time.Second
	// DefaultReplyPushTimeout is Java's Broker2Client.callClient timeout.
	DefaultReplyPushTimeout = 10 * time.Second
)

// Config configures a Registry. The zero value takes every default.
type Config struct {
	// ChannelExpiry is how long a channel may go without a heartbeat
	// before the idle scan removes it and closes its connection.
	ChannelExpiry time.Duration
	// ScanInterval is the period of the idle scan.
	ScanInterval time.Duration
	// LockMaxLive is how long a rebalance lock lives without renewal.
	LockMaxLive time.Duration
	// NotifyWorkers is the number of goroutines that send
	// NOTIFY_CONSUMER_IDS_CHANGED; more than one so that one client that
	// stopped reading delays the others as little as possible.
	NotifyWorkers int
	// NotifyQueueLen bounds the notifications waiting to be sent; beyond
	// it they are dropped (clients also rebalance every 20 s on their own).
	NotifyQueueLen int
	// NotifyGrace is how long Close waits for notifications being written
	// before it closes the connections they are stuck on.
	NotifyGrace time.Duration
	// NotifyDisabled turns NOTIFY_CONSUMER_IDS_CHANGED off for every group
	// (broker.conf notifyConsumerIdsChangedEnable=false; Java checks the
	// broker flag and the group's flag both).
	NotifyDisabled bool
	// NotifyEnabled tells whether a consumer group wants
	// NOTIFY_CONSUMER_IDS_CHANGED (its subscription group's
	// notifyConsumerIdsChangedEnable). It is consulted for changes no
	// request of the group caused: connection close and idle expiry.
	// RegisterConsumer and UnregisterConsumer take the flag from their
	// caller instead. Default: always true. It is called without registry
	// locks held (it may look the group up in broker/meta).
	NotifyEnabled func(group string) bool
	// ReplyPushTimeout bounds PushReply's wait for the requester's answer.
	ReplyPushTimeout time.Duration
	// Now is the clock for heartbeat ages and lock expiry; default time.Now.
	Now func() time.Time
	// Logger receives structured logs; default: discard.
	Logger *slog.Logger
}

// ConfigFromBroker returns the registry settings broker.conf governs; the
// rest keep their defaults (Java hard-codes them).
func ConfigFromBroker(b *config.BrokerConfig) Config {
	return Config{NotifyDisabled: !b.NotifyConsumerIdsChangedEnable}
}

// EnsureDefaults fills zero fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.ChannelExpiry == 0 {
		c.ChannelExpiry = DefaultChannelExpiry
	}
	if c.ScanInterval == 0 {
		c.ScanInterval = DefaultScanInterval
	}
	if c.LockMaxLive == 0 {
		c.LockMaxLive = DefaultLockMaxLive
	}
	if c.NotifyWorkers == 0 {
		c.NotifyWorkers = DefaultNotifyWorkers
	}
	if c.NotifyQueueLen == 0 {
		c.NotifyQueueLen = DefaultNotifyQueueLen
	}
	if c.NotifyGrace == 0 {
		c.NotifyGrace = DefaultNotifyGrace
	}
	if c.ReplyPushTimeout == 0 {
		c.ReplyPushTimeout = DefaultReplyPushTimeout
	}
	if c.NotifyEnabled == nil {
		c.NotifyEnabled = func(string) bool { return true }
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports settings that cannot work.
func (c *Config) Validate() error {
	var errs []error
	if c.ChannelExpiry < 0 {
		errs = append(errs, fmt.Errorf("client: channel expiry %v < 0", c.ChannelExpiry))
	}
	if c.ScanInterval < 0 {
		errs = append(errs, fmt.Errorf("client: scan interval %v < 0", c.ScanInterval))
	}
	if c.LockMaxLive < 0 {
		errs = append(errs, fmt.Errorf("client: lock max live %v < 0", c.LockMaxLive))
	}
	if c.NotifyWorkers < 0 || c.NotifyQueueLen < 0 || c.NotifyGrace < 0 || c.ReplyPushTimeout < 0 {
		errs = append(errs, errors.New("client: negative notifier setting"))
	}
	return errors.Join(errs...)
}

// Registry is the broker's view of its clients: producer groups, consumer
// groups with their subscriptions, and the rebalance locks of orderly
// consumers. All methods are safe for concurrent use and may be called
// before Start and after Close (then nothing is scanned and no
// notification is sent).
type Registry struct {
	cfg Config
	log *slog.Logger
	now func() time.Time

	producers producerTable
	consumers consumerTable
	locks     *Locks
	notifier  *notifier

	closed  atomic.Bool    // set by Close before it stops the scan
	scanner lifecycle.Loop // the idle scan
}

// New returns a Registry; call Start to run the idle scan and the notifier.
func New(cfg Config) (*Registry, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Registry{
		cfg:   cfg,
		log:   cfg.Logger,
		now:   cfg.Now,
		locks: NewLocks(cfg.LockMaxLive, cfg.Now),
	}
	r.producers.groups = make(map[string]map[Channel]*channelState)
	r.producers.byClient = make(map[string]clientChannels)
	r.consumers.groups = make(map[string]*consumerGroup)
	r.notifier = newNotifier(cfg.NotifyWorkers, cfg.NotifyQueueLen, cfg.NotifyGrace, cfg.NotifyDisabled, cfg.Logger)
	return r, nil
}

// Locks returns the rebalance lock table (LOCK_BATCH_MQ, UNLOCK_BATCH_MQ).
func (r *Registry) Locks() *Locks { return r.locks }

// Start runs the idle scan (every ScanInterval) and the notifier workers.
func (r *Registry) Start() error {
	if !r.scanner.Start("client-scan", r.scanLoop) {
		if r.closed.Load() {
			return errors.New("client: registry closed")
		}
		return errors.New("client: registry already started")
	}
	// The notifier refuses to start once closed: a Close racing with
	// this Start leaves no worker behind.
	r.notifier.start()
	return nil
}

// Close stops the idle scan and the notifier: notifications still queued
// are dropped; one being written is given NotifyGrace, then its connection
// is closed. The tables stay readable. Idempotent.
func (r *Registry) Close() error {
	r.closed.Store(true)
	r.scanner.Close()
	r.notifier.close()
	return nil
}

func (r *Registry) scanLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.ScanInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.scan()
		}
	}
}

// scan removes channels idle for longer than ChannelExpiry (closing their
// connections and notifying the rest of their consumer groups) and drops
// expired rebalance locks.
func (r *Registry) scan() {
	now := r.now()
	var stale []Channel
	stale = r.producers.expire(now, r.cfg.ChannelExpiry, stale, r.log)
	var notes []notification
	stale, notes = r.consumers.expire(now, r.cfg.ChannelExpiry, stale, r.log)
	r.notifier.send(r.filterEnabled(notes))
	// Closed outside the table locks; closing again a channel that is both
	// producer and consumer is harmless (Close is idempotent). The
	// connection-close callback then finds nothing left to remove.
	for _, ch := range stale {
		_ = ch.Close()
	}
	r.locks.dropExpired()
}

// RemoveChannel forgets a closed connection at once: it leaves every
// producer and consumer group it was in, and the rest of each consumer group
// it left is notified (when NotifyEnabled says so). Wire it to
// remoting.Server.OnConnClose: the Go client never sends UNREGISTER_CLIENT.
func (r *Registry) RemoveChannel(ch Channel) {
	r.producers.removeChannel(ch)
	notes := r.consumers.removeChannel(ch, r.log)
	r.notifier.send(r.filterEnabled(notes))
}

// filterEnabled keeps the notifications of groups that want them.
func (r *Registry) filterEnabled(notes []notification) []notification {
	kept := notes[:0]
	for _, n := range notes {
		if r.cfg.NotifyEnabled(n.group) {
			kept = append(kept, n)
		}
	}
	return kept
}

// channelState is a registered channel's client info and last heartbeat.
type channelState struct {
	ClientInfo
	lastUpdate time.Time
}

func (s *channelState) snapshot(ch Channel) ChannelInfo {
	return ChannelInfo{Channel: ch, ClientInfo: s.ClientInfo, LastUpdate: s.lastUpdate}
}
