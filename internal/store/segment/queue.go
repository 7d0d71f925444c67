package segment

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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

	// Handles, when set, makes the handles the files are read and written
	// through (a descriptor cache for a store of many small queues, say);
	// Open then only stats the files instead of opening them. nil: each
	// file is opened with FS and stays open.
	Handles Handles
	// CreateInPlace makes Roll create a new file directly under its name
	// (created and sized, nothing synced) instead of preparing
	// "<name>.tmp" and renaming it; Open leaves a missing Dir alone (an
	// empty queue) and Roll makes it (MkdirAll, not synced). The owner
	// makes new directory entries durable: OnCreate, when set, is called
	// once for each file creation Roll starts, before its result is known
	// (an entry may exist even when the creation failed).
	CreateInPlace bool
	OnCreate      func()
	// AllowGaps makes Open load files that do not follow each other (one
	// lost in the middle) instead of refusing the directory: the gap is
	// logged and Find finds no file in it. Every file must then start at a
	// multiple of Size.
	AllowGaps bool
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
	cfg Config
	// alloc is made by Start (written under mu): a queue that never starts
	// it creates its files in Roll and carries no allocator.
	alloc atomic.Pointer[allocator]
	stats rollStats

	mu struct {
		sync.RWMutex
		files  []*File
		closed bool // Close ran: Start makes no allocator
	}
}

// Open loads the segment files of cfg.Dir. Every file claims to be full
// (wrote = committed = flushed = size) until recovery truncates the tail.
func Open(cfg Config) (*Queue, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	q := &Queue{cfg: cfg}
	if !cfg.CreateInPlace {
		if err := vfs.MkdirAllSync(cfg.FS, cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("segment: create %s: %w", cfg.Dir, err)
		}
	}
	names, err := cfg.FS.List(cfg.Dir)
	if err != nil {
		if cfg.CreateInPlace && errors.Is(err, fs.ErrNotExist) {
			return q, nil
		}
		return nil, fmt.Errorf("segment: list %s: %w", cfg.Dir, err)
	}
	var files []*File
	closeAll := func() {
		for _, f := range files {
			f.Release()
		}
	}
	last := lastSegmentName(names)
	for _, name := range names {
		path := filepath.Join(cfg.Dir, name)
		if strings.HasSuffix(name, tmpSuffix) {
			if _, err := ParseName(strings.TrimSuffix(name, tmpSuffix)); err == nil {
				// An unfinished preallocation: never part of the log.
				if err := cfg.FS.Remove(path); err != nil {
					closeAll()
					return nil, fmt.Errorf("segment: remove leftover %s: %w", path, err)
				}
				cfg.Logger.Info("segment: removed unfinished preallocation", "path", path)
				continue
			}
		}
		start, err := ParseName(name)
		if err != nil {
			cfg.Logger.Warn("segment: ignoring file with a foreign name", "path", path)
			continue
		}
		if err := q.checkPlace(files, path, start); err != nil {
			closeAll()
			return nil, err
		}
		f, err := q.load(path, start, name == last)
		if err != nil {
			closeAll()
			return nil, err
		}
		files = append(files, f)
	}
	q.mu.files = files
	return q, nil
}

// New returns an empty queue over cfg.Dir without looking at the directory
// (a queue known to have no files yet); cfg.CreateInPlace must be set, so
// that the directory is made by the first Roll.
func New(cfg Config) (*Queue, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if !cfg.CreateInPlace {
		return nil, errors.New("segment: New without Config.CreateInPlace")
	}
	return &Queue{cfg: cfg}, nil
}

// checkPlace checks that a file starting at start may follow files: right
// after the last one, or with Config.AllowGaps after a gap, aligned.
func (q *Queue) checkPlace(files []*File, path string, start int64) error {
	if q.cfg.AllowGaps && start%q.cfg.Size != 0 {
		return fmt.Errorf("segment: %s: start %d is not a multiple of the file size %d", path, start, q.cfg.Size)
	}
	if len(files) == 0 {
		return nil
	}
	prev := files[len(files)-1]
	switch {
	case prev.End() == start:
		return nil
	case q.cfg.AllowGaps && prev.End() < start:
		q.cfg.Logger.Warn("segment: gap between files", "before", prev.path, "after", path)
		return nil
	}
	return fmt.Errorf("segment: %s: starts at %d but the previous file ends at %d", path, start, prev.End())
}

