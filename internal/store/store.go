package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/store/checkpoint"
	"github.com/rocketd/rocketd/internal/store/commitlog"
	"github.com/rocketd/rocketd/internal/store/consumequeue"
	"github.com/rocketd/rocketd/internal/store/fdcache"
	"github.com/rocketd/rocketd/internal/store/index"
	"github.com/rocketd/rocketd/internal/vfs"
)

// File and directory names under Config.Dir (spec §6.1). Do not change.
const (
	CommitLogDir = "commitlog"
	ConfigDir    = "config"
	AbortFile    = "abort"
	LockFile     = "lock"
)

// ErrClosed is returned by operations on a closed store.
var ErrClosed = errors.New("store: closed")

// Store is the message store. All methods are safe for concurrent use.
type Store struct {
	cfg         Config
	admitter    ReplicaAdmitter // cfg.Replica when it refuses puts before the write
	log         *commitlog.Log
	cqs         *consumequeue.Set
	files       *fdcache.Cache // open ConsumeQueue files, at most MaxOpenCQFiles
	ckpt        *checkpoint.File
	idx         *index.Index
	lock        io.Closer
	deleteHours map[int]bool
	lastExitOK  bool

	// putGate: puts hold it shared for their whole duration (including the
	// flush wait); Close takes it exclusively after setting closed, so that
	// no accepted put is still inside the CommitLog when it shuts down.
	putGate sync.RWMutex
	closed  atomic.Bool
	// slave refuses puts: the log is written by HA through AppendRaw
	// (Config.Slave at open; BecomeMaster and BecomeSlave change it).
	slave atomic.Bool
	// roleMu serializes role changes and truncation (role.go).
	roleMu sync.Mutex
	// ckptMu serializes the checkpoint's advance (flush loop) with
	// TruncateTo's lowering.
	ckptMu sync.Mutex
	// epochs is the epoch file (epoch.go).
	epochs *Epochs
	// logicsErr stops dispatch for good (undecodable CommitLog data): puts
	// are refused (RocketMQ's WRITE_LOGICS_QUEUE_ERROR running flag) until
	// the store is reopened. A failing ConsumeQueue write only blocks
	// dispatch (dispatcher.blocked) while it retries.
	logicsErr atomic.Pointer[error]

	disp    *dispatcher
	flusher lifecycle.Loop
	// prevFlushSnapshot is the dispatched offset the flusher's previous
	// pass snapshotted (flusher goroutine only).
	prevFlushSnapshot int64
	cleaner           lifecycle.Loop
	listeners         atomic.Pointer[[]ArrivalListener]

	closeOnce sync.Once
	closeErr  error

	// keptUnexpired is set while the disk is above the forcible-clean
	// ratio and KeepUnexpiredSegments refuses forced deletion: the warning
	// is logged once per such episode.
	keptUnexpired atomic.Bool
	// manualDeletes is how many more cleanup rounds delete expired
	// CommitLog segments whatever DeleteWhen says (DeleteExpiredManually).
	manualDeletes atomic.Int32
}

// Open opens (creating if needed) the store in cfg.Dir, recovers it and
// starts its services. The returned store accepts puts.
func Open(cfg Config) (*Store, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hours, _ := parseDeleteWhen(cfg.DeleteWhen)
	s := &Store{cfg: cfg, deleteHours: hours}
	s.admitter, _ = cfg.Replica.(ReplicaAdmitter)
	s.slave.Store(cfg.Slave)
	s.listeners.Store(&[]ArrivalListener{})
	if err := s.open(); err != nil {
		s.abandon()
		return nil, err
	}
	return s, nil
}

func (s *Store) path(name string) string { return filepath.Join(s.cfg.Dir, name) }

