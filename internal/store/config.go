package store

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/store/commitlog"
	"github.com/rocketd/rocketd/internal/store/consumequeue"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Defaults (rocketmq-spec.md §6, §8, §13.1; MessageStoreConfig in 4.9.8).
const (
	DefaultSegmentSize                 = 1 << 30
	DefaultCQFlushInterval             = time.Second
	DefaultCQFlushLeastPages           = 2
	DefaultCQFlushThoroughInterval     = 60 * time.Second
	DefaultFileReservedTime            = 72 * time.Hour
	DefaultDeleteWhen                  = "04"
	DefaultDiskMaxUsedSpaceRatio       = 75
	DefaultDiskSpaceCleanForciblyRatio = 85
	DefaultDiskSpaceWarningLevelRatio  = 90
	DefaultCleanInterval               = 10 * time.Second
	DefaultDeleteFilesBatchMax         = 10
	DefaultMaxTransferBytes            = 256 << 10
	DefaultMaxTransferCount            = 32
	DefaultMaxTransferBytesOnDisk      = 64 << 10
	DefaultMaxTransferCountOnDisk      = 8
	DefaultDispatchCatchUpTimeout      = 5 * time.Minute
)

// Config describes a Store. The zero value of a field means its default
// (EnsureDefaults fills them); Validate reports what cannot work.
type Config struct {
	// Dir is storePathRootDir: commitlog/, consumequeue/, checkpoint, abort,
	// lock and config/ live below it. Required.
	Dir string
	// FS is the file system. Default vfs.Default.
	FS vfs.FS

	// SegmentSize is mappedFileSizeCommitLog. Default 1 GiB.
	SegmentSize int64
	// CQUnitsPerFile is mappedFileSizeConsumeQueue / 20. Default 300,000.
	CQUnitsPerFile int
	// MaxOpenCQFiles caps the ConsumeQueue files open at once
	// (maxOpenConsumeQueueFiles); the rest are opened on demand. Default:
	// config.DefaultMaxOpenConsumeQueueFiles (half of RLIMIT_NOFILE).
	MaxOpenCQFiles int
	// FlushSync selects SYNC_FLUSH (flushDiskType); default ASYNC_FLUSH.
	FlushSync bool
	// SyncFlushTimeout (5 s), FlushInterval (500 ms), FlushThoroughInterval
	// (10 s), FlushLeastPages (4): the CommitLog's flush settings; zero means
	// the commitlog package's default.
	SyncFlushTimeout      time.Duration
	FlushInterval         time.Duration
	FlushThoroughInterval time.Duration
	FlushLeastPages       int
	// CQFlushInterval (1 s), CQFlushLeastPages (2), CQFlushThoroughInterval
	// (60 s): the ConsumeQueue flush; the checkpoint is written after each
	// ConsumeQueue flush that moved it.
	CQFlushInterval         time.Duration
	CQFlushLeastPages       int
	CQFlushThoroughInterval time.Duration
	// MaxMessageSize (4 MiB): see commitlog.
	MaxMessageSize int
	// DelayLevels: messageDelayLevel (default 18 levels, see commitlog).
	DelayLevels []time.Duration
	// StoreHost is brokerIP1:listenPort, written into records and msgIds.
	StoreHost netip.AddrPort
	// OSPageCacheBusyTimeout: puts are refused with OS_PAGECACHE_BUSY while
	// the put lock has been held longer (1 s; see commitlog).
	OSPageCacheBusyTimeout time.Duration
	// Replica, when set, is waited for by puts that wait (SYNC_MASTER); the
	// HA service implements it.
	Replica commitlog.ReplicaWaiter
	// Slave refuses puts (a slave's log is written by HA through AppendRaw).
	Slave bool

	// FileReservedTime: CommitLog segments older than this are deleted (72 h).
	FileReservedTime time.Duration
	// DeleteWhen: the hours (local time of Clock) at which expired segments
	// are deleted, ";"-separated, e.g. "04" or "04;16". Default "04".
	DeleteWhen string
	// DiskMaxUsedSpaceRatio (75): above this disk use (percent) expired
	// segments are deleted at any hour.
	DiskMaxUsedSpaceRatio int
	// DiskSpaceCleanForciblyRatio (85): above this, the oldest segments are
	// deleted whatever their age.
	DiskSpaceCleanForciblyRatio int
	// DiskSpaceWarningLevelRatio (90): above this, puts are refused until
	// use falls back to the forcible-clean ratio or below.
	DiskSpaceWarningLevelRatio int
	// CleanInterval is the period of the cleanup service (10 s).
	CleanInterval time.Duration
	// DeleteFilesBatchMax bounds the segments deleted per cleanup round (10).
	DeleteFilesBatchMax int

	// MaxTransferBytes (256 KiB) and MaxTransferCount (32) bound one
	// GetMessage (maxTransferBytesOnMessageInMemory / CountOnMessageInMemory).
	MaxTransferBytes int
	MaxTransferCount int
	// InMemoryBytes is how far behind the CommitLog end a message may be and
	// still count as in the page cache (RocketMQ: physical RAM ×
	// accessMessageInMemoryMaxRatio 40%). 0 = every message is in memory.
	// Messages further behind are "on disk": a pull then takes at most
	// MaxTransferBytesOnDisk (64 KiB) / MaxTransferCountOnDisk (8) of them,
	// and the result suggests reading from a slave.
	InMemoryBytes          int64
	MaxTransferBytesOnDisk int
	MaxTransferCountOnDisk int

	// DispatchCatchUpTimeout bounds how long Open waits for the dispatcher
	// to reach the CommitLog end (5 min).
	DispatchCatchUpTimeout time.Duration

	// Clock is the time source for store timestamps, retention and the
	// checkpoint. Default time.Now.
	Clock func() time.Time
	// Logger receives events. Default: discard.
	Logger *slog.Logger
}