// load opens (or, with Config.Handles, stats) the file at path. A last
// file cut short (a crash while the file system extended it, or a
// half-truncated copy) is extended with zeros; recovery then stops at the
// end of its valid records. Any other size is refused.
func (q *Queue) load(path string, start int64, last bool) (*File, error) {
	var (
		h    Handle
		size int64
	)
	if q.cfg.Handles != nil {
		st, err := q.cfg.FS.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("segment: stat %s: %w", path, err)
		}
		h, size = q.cfg.Handles.Open(path), st.Size()
	} else {
		vf, err := q.cfg.FS.OpenReadWrite(path)
		if err != nil {
			return nil, fmt.Errorf("segment: open %s: %w", path, err)
		}
		if size, err = vf.Size(); err != nil {
			_ = vf.Close()
			return nil, fmt.Errorf("segment: load %s: %w", path, err)
		}
		h = vf
	}
	var err error
	if size < q.cfg.Size && last {
		q.cfg.Logger.Warn("segment: extending a short last file", "path", path, "size", size, "want", q.cfg.Size)
		if err = h.Truncate(q.cfg.Size); err == nil {
			err = h.Sync()
		}
		size = q.cfg.Size
	}
	if err == nil && size != q.cfg.Size {
		err = fmt.Errorf("size %d, want %d", size, q.cfg.Size)
	}
	if err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("segment: load %s: %w", path, err)
	}
	f := q.wrap(newFile(q.cfg.FS, path, h, start, q.cfg.Size))
	f.setPositions(q.cfg.Size)
	return f, nil
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
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		return // a closed queue stays closed
	}
	a := q.alloc.Load()
	if a == nil {
		a = newAllocator(q)
		q.alloc.Store(a)
	}
	q.mu.Unlock()
	a.start()
	if last := q.Last(); last != nil {
		a.prefetch(last.End())
	}
}

// Prepare has the file the next Roll(start) takes prepared now and waits
// until it is ready (it stays with the allocator until that Roll) or its
// preparation failed (a *BackoffError). The allocator must be started.
func (q *Queue) Prepare(start int64) error {
	err := errNotRunning
	if a := q.alloc.Load(); a != nil {
		_, err = a.await(q.nextStart(start), false)
	}
	if errors.Is(err, errNotRunning) {
		return fmt.Errorf("segment: prepare %s: %w", Name(q.nextStart(start)), err)
	}
	return err
}

// PrepareErr is the error of the latest failed preparation while the
// allocator has not prepared a file since: why rolls fail now.
func (q *Queue) PrepareErr() error {
	a := q.alloc.Load()
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
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
	q.mu.Lock()
	q.mu.closed = true
	q.mu.Unlock()
	if a := q.alloc.Load(); a != nil {
		a.close()
	}
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

// View calls fn with the list of files, oldest first, under the list's
// read lock: a look at every file without copying the list. fn must not
// keep or change the slice, nor call the methods of q that change the
// list (Roll, Truncate, Delete*, Close), and should be quick.
func (q *Queue) View(fn func(files []*File)) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	fn(q.mu.files)
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
	if i < int64(len(files)) && files[i].Contains(offset) {
		return files[i]
	}
	if !q.cfg.AllowGaps {
		return nil
	}
	// A gap before offset: the files are still in order.
	j := sort.Search(len(files), func(k int) bool { return files[k].End() > offset })
	if j < len(files) && files[j].Contains(offset) {
		return files[j]
	}
	return nil
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
	a := q.alloc.Load()
	var f *File
	var err error
	if a != nil {
		f, err = a.get(start)
	} else {
		f, err = q.create(start)
	}
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
	if a != nil {
		a.prefetch(start + q.cfg.Size)
	}
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
func (q *Queue) Truncate(end int64) error { return q.truncate(end, true) }

// TruncateDropEmpty is Truncate except that a file starting exactly at end is
// removed too: afterwards the last file ends at end (or holds it), or the
// queue is empty. For an owner that rolls to a new file only when it writes
// there (RocketMQ's ConsumeQueue deletes such a file).
func (q *Queue) TruncateDropEmpty(end int64) error { return q.truncate(end, false) }

func (q *Queue) truncate(end int64, keepEmpty bool) error {
	a := q.alloc.Load()
	if a != nil {
		if err := a.dropPrepared(); err != nil {
			return err
		}
	}
	q.mu.Lock()
	var keep, drop []*File
	for _, f := range q.mu.files {
		switch {
		case f.End() <= end:
			f.setPositions(f.size)
			keep = append(keep, f)
		case f.start < end || f.start == end && keepEmpty:
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
	if len(drop) > 0 && a != nil {
		a.retrySoon()
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
	if a := q.alloc.Load(); a != nil {
		a.retrySoon()
	}
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