func (s *Store) open() error {
	fsys := s.cfg.FS
	for _, d := range []string{s.cfg.Dir, s.path(CommitLogDir), s.path(consumequeue.DirName), s.path(ConfigDir)} {
		if err := vfs.MkdirAllSync(fsys, d, 0o755); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	lock, err := fsys.Lock(s.path(LockFile))
	if err != nil {
		return fmt.Errorf("store: lock %s: %w", s.path(LockFile), err)
	}
	s.lock = lock
	// RocketMQ writes "lock" into the file it holds; do the same (best
	// effort: the OS lock is what excludes other brokers).
	if f, err := fsys.OpenReadWrite(s.path(LockFile)); err == nil {
		_, _ = f.WriteAt([]byte("lock"), 0)
		_ = f.Close()
	}

	_, err = fsys.Stat(s.path(AbortFile))
	switch {
	case err == nil:
		s.lastExitOK = false
	case errors.Is(err, fs.ErrNotExist):
		s.lastExitOK = true
	default:
		return fmt.Errorf("store: stat %s: %w", s.path(AbortFile), err)
	}

	ckpt, _, err := checkpoint.Open(fsys, s.path(checkpoint.FileName))
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	s.ckpt = ckpt
	if s.epochs, err = OpenEpochs(fsys, s.path(EpochFile)); err != nil {
		return err
	}

	s.idx, err = index.Open(index.Options{
		FS: fsys, Dir: s.path(index.DirName), HashSlotNum: s.cfg.MaxHashSlotNum, IndexNum: s.cfg.MaxIndexNum,
		LastExitOK: s.lastExitOK, IndexMsgTimestamp: ckpt.State().IndexMsgTimestamp,
		OnSealed: s.indexSealed, Clock: s.cfg.Clock, Logger: s.cfg.Logger,
	})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}

	s.files = fdcache.New(fsys, s.cfg.MaxOpenCQFiles)
	s.cqs, err = consumequeue.OpenSet(s.path(consumequeue.DirName), consumequeue.Options{
		FS: fsys, UnitsPerFile: s.cfg.CQUnitsPerFile, Logger: s.cfg.Logger, Files: s.files})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	s.disp = newDispatcher(s)
	s.log, err = commitlog.Open(commitlog.Config{
		Dir:                    s.path(CommitLogDir),
		FS:                     fsys,
		SegmentSize:            s.cfg.SegmentSize,
		FlushSync:              s.cfg.FlushSync,
		SyncFlushTimeout:       s.cfg.SyncFlushTimeout,
		FlushInterval:          s.cfg.FlushInterval,
		FlushThoroughInterval:  s.cfg.FlushThoroughInterval,
		FlushLeastPages:        s.cfg.FlushLeastPages,
		MaxMessageSize:         s.cfg.MaxMessageSize,
		DelayLevels:            s.cfg.DelayLevels,
		StoreHost:              s.cfg.StoreHost,
		OSPageCacheBusyTimeout: s.cfg.OSPageCacheBusyTimeout,
		DiskFullPercent:        s.cfg.DiskSpaceWarningLevelRatio,
		DiskResumePercent:      s.cfg.DiskSpaceCleanForciblyRatio,
		Replica:                s.cfg.Replica,
		Logger:                 s.cfg.Logger,
		Now:                    s.cfg.Clock,
		OnCommit:               s.disp.kickFn,
	})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return s.recover()
}

