package segment

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// Config describes a Queue.
type Config struct {
	// Dir holds the segment files; created if missing.
	Dir string
	// FS is the file system; required.
	FS vfs.FS
	// Size is the fixed size of every file; required (> 0).
	Size int64
	// ZeroFill makes the allocator write zeros over a new file and sync it
	// before handing it out (SYNC_FLUSH: later fdatasyncs are cheaper, see
	// write-path.md). Without it a new file is only sized with Truncate.
	ZeroFill bool
	// Logger receives roll, delete and close-failure events. Default: discard.
	Logger *slog.Logger
	// Now is the clock of the allocator's retry back-off. Default time.Now.
	Now func() time.Time
}

func (c *Config) validate() error {
	if c.FS == nil {
		return errors.New("segment: Config.FS is nil")
	}
	if c.Size <= 0 {
		return fmt.Errorf("segment: Config.Size %d: must be > 0", c.Size)
	}
	if c.Dir == "" {
		return errors.New("segment: Config.Dir is empty")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Queue is the ordered list of a log's segment files.
//
// The list is guarded by an RWMutex; positions live in the files as atomics.
// Lookups return a *File without a reference: a caller that uses the file
// after the lookup while retention or truncation may run concurrently must
// use FindHeld (or Hold the result and check it) and Release it afterwards.
type Queue struct {
	cfg   Config
	alloc *allocator
	stats rollStats

	mu struct {
		sync.RWMutex
		files []*File
	}
}

// Open loads the segment files of cfg.Dir. Every file claims to be full
// (wrote = committed = flushed = size) until recovery truncates the tail.
func Open(cfg Config) (*Queue, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	q := &Queue{cfg: cfg}
	q.alloc = newAllocator(q)
	if err := vfs.MkdirAllSync(cfg.FS, cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("segment: create %s: %w", cfg.Dir, err)
	}
	names, err := cfg.FS.List(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("segment: list %s: %w", cfg.Dir, err)
	}
	var files []*File
	closeAll := func() {
		for _, f := range files {
			f.Release()
		}
	}
	for _, name := range names {
		path := filepath.Join(cfg.Dir, name)
		if strings.HasSuffix(name, tmpSuffix) {
			// An unfinished preallocation: never part of the log.
			if err := cfg.FS.Remove(path); err != nil {
				closeAll()
				return nil, fmt.Errorf("segment: remove leftover %s: %w", path, err)
			}
			cfg.Logger.Info("segment: removed unfinished preallocation", "path", path)
			continue
		}
		start, err := ParseName(name)
		if err != nil {
			cfg.Logger.Warn("segment: ignoring file with a foreign name", "path", path)
			continue
		}
		if len(files) > 0 {
			if prev := files[len(files)-1]; prev.End() != start {
				closeAll()
				return nil, fmt.Errorf("segment: %s: starts at %d but the previous file ends at %d", path, start, prev.End())
			}
		}
		vf, err := cfg.FS.OpenReadWrite(path)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("segment: open %s: %w", path, err)
		}
		size, err := vf.Size()
		if err == nil && size < cfg.Size && name == lastSegmentName(names) {
			// A last file cut short (a crash while the file system
			// extended it, or a half-truncated copy): extend it with zeros;
			// recovery then stops at the end of its valid records.
			cfg.Logger.Warn("segment: extending a short last file", "path", path, "size", size, "want", cfg.Size)
			if err = vf.Truncate(cfg.Size); err == nil {
				err = vf.Sync()
			}
			size = cfg.Size
		}
		if err == nil && size != cfg.Size {
			err = fmt.Errorf("size %d, want %d", size, cfg.Size)
		}
		if err != nil {
			_ = vf.Close()
			closeAll()
			return nil, fmt.Errorf("segment: load %s: %w", path, err)
		}
		f := q.wrap(newFile(cfg.FS, path, vf, start, cfg.Size))
		f.setPositions(cfg.Size)
		files = append(files, f)
	}
	q.mu.files = files
	return q, nil
}

func (q *Queue) wrap(f *File) *File {
	f.onLastRelease = q.lastRelease
	return f
}

func (q *Queue) lastRelease(f *File, err error) {
	if err != nil {
		q.cfg.Logger.Error("segment: release", "path", f.path, "err", err)
	}
}

// Start starts the background allocator and has it prepare the file after
// the last one (a log reopened with its last file partly written rolls
// into a ready file). Without it, Roll creates files synchronously.
func (q *Queue) Start() {
	q.alloc.start()
	if last := q.Last(); last != nil {
		q.alloc.prefetch(last.End())
	}
}

// Prepare has the file the next Roll(start) takes prepared now and waits
// until it is ready (it stays with the allocator until that Roll) or its
// preparation failed (a *BackoffError). The allocator must be started.
func (q *Queue) Prepare(start int64) error {
	_, err := q.alloc.await(q.nextStart(start), false)
	if errors.Is(err, errNotRunning) {
		return fmt.Errorf("segment: prepare %s: %w", Name(q.nextStart(start)), err)
	}
	return err
}

// PrepareErr is the error of the latest failed preparation while the
// allocator has not prepared a file since: why rolls fail now.
func (q *Queue) PrepareErr() error {
	q.alloc.mu.Lock()
	defer q.alloc.mu.Unlock()
	return q.alloc.failed
}

// nextStart is where the next Roll(start) puts its file: the end of the
// last file, or start rounded down to a file start when the queue is empty.
func (q *Queue) nextStart(start int64) int64 {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if n := len(q.mu.files); n > 0 {
		return q.mu.files[n-1].End()
	}
	return start - start%q.cfg.Size
}

// Close stops the allocator (discarding a prepared, unused file) and releases
// the Queue's reference on every file; files held by readers close when they
// are released.
func (q *Queue) Close() error {
	q.alloc.close()
	q.mu.Lock()
	files := q.mu.files
	q.mu.files = nil
	q.mu.Unlock()
	for _, f := range files {
		f.Release()
	}
	return nil
}

// SegmentSize is the fixed size of every file.
func (q *Queue) SegmentSize() int64 { return q.cfg.Size }

// Dir is the directory of the files.
func (q *Queue) Dir() string { return q.cfg.Dir }

// Len is the number of files.
func (q *Queue) Len() int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return len(q.mu.files)
}