// EnsureDefaults fills zero fields with their defaults.
func (c *Config) EnsureDefaults() {
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.SegmentSize == 0 {
		c.SegmentSize = DefaultSegmentSize
	}
	if c.CQUnitsPerFile == 0 {
		c.CQUnitsPerFile = consumequeue.DefaultUnitsPerFile
	}
	if c.MaxOpenCQFiles == 0 {
		c.MaxOpenCQFiles = config.DefaultMaxOpenConsumeQueueFiles()
	}
	if c.CQFlushInterval == 0 {
		c.CQFlushInterval = DefaultCQFlushInterval
	}
	if c.CQFlushLeastPages == 0 {
		c.CQFlushLeastPages = DefaultCQFlushLeastPages
	}
	if c.CQFlushThoroughInterval == 0 {
		c.CQFlushThoroughInterval = DefaultCQFlushThoroughInterval
	}
	if c.FileReservedTime == 0 {
		c.FileReservedTime = DefaultFileReservedTime
	}
	if c.DeleteWhen == "" {
		c.DeleteWhen = DefaultDeleteWhen
	}
	if c.DiskMaxUsedSpaceRatio == 0 {
		c.DiskMaxUsedSpaceRatio = DefaultDiskMaxUsedSpaceRatio
	}
	if c.DiskSpaceCleanForciblyRatio == 0 {
		c.DiskSpaceCleanForciblyRatio = DefaultDiskSpaceCleanForciblyRatio
	}
	if c.DiskSpaceWarningLevelRatio == 0 {
		c.DiskSpaceWarningLevelRatio = DefaultDiskSpaceWarningLevelRatio
	}
	if c.CleanInterval == 0 {
		c.CleanInterval = DefaultCleanInterval
	}
	if c.DeleteFilesBatchMax == 0 {
		c.DeleteFilesBatchMax = DefaultDeleteFilesBatchMax
	}
	if c.MaxTransferBytes == 0 {
		c.MaxTransferBytes = DefaultMaxTransferBytes
	}
	if c.MaxTransferCount == 0 {
		c.MaxTransferCount = DefaultMaxTransferCount
	}
	if c.MaxTransferBytesOnDisk == 0 {
		c.MaxTransferBytesOnDisk = DefaultMaxTransferBytesOnDisk
	}
	if c.MaxTransferCountOnDisk == 0 {
		c.MaxTransferCountOnDisk = DefaultMaxTransferCountOnDisk
	}
	if c.DispatchCatchUpTimeout == 0 {
		c.DispatchCatchUpTimeout = DefaultDispatchCatchUpTimeout
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports a configuration that cannot work.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return errors.New("store: Config.Dir is empty")
	}
	if c.CQUnitsPerFile < 0 || c.SegmentSize < 0 || c.MaxTransferBytes < 0 || c.MaxTransferCount < 0 || c.MaxOpenCQFiles < 0 {
		return errors.New("store: negative size in Config")
	}
	for _, r := range []int{c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio} {
		if r < 0 || r > 100 {
			return fmt.Errorf("store: disk ratio %d outside 0..100", r)
		}
	}
	if c.DiskMaxUsedSpaceRatio > c.DiskSpaceCleanForciblyRatio || c.DiskSpaceCleanForciblyRatio > c.DiskSpaceWarningLevelRatio {
		return fmt.Errorf("store: disk ratios must grow: max used %d <= clean forcibly %d <= warning %d",
			c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio)
	}
	if _, err := parseDeleteWhen(c.DeleteWhen); err != nil {
		return err
	}
	return nil
}

// parseDeleteWhen parses "04" or "04;16" into a set of hours.
func parseDeleteWhen(s string) (map[int]bool, error) {
	hours := map[int]bool{}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		h, err := strconv.Atoi(part)
		if err != nil || h < 0 || h > 23 {
			return nil, fmt.Errorf("store: DeleteWhen %q: %q is not an hour 0..23", s, part)
		}
		hours[h] = true
	}
	return hours, nil
}