// recover runs spec §7 steps 4-6 and 8, then starts the services.
func (s *Store) recover() error {
	started := time.Now()
	cqMax, err := s.cqs.Recover()
	if err != nil {
		return fmt.Errorf("store: recover consume queues: %w", err)
	}
	from := int64(commitlog.NormalRecovery)
	// dispatchFloor: dispatch resumes at or below it (after a crash the
	// queues may lack units after it).
	dispatchFloor, fromRecord := int64(-1), false
	if !s.lastExitOK {
		from = s.abnormalRecoveryStart()
		dispatchFloor = from
		// Finer than the segment: the last record known durable in both
		// structures. A clean shutdown keeps the segment scan, which
		// verifies the last segments as RocketMQ's normal recovery does.
		if rec, recEnd, ok := s.resumeRecord(from); ok {
			from, dispatchFloor, fromRecord = rec, recEnd, true
		}
	}
	durable := s.ckpt.State().PhysicMsgTimestamp
	res, err := s.log.RecoverWith(commitlog.RecoverOptions{
		From:             from,
		FromRecord:       fromRecord,
		CleanShutdown:    s.lastExitOK,
		DurableTimestamp: durable,
		OnCorruption:     s.cfg.CommitLogCorruptionAction,
		SkipBodyCRC:      s.cfg.SkipBodyCRCOnRecover,
	})
	if err != nil {
		return fmt.Errorf("store: recover commitlog: %w", err)
	}
	end := res.End
	if st := s.ckpt.State(); st.HasResume && st.ResumeRecord >= end {
		// The log ends at or before it (a truncation): forget it until the
		// flushers name a new one.
		s.ckpt.ClearResumeRecord()
	}
	if res.Corruption != nil && res.LastTimestamp < durable {
		// The truncation removed records the checkpoint counted as
		// durable: lower it to what is left, or the next recovery would
		// find the same "corruption" at the new end.
		s.ckpt.SetPhysicMsgTimestamp(res.LastTimestamp)
		s.cfg.Logger.Error("store: commitlog truncated below the checkpoint", "physicMsgTimestamp", durable,
			"lastStoreTimestamp", res.LastTimestamp, "offset", res.Corruption.Offset)
	}
	if len(s.log.Segments()) == 0 && cqMax > 0 {
		// No CommitLog at all: the queues point at nothing (spec §7 step 5).
		s.cfg.Logger.Warn("store: no commitlog segments; destroying consume queues")
		if err := s.cqs.Destroy(); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		cqMax = 0
	}
	// A truncation that cut the log but crashed before the epoch file:
	// no epoch starts beyond the log (an epoch starting at its end is a
	// master that took it and wrote nothing yet).
	if err := s.epochs.TruncateSuffixByOffset(end + 1); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if cqMax > end {
		s.cfg.Logger.Warn("store: consume queues point past the commitlog end; truncating", "cqMaxPhysic", cqMax, "commitlogEnd", end)
		if err := s.cqs.Truncate(end); err != nil {
			return fmt.Errorf("store: truncate consume queues: %w", err)
		}
	}
	// Where dispatch resumes: after the units the queues have; after a crash
	// from the recovery start as well, since queues flush independently and
	// any of them may have lost units the others kept.
	minOff := s.log.MinOffset()
	resume := minOff
	queues := s.cqs.Queues()
	for _, q := range queues {
		resume = max(resume, q.MaxPhysicOffset())
	}
	if dispatchFloor >= 0 {
		resume = max(min(resume, dispatchFloor), minOff)
	}
	resume = min(resume, end)
	if err := s.cqs.CorrectMinOffsets(minOff); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := s.log.Start(); err != nil {
		return fmt.Errorf("store: start commitlog: %w", err)
	}
	s.prepareSegment()
	s.disp.start(resume)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.DispatchCatchUpTimeout)
	defer cancel()
	if err := s.disp.waitFor(ctx, end); err != nil {
		return fmt.Errorf("store: dispatch after recovery (from %d to %d): %w", resume, end, err)
	}
	// Rebuild the next-queue-offset table (spec §7 step 6), with the queues
	// re-dispatch may have created.
	queues = s.cqs.Queues()
	for _, q := range queues {
		s.log.SetQueueOffset(q.Topic(), q.QueueID(), q.MaxOffset())
	}
	s.flusher.Start("store-cq-flush", func(ctx context.Context) { s.flushLoop(ctx.Done()) })
	s.cleaner.Start("store-cleanup", func(ctx context.Context) { s.cleanLoop(ctx.Done()) })
	// The checkpoint file exists from the start, as RocketMQ's does.
	if err := s.ckpt.Flush(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := s.createAbort(); err != nil {
		return err
	}
	s.cfg.Logger.Info("store: open", "dir", s.cfg.Dir, "lastExitOK", s.lastExitOK,
		"commitlogMin", minOff, "commitlogEnd", end, "dispatchFrom", resume,
		"queues", len(queues), "took", time.Since(started))
	return nil
}

// prepareSegment has the segment the first put writes prepared before Open
// returns (and so before the broker registers with the NameServer): under
// SYNC_FLUSH a fresh store's first put would otherwise wait seconds for a
// 1 GiB zero-fill. A slave without segments is skipped: it starts wherever
// its master's data starts, which it does not know yet. A failure (a full
// disk) does not fail Open: puts are refused with the reason (RollErr)
// until the allocator's retry succeeds.
func (s *Store) prepareSegment() {
	if s.slave.Load() && len(s.log.Segments()) == 0 {
		return
	}
	if _, err := s.log.PrepareSegment(); err != nil {
		s.cfg.Logger.Error("store: cannot prepare the first commitlog segment; puts fail until it is prepared", "err", err)
	}
}

func (s *Store) createAbort() error {
	path := s.path(AbortFile)
	f, err := s.cfg.FS.Create(path)
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.cfg.FS.SyncDir(s.cfg.Dir)
	}
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	return nil
}

// abandon releases what a failed Open acquired (no abort removal: the
// store's state on disk is left as found).
func (s *Store) abandon() {
	s.closed.Store(true)
	if s.disp != nil {
		s.disp.stop()
	}
	s.flusher.Close()
	s.cleaner.Close()
	if s.log != nil {
		_ = s.log.Close()
	}
	if s.cqs != nil {
		_ = s.cqs.Close()
	}
	if s.files != nil {
		_ = s.files.Close()
	}
	if s.idx != nil {
		_ = s.idx.Close()
	}
	if s.lock != nil {
		_ = s.lock.Close()
	}
}