// Files returns a snapshot of the list (without references).
func (q *Queue) Files() []*File {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return append([]*File(nil), q.mu.files...)
}

// First returns the first file, or nil.
func (q *Queue) First() *File {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if len(q.mu.files) == 0 {
		return nil
	}
	return q.mu.files[0]
}

// Last returns the last file, or nil.
func (q *Queue) Last() *File {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if len(q.mu.files) == 0 {
		return nil
	}
	return q.mu.files[len(q.mu.files)-1]
}

// Find returns the file containing the global offset, or nil. Files are
// contiguous and equally sized, so this is arithmetic, not a search.
func (q *Queue) Find(offset int64) *File {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.findLocked(offset)
}

// REQUIRES: q.mu held (read or write).
func (q *Queue) findLocked(offset int64) *File {
	files := q.mu.files
	if len(files) == 0 || offset < files[0].start {
		return nil
	}
	i := (offset - files[0].start) / q.cfg.Size
	if i >= int64(len(files)) {
		return nil
	}
	return files[i]
}

// FindHeld is Find plus Hold: the file cannot be closed until the caller
// calls Release. It returns nil when no file contains offset.
func (q *Queue) FindHeld(offset int64) *File {
	q.mu.RLock()
	defer q.mu.RUnlock()
	f := q.findLocked(offset)
	if f == nil || !f.Hold() {
		return nil
	}
	return f
}

// Roll appends the next file: at the end of the last file, or at start
// (rounded down to a multiple of the size) when the queue is empty. It takes
// the file the allocator prepared when it is ready (waiting for it when it is
// being prepared) and asks for the one after in the background. While a
// failed preparation waits for its retry, Roll fails at once with a
// *BackoffError.
func (q *Queue) Roll(start int64) (*File, error) {
	start = q.nextStart(start)
	began := time.Now()
	f, err := q.alloc.get(start)
	q.stats.note(time.Since(began))
	if err != nil {
		return nil, err
	}
	f.setPositions(0)
	q.mu.Lock()
	if n := len(q.mu.files); n > 0 && q.mu.files[n-1].End() != start {
		q.mu.Unlock()
		f.removed.Store(true)
		f.Release()
		return nil, fmt.Errorf("segment: roll to %d: the queue changed concurrently", start)
	}
	q.mu.files = append(q.mu.files, f)
	q.mu.Unlock()
	q.alloc.prefetch(start + q.cfg.Size)
	q.cfg.Logger.Debug("segment: rolled", "path", f.path)
	return f, nil
}

// Truncate cuts the queue at the global offset end: files starting after end
// are removed; the file containing end gets all positions set to end (a file
// starting exactly at end is kept, empty); earlier files are set full.
// Bytes after end inside the kept file are left as they are: the owner
// overwrites them, and readers never read past the positions.
//
// The removal is durable and crash-ordered: the allocator's prepared file
// (beyond the new end) goes first, then the files from the last one down,
// each unlinked at once and its directory synced, so a crash leaves the
// files a contiguous prefix of the queue, never a gap that Open refuses.
func (q *Queue) Truncate(end int64) error {
	if err := q.alloc.dropPrepared(); err != nil {
		return err
	}
	q.mu.Lock()
	var keep, drop []*File
	for _, f := range q.mu.files {
		switch {
		case f.End() <= end:
			f.setPositions(f.size)
			keep = append(keep, f)
		case f.start <= end:
			f.setPositions(end - f.start)
			keep = append(keep, f)
		default:
			drop = append(drop, f)
		}
	}
	q.mu.files = keep
	q.mu.Unlock()
	var err error
	for i := len(drop) - 1; i >= 0; i-- {
		f := drop[i]
		if err == nil {
			if err = f.unlinkNow(); err == nil {
				err = q.cfg.FS.SyncDir(q.cfg.Dir)
			}
		}
		q.removeFile(f, "truncate") // a file whose unlink failed goes at its last Release
	}
	if err != nil {
		return fmt.Errorf("segment: truncate at %d: %w", end, err)
	}
	if len(drop) > 0 {
		q.alloc.retrySoon()
	}
	return nil
}

