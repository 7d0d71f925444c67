package longpoll

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rocketd/rocketd/internal/config"
)

// Defaults. Java has no caps on held requests; ours keep a misbehaving
// client population from holding unbounded memory.
const (
	DefaultShortPollingTime = time.Second      // shortPollingTimeMills
	DefaultMaxSuspend       = 20 * time.Second // the longest suspendTimeoutMillis clients send (pull consumers)
	DefaultRecheckInterval  = 5 * time.Second  // PullRequestHoldService's check period with long polling
	DefaultMaxPerQueue      = 1024
	DefaultMaxTotal         = 100_000
	DefaultWorkers          = 8
)

// Config configures a Holder. The zero value takes every default.
type Config struct {
	// ShortPolling turns long polling off (broker.conf longPollingEnable=
	// false): every request is held ShortPollingTime whatever it asked,
	// and arrivals do not wake it (Java's store announces arrivals only
	// with long polling on).
	ShortPolling bool
	// ShortPollingTime is the hold time in short polling mode.
	ShortPollingTime time.Duration
	// MaxSuspend caps a request's own suspend timeout. Keep it below the
	// clients' request timeout (30 s) or they give up before the answer.
	MaxSuspend time.Duration
	// MaxPerQueue and MaxTotal bound the requests held for one queue and
	// in all. A request beyond either is refused by Hold, and the caller
	// answers it at once.
	MaxPerQueue int
	MaxTotal    int
	// Workers is the number of goroutines running wake-ups.
	Workers int
	// MaxOffset, when set, returns a queue's current max offset (the
	// store's MaxOffset). Hold uses it to close the race with an arrival
	// announced between the pull's read and the hold, and every
	// RecheckInterval the held requests are checked against it, as Java's
	// PullRequestHoldService does, in case an announcement was missed.
	MaxOffset func(topic string, queueID int32) int64
	// RecheckInterval is the period of the MaxOffset check.
	RecheckInterval time.Duration
	// Logger receives structured logs; default: discard.
	Logger *slog.Logger
}

// ConfigFromBroker returns the holder settings broker.conf governs
// (longPollingEnable, shortPollingTimeMills); the caller adds MaxOffset and
// Logger.
func ConfigFromBroker(b *config.BrokerConfig) Config {
	return Config{ShortPolling: !b.LongPollingEnable, ShortPollingTime: b.ShortPollingTime}
}

// EnsureDefaults fills zero fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.ShortPollingTime == 0 {
		c.ShortPollingTime = DefaultShortPollingTime
	}
	if c.MaxSuspend == 0 {
		c.MaxSuspend = DefaultMaxSuspend
	}
	if c.MaxPerQueue == 0 {
		c.MaxPerQueue = DefaultMaxPerQueue
	}
	if c.MaxTotal == 0 {
		c.MaxTotal = DefaultMaxTotal
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.RecheckInterval == 0 {
		c.RecheckInterval = DefaultRecheckInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports settings that cannot work.
func (c *Config) Validate() error {
	var errs []error
	if c.ShortPollingTime < 0 || c.MaxSuspend < 0 || c.RecheckInterval < 0 {
		errs = append(errs, fmt.Errorf("longpoll: negative duration (shortPollingTime %v, maxSuspend %v, recheck %v)",
			c.ShortPollingTime, c.MaxSuspend, c.RecheckInterval))
	}
	if c.MaxPerQueue < 0 || c.MaxTotal < 0 {
		errs = append(errs, fmt.Errorf("longpoll: negative cap (per queue %d, total %d)", c.MaxPerQueue, c.MaxTotal))
	}
	if c.Workers < 0 {
		errs = append(errs, errors.New("longpoll: negative worker count"))
	}
	return errors.Join(errs...)
}
