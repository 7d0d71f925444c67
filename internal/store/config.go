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
	DefaultDiskMaxUsedSpaceRatio       = config.DefaultBrokerDiskMaxUsedSpaceRatio
	DefaultDiskSpaceCleanForciblyRatio = config.DefaultDiskSpaceCleanForciblyRatio
	DefaultDiskSpaceWarningLevelRatio  = config.DefaultDiskSpaceWarningLevelRatio
	DefaultCleanInterval               = config.DefaultCleanResourceInterval
	DefaultDeleteFilesBatchMax         = 10
	DefaultMaxTransferBytes            = config.DefaultMaxTransferBytesInMemory
	DefaultMaxTransferCount            = config.DefaultMaxTransferCountInMemory
	DefaultMaxTransferBytesOnDisk      = config.DefaultMaxTransferBytesInDisk
	DefaultMaxTransferCountOnDisk      = config.DefaultMaxTransferCountInDisk
	DefaultDispatchCatchUpTimeout      = 5 * time.Minute
	DefaultMaxHashSlotNum              = config.DefaultMaxHashSlotNum
	DefaultMaxIndexNum                 = config.DefaultMaxIndexNum
	DefaultMaxMsgsNumBatch             = config.DefaultMaxMsgsNumBatch
)

// CorruptionAction, its values and CorruptionError are the CommitLog's,
// for callers that do not import it.
type (
	CorruptionAction = commitlog.CorruptionAction
	CorruptionError  = commitlog.CorruptionError
)

const (
	CorruptionRefuse   = commitlog.CorruptionRefuse
	CorruptionTruncate = commitlog.CorruptionTruncate
)

// ParseCorruptionAction parses "refuse" or "truncate".
func ParseCorruptionAction(s string) (CorruptionAction, error) {
	return commitlog.ParseCorruptionAction(s)
}

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
	Replica ReplicaWaiter
	// Slave refuses puts (a slave's log is written by HA through AppendRaw).
	Slave bool

	// FileReservedTime: CommitLog segments older than this are deleted (72 h).
	FileReservedTime time.Duration
	// DeleteWhen: the hours (local time of Clock) at which expired segments
	// are deleted, ";"-separated, e.g. "04" or "04;16". Default "04".
	DeleteWhen string
	// The disk ratios are percents (0..100, 0 = default) of the CommitLog's disk in use,
	// as df's Use% counts it (vfs.DiskSpace.UsedPercent), each compared with
	// ">". They may come in any order; cleanOnce says what each decides.
	// (broker.conf values arrive clamped to Java's ranges by package config.)
	//
	// DiskMaxUsedSpaceRatio (75): above it, expired segments are deleted
	// at any hour, not only at DeleteWhen.
	DiskMaxUsedSpaceRatio int
	// DiskSpaceCleanForciblyRatio (85): above it, the oldest segments are
	// deleted whatever their age, unless KeepUnexpiredSegments.
	DiskSpaceCleanForciblyRatio int
	// DiskSpaceWarningLevelRatio (90): above it, puts are refused until
	// use is back at or below both this and DiskSpaceCleanForciblyRatio.
	DiskSpaceWarningLevelRatio int
	// KeepUnexpiredSegments is cleanFileForciblyEnable=false: no segment
	// younger than FileReservedTime is ever deleted, so a filling disk ends
	// in refused puts (DiskSpaceWarningLevelRatio) instead of deleted
	// messages that consumers may not have read yet.
	KeepUnexpiredSegments bool
	// CleanInterval is the period of the cleanup service
	// (cleanResourceInterval, 10 s).
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

	// CommitLogCorruptionAction (CorruptionRefuse, CorruptionTruncate) is what recovery does when it finds an
	// invalid CommitLog record before data known to be durable (after a
	// clean shutdown, or older than the checkpoint): refuse to open
	// (the zero value) or truncate the log there (commitlog doc.go,
	// "Recovery"). A torn tail after a crash is always cut.
	CommitLogCorruptionAction CorruptionAction
	// SkipBodyCRCOnRecover is checkCRCOnRecover=false: recovery does not
	// compare bodies with their BODYCRC (commitlog RecoverOptions.SkipBodyCRC).
	SkipBodyCRCOnRecover bool

	// MessageIndexDisabled is messageIndexEnable=false: the dispatcher
	// builds no key index (files already there are still queried and
	// cleaned). MessageIndexSafe (messageIndexSafe) bounds abnormal
	// recovery's start by the checkpoint's index timestamp too, so that
	// re-dispatch rebuilds the index entries a crash lost (package index).
	MessageIndexDisabled bool
	MessageIndexSafe     bool
	// MaxHashSlotNum (5,000,000) and MaxIndexNum (20,000,000) size every
	// index file; existing files of another size are refused at Open.
	MaxHashSlotNum int
	MaxIndexNum    int
	// MaxMsgsNumBatch caps the records one QueryMessage returns (64).
	MaxMsgsNumBatch int

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
	if c.MaxHashSlotNum == 0 {
		c.MaxHashSlotNum = DefaultMaxHashSlotNum
	}
	if c.MaxIndexNum == 0 {
		c.MaxIndexNum = DefaultMaxIndexNum
	}
	if c.MaxMsgsNumBatch == 0 {
		c.MaxMsgsNumBatch = DefaultMaxMsgsNumBatch
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
	if c.CQUnitsPerFile < 0 || c.SegmentSize < 0 || c.MaxTransferBytes < 0 || c.MaxTransferCount < 0 || c.MaxOpenCQFiles < 0 ||
		c.MaxHashSlotNum < 0 || c.MaxIndexNum < 0 || c.MaxMsgsNumBatch < 0 {
		return errors.New("store: negative size in Config")
	}
	// No order between the disk ratios is required: Java accepts any, and
	// cleanOnce decides as Java's CleanCommitLogService does for each.
	for _, r := range []struct {
		name string
		v    int
	}{
		{"DiskMaxUsedSpaceRatio", c.DiskMaxUsedSpaceRatio},
		{"DiskSpaceCleanForciblyRatio", c.DiskSpaceCleanForciblyRatio},
		{"DiskSpaceWarningLevelRatio", c.DiskSpaceWarningLevelRatio},
	} {
		if r.v < 0 || r.v > 100 {
			return fmt.Errorf("store: Config.%s %d outside 0..100 (percent; 0 = default)", r.name, r.v)
		}
	}
	if c.CleanInterval < 0 {
		return fmt.Errorf("store: Config.CleanInterval %v is negative", c.CleanInterval)
	}
	if _, err := parseDeleteWhen(c.DeleteWhen); err != nil {
		return err
	}
	if c.MaxIndexNum == 1 {
		return errors.New("store: Config.MaxIndexNum 1 holds no index item (item 0 is never used)")
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