// Close shuts the store down in this order, each step for a reason:
//
//  1. Refuse new puts and wait for accepted ones to leave (putGate): nothing
//     may be appended while the tail is being made durable.
//  2. Stop the cleanup service: no segment may disappear under the final
//     dispatch and flush.
//  3. Let dispatch catch up with the CommitLog's end, then stop it: every
//     stored message gets its ConsumeQueue unit before the queues are
//     flushed, so a clean restart needs no re-dispatch.
//  4. Close the CommitLog: its final commit and flush make every record
//     durable.
//  5. Stop the ConsumeQueue flusher and flush every queue and the key
//     index (its slot table and header live in memory until then).
//  6. Write the checkpoint, now that both structures are durable up to it.
//  7. Remove `abort` — only if all of the above succeeded; otherwise the
//     next start runs abnormal recovery, which is always safe.
//  8. Close the queue files and release the lock.
//
// Close is idempotent; later calls return the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	var errs []error
	s.closed.Store(true)
	s.putGate.Lock() // step 1: drained
	s.putGate.Unlock()

	s.cleaner.Close() // step 2

	// step 3: the CommitLog commits its ring by itself; give it a bounded time.
	caughtUp := s.disp.drain(s.log, 10*time.Second)
	s.disp.stop()
	if err := s.disp.err(); err != nil {
		caughtUp = false
		errs = append(errs, err)
	} else if err := s.disp.blockedErr(); err != nil {
		caughtUp = false
		errs = append(errs, fmt.Errorf("store: dispatch blocked at shutdown: %w", err))
	}

	if err := s.log.Close(); err != nil { // step 4
		errs = append(errs, fmt.Errorf("store: close commitlog: %w", err))
	}
	if caughtUp && s.disp.dispatched() < s.log.Committed() {
		// The final commit of step 4 added records dispatch has not seen.
		caughtUp = false
	}

	s.flusher.Close() // step 5
	if err := s.cqs.Flush(0); err != nil {
		errs = append(errs, fmt.Errorf("store: flush consume queues: %w", err))
	}
	if err := s.idx.Flush(); err != nil {
		errs = append(errs, fmt.Errorf("store: flush index: %w", err))
	}

	// step 6
	ts := s.disp.lastStoreTimestamp()
	if len(errs) == 0 && caughtUp {
		s.ckpt.SetPhysicMsgTimestamp(ts)
		s.ckpt.SetLogicsMsgTimestamp(ts)
		if rec, ok := s.disp.resumeRecordAt(s.log.Flushed()); ok {
			s.ckpt.SetResumeRecord(rec)
		}
	}
	if err := s.ckpt.Flush(); err != nil {
		errs = append(errs, fmt.Errorf("store: %w", err))
	}

	// step 7
	if len(errs) == 0 && caughtUp && s.logicsErr.Load() == nil {
		if err := s.cfg.FS.Remove(s.path(AbortFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("store: remove abort: %w", err))
		} else if err := s.cfg.FS.SyncDir(s.cfg.Dir); err != nil {
			errs = append(errs, fmt.Errorf("store: sync %s: %w", s.cfg.Dir, err))
		}
	} else {
		s.cfg.Logger.Warn("store: unclean shutdown; keeping the abort file", "caughtUp", caughtUp, "errors", len(errs))
	}

	// step 8
	if err := s.cqs.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: %w", err))
	}
	if err := s.files.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: %w", err))
	}
	if err := s.idx.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: %w", err))
	}
	if err := s.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: unlock: %w", err))
	}
	return errors.Join(errs...)
}

// indexSealed records a full, synced index file as the checkpoint's
// indexMsgTimestamp (Java's IndexService.flush).
func (s *Store) indexSealed(endTimestamp int64) error {
	s.ckpt.SetIndexMsgTimestamp(endTimestamp)
	return s.ckpt.Flush()
}

// LastExitOK reports whether the previous run shut down cleanly (no abort
// file was found at Open).
func (s *Store) LastExitOK() bool { return s.lastExitOK }

// Dir returns the store's root directory.
func (s *Store) Dir() string { return s.cfg.Dir }

// Checkpoint returns the in-memory checkpoint state.
func (s *Store) Checkpoint() checkpoint.State { return s.ckpt.State() }