// removeFiles marks files removed, makes their directory entry removal
// durable on release, and drops the Queue's reference.
func (q *Queue) removeFiles(files []*File, why string) error {
	for _, f := range files {
		q.removeFile(f, why)
	}
	return q.syncRemoved(len(files))
}

// removeFile marks f removed, logs why and drops the Queue's reference: f is
// closed, and deleted from disk, when its last reader releases it.
func (q *Queue) removeFile(f *File, why string) {
	f.removed.Store(true)
	q.cfg.Logger.Info("segment: removing file", "path", f.path, "why", why)
	f.Release()
}

// syncRemoved makes the removal of n files from the directory durable.
func (q *Queue) syncRemoved(n int) error {
	if n == 0 {
		return nil
	}
	// Space may be back for a preparation that failed on a full disk.
	q.alloc.retrySoon()
	if err := q.cfg.FS.SyncDir(q.cfg.Dir); err != nil {
		return fmt.Errorf("segment: sync dir %s: %w", q.cfg.Dir, err)
	}
	return nil
}

// Why a head file is removed by DeleteExpired, as its removal log says.
const (
	whyExpired = "expired"
	whyForced  = "not expired; removed to free disk space"
)

// Removed describes what one DeleteExpired call removed.
type Removed struct {
	// Files is the number of files removed.
	Files int
	// Unexpired counts the removed files that were not older than the
	// cutoff (or whose age could not be read): only force removed them.
	// UnexpiredFrom and UnexpiredTo span their offsets, from the start of
	// the first to the end of the last; both are 0 when Unexpired is.
	Unexpired                  int
	UnexpiredFrom, UnexpiredTo int64
}

// DeleteExpired removes up to max files from the head whose modification
// time is before olderThan, never the last file (the one being written).
// Without force it stops at the first file it keeps, so the queue stays
// contiguous; with force it removes head files whatever their age, and
// each one not yet expired is logged and counted as such (Removed). Files
// still held by readers are closed and deleted when released.
func (q *Queue) DeleteExpired(olderThan time.Time, force bool, max int) (Removed, error) {
	var (
		drop    []*File
		expired []bool
		statErr error
	)
	q.mu.Lock()
	files := q.mu.files
	for i := 0; i < len(files)-1 && len(drop) < max; i++ {
		fi, err := q.cfg.FS.Stat(files[i].path)
		if err != nil {
			statErr = errors.Join(statErr, fmt.Errorf("segment: stat %s: %w", files[i].path, err))
		}
		old := err == nil && fi.ModTime().Before(olderThan)
		if !old && !force {
			break
		}
		drop = append(drop, files[i])
		expired = append(expired, old)
	}
	q.mu.files = files[len(drop):]
	q.mu.Unlock()
	r := Removed{Files: len(drop)}
	for i, f := range drop {
		if expired[i] {
			q.removeFile(f, whyExpired)
			continue
		}
		if r.Unexpired == 0 {
			r.UnexpiredFrom = f.Start()
		}
		r.Unexpired++
		r.UnexpiredTo = f.End()
		q.removeFile(f, whyForced)
	}
	if err := q.syncRemoved(len(drop)); err != nil {
		return r, errors.Join(err, statErr)
	}
	return r, statErr
}

// DeleteBelow removes head files whose whole range lies below offset (never
// the last file). It returns the number of files removed.
func (q *Queue) DeleteBelow(offset int64) (int, error) {
	var drop []*File
	q.mu.Lock()
	files := q.mu.files
	for i := 0; i < len(files)-1 && files[i].End() <= offset; i++ {
		drop = append(drop, files[i])
	}
	q.mu.files = files[len(drop):]
	q.mu.Unlock()
	return len(drop), q.removeFiles(drop, "below minimum offset")
}

// lastSegmentName returns the greatest segment name in a sorted listing.
func lastSegmentName(names []string) string {
	for i := len(names) - 1; i >= 0; i-- {
		if _, err := ParseName(names[i]); err == nil {
			return names[i]
		}
	}
	return ""
}
