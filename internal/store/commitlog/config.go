package commitlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// Defaults (rocketmq-spec.md §6.2, §8, §9.1).
const (
	DefaultSegmentSize            = 1 << 30 // mappedFileSizeCommitLog
	DefaultSyncFlushTimeout       = 5 * time.Second
	DefaultFlushInterval          = 500 * time.Millisecond
	DefaultFlushThoroughInterval  = 10 * time.Second
	DefaultFlushLeastPages        = 4
	DefaultMaxMessageSize         = 4 << 20
	DefaultOSPageCacheBusyTimeout = time.Second
	DefaultRingSize               = 16 << 20

	// pageSize is the unit of FlushLeastPages.
	pageSize = 4096
	// maxRecordOverhead is what a whole record may exceed MaxMessageSize by
	// (4.9.8: the encoder buffer is maxMessageSize + 64 KiB).
	maxRecordOverhead = 64 << 10
	// commitChunk bounds one WriteAt of the committer.
	commitChunk = 1 << 20
)

// DefaultDelayLevels is messageDelayLevel "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m
// 7m 8m 9m 10m 20m 30m 1h 2h".
var DefaultDelayLevels = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
	6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
	20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
}

// Config describes a Log. The zero value of a field means its default.
type Config struct {
	// Dir is the commitlog directory (<root>/commitlog). Required.
	Dir string
	// FS is the file system. Default vfs.Default.
	FS vfs.FS
	// SegmentSize is the size of every segment file. Default 1 GiB.
	SegmentSize int64
	// FlushSync selects SYNC_FLUSH (group commit) instead of ASYNC_FLUSH.
	FlushSync bool
	// SyncFlushTimeout bounds a put's wait for its flush. Default 5 s.
	SyncFlushTimeout time.Duration
	// FlushInterval is the async flush period. Default 500 ms.
	FlushInterval time.Duration
	// FlushThoroughInterval forces an async flush of any amount. Default 10 s.
	FlushThoroughInterval time.Duration
	// FlushLeastPages is the dirty-page minimum of a periodic async flush. Default 4.
	FlushLeastPages int
	// MaxMessageSize bounds a body (and a batch). Default 4 MiB.
	MaxMessageSize int
	// DelayLevels are the delay levels; a level above len is capped. Default 18 levels.
	DelayLevels []time.Duration
	// StoreHost is the broker's address in records and offset msgIds.
	StoreHost netip.AddrPort
	// OSPageCacheBusyTimeout: a put is refused with OS_PAGECACHE_BUSY when the
	// put lock has been held longer than this. Default 1 s.
	OSPageCacheBusyTimeout time.Duration
	// RingSize is the size of the in-memory write buffer between the put
	// lock and the committer. Default 16 MiB, raised to hold two maximum
	// records.
	RingSize int
	// DiskFullPercent: puts are refused while the disk holding Dir is used
	// above this percentage (df's Use%); DiskResumePercent: they are
	// accepted again at or below it (diskSpaceWarningLevelRatio and
	// diskSpaceCleanForciblyRatio; the store passes its settings). 0: no
	// ratio limit (the log still keeps a reserve and refuses puts after a
	// write fails for lack of space).
	DiskFullPercent   int
	DiskResumePercent int
	// Replica, when set, is awaited by puts that wait (SYNC_MASTER).
	Replica ReplicaWaiter
	// OnCommit is called each time the committed end advances, from the
	// goroutine that committed (committer, flusher, or a put that rolled),
	// with the log's commit lock held. It must not block and must not call
	// back into the Log: it is the dispatcher's kick (a non-blocking send).
	OnCommit func(committed int64)
	// Logger receives events. Default: discard.
	Logger *slog.Logger
	// Now is the clock for store timestamps. Default time.Now.
	Now func() time.Time

	// realClock: Now is time.Now, so one reading serves both the store
	// timestamp and the lock-held-since time (which always uses the real
	// clock: OS_PAGECACHE_BUSY is about real time).
	realClock bool
}

// ReplicaWaiter waits until the slave has the log up to endOffset (the HA
// service implements it). Its status wins over the flush status (spec §8):
// PutOK, FlushSlaveTimeout or SlaveNotAvailable.
type ReplicaWaiter interface {
	Wait(ctx context.Context, endOffset int64) PutStatus
}

// EnsureDefaults fills in the default of every zero field.
func (c *Config) EnsureDefaults() {
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.SegmentSize == 0 {
		c.SegmentSize = DefaultSegmentSize
	}
	if c.SyncFlushTimeout == 0 {
		c.SyncFlushTimeout = DefaultSyncFlushTimeout
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.FlushThoroughInterval == 0 {
		c.FlushThoroughInterval = DefaultFlushThoroughInterval
	}
	if c.FlushLeastPages == 0 {
		c.FlushLeastPages = DefaultFlushLeastPages
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if len(c.DelayLevels) == 0 {
		c.DelayLevels = DefaultDelayLevels
	}
	if c.OSPageCacheBusyTimeout == 0 {
		c.OSPageCacheBusyTimeout = DefaultOSPageCacheBusyTimeout
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if min := 2 * (c.MaxMessageSize + maxRecordOverhead); c.RingSize < min {
		c.RingSize = min
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
		c.realClock = true
	}
	if !c.StoreHost.IsValid() {
		c.StoreHost = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	}
}

// Validate reports a configuration that cannot work.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return errors.New("commitlog: Config.Dir is empty")
	}
	if c.SegmentSize < 4096 {
		return fmt.Errorf("commitlog: SegmentSize %d: must be at least 4096", c.SegmentSize)
	}
	if c.MaxMessageSize < 0 || c.FlushLeastPages < 0 || c.RingSize < 0 {
		return errors.New("commitlog: negative size in Config")
	}
	if c.DiskFullPercent < 0 || c.DiskFullPercent > 100 || c.DiskResumePercent < 0 || c.DiskResumePercent > 100 {
		return fmt.Errorf("commitlog: disk percentages %d/%d outside 0..100", c.DiskFullPercent, c.DiskResumePercent)
	}
	return nil
}
