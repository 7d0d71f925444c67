package consumequeue

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/store/fdcache"
	"github.com/rocketd/rocketd/internal/vfs"
)

// ErrFileMissing reports a queue offset inside [min, max) whose file is gone
// (deleted by retention while the reader looked): GetMessage's
// OFFSET_FOUND_NULL.
var ErrFileMissing = errors.New("consumequeue: no file for offset")

// ErrBadFile reports a queue file with the wrong size or name.
var ErrBadFile = errors.New("consumequeue: bad file")

// pageSize is the unit of the flush thresholds ("least pages").
const pageSize = 4096

// readPool holds read buffers for Units.
var readPool = sync.Pool{New: func() any { b := make([]byte, 0, 32*UnitSize); return &b }}

// DefaultMaxOpenFiles caps the open queue files of a Set that is given no
// Files cache (tests and tools; the store passes its own, sized by its
// configuration).
const DefaultMaxOpenFiles = 256

// Options configure a queue.
type Options struct {
	FS           vfs.FS
	UnitsPerFile int          // 0 = DefaultUnitsPerFile
	Logger       *slog.Logger // nil = discard
	// Files opens the queue files on demand and bounds how many are open
	// at once; the store shares one with its other file users. nil: the
	// Set makes its own of DefaultMaxOpenFiles and closes it on Close.
	Files *fdcache.Cache
}

func (o *Options) ensureDefaults() {
	if o.UnitsPerFile <= 0 {
		o.UnitsPerFile = DefaultUnitsPerFile
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// file is one queue file. Its descriptor belongs to the Files cache: opened
// on demand, closed when the cache needs room, never while in use. A file
// dropped from the queue is forgotten by the cache, so a reader that still
// has it gets ErrFileMissing instead of reading a deleted file.
type file struct {
	start   int64 // logical byte offset of the first unit
	h       *fdcache.File
	wrote   atomic.Int64 // bytes of committed units in this file
	flushed atomic.Int64 // bytes known durable
}

func (f *file) path() string { return f.h.Path() }

// Queue is the ConsumeQueue of one (topic, queueId).
//
// Concurrency: Append, Commit, Recover and Truncate are the writer's and
// must not run concurrently with each other; Read, MinOffset, MaxOffset,
// Flush, DeleteBelow and CorrectMinOffset may run concurrently with
// everything.
type Queue struct {
	topic    string
	queueID  int32
	dir      string
	fs       vfs.FS
	files    *fdcache.Cache
	fileSize int64
	log      *slog.Logger

	mu struct {
		sync.RWMutex
		files []*file // ascending start, contiguous
	}
	written   atomic.Int64 // logical byte end of committed (visible) units
	minLogic  atomic.Int64 // logical byte offset of the first readable unit
	maxPhysic atomic.Int64 // end of the last appended record (pending included)

	pending   []byte // writer-owned: units staged by Append, written by Commit
	destroyed atomic.Bool

	// dirGen counts the files created (each dirties the queue's
	// directories: the new entry, and the directories MkdirAll made);
	// dirSynced is the count the last sync of the directories covered.
	dirGen    atomic.Int64
	dirSynced atomic.Int64
}

func fileName(start int64) string { return fmt.Sprintf("%020d", start) }

// openQueue loads the files under dir (possibly none) without keeping them
// open. Each loaded file claims to be full until Recover finds its end.
func openQueue(dir, topic string, queueID int32, o Options) (*Queue, error) {
	q := &Queue{topic: topic, queueID: queueID, dir: dir, fs: o.FS, files: o.Files,
		fileSize: int64(o.UnitsPerFile) * UnitSize,
		log:      o.Logger.With("topic", topic, "queueId", queueID)}
	names, err := o.FS.List(dir)
	if err != nil && !isNotExist(err) {
		return nil, fmt.Errorf("consumequeue: list %s: %w", dir, err)
	}
	for _, name := range names {
		if len(name) != 20 {
			continue // tmp files and strays
		}
		start, err := strconv.ParseInt(name, 10, 64)
		if err != nil || start < 0 {
			continue
		}
		if start%q.fileSize != 0 {
			q.closeFiles()
			return nil, fmt.Errorf("%w: %s/%s is not a multiple of the file size %d", ErrBadFile, dir, name, q.fileSize)
		}
		path := filepath.Join(dir, name)
		st, err := o.FS.Stat(path)
		if err != nil {
			q.closeFiles()
			return nil, fmt.Errorf("consumequeue: stat %s: %w", path, err)
		}
		qf := &file{start: start, h: q.files.File(path)}
		if size := st.Size(); size < q.fileSize {
			// A file created just before a crash may not have reached its
			// full size; growing it reads back zeros (= no units).
			if err := qf.h.Truncate(q.fileSize); err != nil {
				qf.h.Forget()
				q.closeFiles()
				return nil, fmt.Errorf("consumequeue: extend %s: %w", path, err)
			}
		} else if size > q.fileSize {
			q.closeFiles()
			return nil, fmt.Errorf("%w: %s has %d bytes, want %d", ErrBadFile, path, size, q.fileSize)
		}
		qf.wrote.Store(q.fileSize)
		qf.flushed.Store(q.fileSize)
		if n := len(q.mu.files); n > 0 && q.mu.files[n-1].start+q.fileSize != start {
			q.log.Warn("consumequeue: gap between files", "before", q.mu.files[n-1].path(), "after", path)
		}
		q.mu.files = append(q.mu.files, qf)
	}
	if len(q.mu.files) > 0 {
		last := q.mu.files[len(q.mu.files)-1]
		q.written.Store(last.start + q.fileSize)
		q.minLogic.Store(q.mu.files[0].start)
	}
	return q, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// Topic returns the queue's topic.
func (q *Queue) Topic() string { return q.topic }

// QueueID returns the queue's id.
func (q *Queue) QueueID() int32 { return q.queueID }

// MinOffset is the first readable queue offset.
func (q *Queue) MinOffset() int64 { return q.minLogic.Load() / UnitSize }

// MaxOffset is the queue offset the next unit gets (committed units only).
func (q *Queue) MaxOffset() int64 { return q.written.Load() / UnitSize }

// MaxPhysicOffset is the CommitLog end of the last appended record (0 if none).
func (q *Queue) MaxPhysicOffset() int64 { return q.maxPhysic.Load() }

// RollNextFile returns the first queue offset of the file after the one
// holding offset.
func (q *Queue) RollNextFile(offset int64) int64 {
	per := q.fileSize / UnitSize
	return offset + per - offset%per
}

// Append stages the unit for queue offset queueOffset. It reports false when
// the unit is a duplicate (its record is already covered, or the offset is
// already written), which recovery's re-dispatch relies on. A gap (an offset
// beyond the end) is filled with filler units and logged. Units become visible
// on Commit.
func (q *Queue) Append(queueOffset int64, u Unit) bool {
	if u.End() <= q.maxPhysic.Load() {
		return false
	}
	expect := queueOffset * UnitSize
	end := q.written.Load() + int64(len(q.pending))
	if end == 0 && q.fileCount() == 0 && expect != 0 {
		// First unit of a queue that starts mid-way: its file begins at the
		// file boundary below expect and is padded up to it (spec §6.3).
		start := expect - expect%q.fileSize
		q.written.Store(start)
		q.minLogic.Store(expect)
		end = start
	}
	switch {
	case expect < end:
		q.log.Debug("consumequeue: unit below the queue end ignored", "queueOffset", queueOffset, "maxOffset", end/UnitSize)
		return false
	case expect > end:
		if end != q.minLogic.Load() || q.fileCount() > 0 || len(q.pending) > 0 {
			q.log.Warn("consumequeue: gap in queue filled", "from", end/UnitSize, "to", queueOffset)
		}
		for ; end < expect; end += UnitSize {
			q.pending = filler.AppendTo(q.pending)
		}
	}
	q.pending = u.AppendTo(q.pending)
	q.maxPhysic.Store(u.End())
	return true
}

// HasPending reports whether Append staged units that Commit has not written.
func (q *Queue) HasPending() bool { return len(q.pending) > 0 }

func (q *Queue) fileCount() int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return len(q.mu.files)
}

func (q *Queue) lastFile() *file {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if len(q.mu.files) == 0 {
		return nil
	}
	return q.mu.files[len(q.mu.files)-1]
}

// Commit writes the staged units (one WriteAt per file touched) and makes
// them visible. On error the units stay staged and Commit may be retried.
func (q *Queue) Commit() error {
	if q.destroyed.Load() {
		// The topic was deleted while the writer held the queue: drop the
		// units rather than resurrect its directory.
		q.pending = q.pending[:0]
		return nil
	}
	done := 0
	defer func() {
		n := copy(q.pending, q.pending[done:])
		q.pending = q.pending[:n]
	}()
	for done < len(q.pending) {
		pos := q.written.Load()
		f := q.lastFile()
		if f == nil || pos >= f.start+q.fileSize {
			// Make the full file durable before its successor exists:
			// recovery trusts every file before the last three without
			// scanning, so no later file may outlive an earlier one's data.
			if f != nil && f.flushed.Load() < f.wrote.Load() {
				w := f.wrote.Load()
				if err := f.h.Sync(); err != nil {
					return fmt.Errorf("consumequeue: sync full file %s: %w", f.path(), err)
				}
				f.flushed.Store(max(f.flushed.Load(), w))
			}
			if f != nil {
				// Its name too (once per file rolled: cheap).
				if err := q.syncDirs(); err != nil {
					return err
				}
			}
			nf, err := q.createFile(pos - pos%q.fileSize)
			if err != nil {
				return err
			}
			f = nf
		}
		rel := pos - f.start
		n := min(int64(len(q.pending)-done), q.fileSize-rel)
		if _, err := f.h.WriteAt(q.pending[done:done+int(n)], rel); err != nil {
			return fmt.Errorf("consumequeue: write %s at %d: %w", f.path(), rel, err)
		}
		f.wrote.Store(rel + n)
		q.written.Store(pos + n)
		done += int(n)
	}
	return nil
}

// createFile creates the zero-filled file starting at start and appends it.
func (q *Queue) createFile(start int64) (*file, error) {
	// The file's entry and the topic and queue directories become durable
	// with the next Flush (Set.Flush syncs each directory once for every
	// queue created since): syncing three directories per new queue here
	// held dispatch to a few hundred new queues a second.
	if err := q.fs.MkdirAll(q.dir, 0o755); err != nil {
		return nil, fmt.Errorf("consumequeue: mkdir %s: %w", q.dir, err)
	}
	path := filepath.Join(q.dir, fileName(start))
	h, err := q.files.Create(path)
	// Counted once the entry exists (even when the create failed half
	// way): a Flush that read the count before must not mark the entry
	// durable by syncing the directory before it was there.
	q.dirGen.Add(1)
	if err != nil {
		return nil, fmt.Errorf("consumequeue: create %s: %w", path, err)
	}
	defer h.Release()
	if err := h.Truncate(q.fileSize); err != nil {
		h.Forget()
		return nil, fmt.Errorf("consumequeue: size %s: %w", path, err)
	}
	qf := &file{start: start, h: h}
	q.mu.Lock()
	q.mu.files = append(q.mu.files, qf)
	q.mu.Unlock()
	q.log.Debug("consumequeue: new file", "path", path)
	return qf, nil
}

// fileFor returns the file holding logical byte pos (nil if none).
func (q *Queue) fileFor(pos int64) *file {
	q.mu.RLock()
	defer q.mu.RUnlock()
	files := q.mu.files
	if len(files) == 0 || pos < files[0].start {
		return nil
	}
	i := int((pos - files[0].start) / q.fileSize)
	if i >= len(files) || files[i].start > pos || pos >= files[i].start+q.fileSize {
		// not contiguous: search
		for _, f := range files {
			if f.start <= pos && pos < f.start+q.fileSize {
				return f
			}
		}
		return nil
	}
	return files[i]
}

// Read returns up to maxUnits committed units starting at queue offset
// offset, all from one file (fewer at a file's end). It returns an empty
// Units at or past MaxOffset and ErrFileMissing when the file is gone.
func (q *Queue) Read(offset int64, maxUnits int) (Units, error) {
	pos := offset * UnitSize
	end := q.written.Load()
	if offset < 0 || pos >= end || maxUnits <= 0 {
		return Units{First: offset}, nil
	}
	f := q.fileFor(pos)
	if f == nil {
		return Units{First: offset}, fmt.Errorf("%w: %s/%d offset %d", ErrFileMissing, q.topic, q.queueID, offset)
	}
	n := min(end, f.start+q.fileSize) - pos
	n = min(n, int64(maxUnits)*UnitSize)
	bp := readPool.Get().(*[]byte)
	if int64(cap(*bp)) < n {
		*bp = make([]byte, n)
	}
	b := (*bp)[:n]
	if _, err := f.h.ReadAt(b, pos-f.start); err != nil && !errors.Is(err, io.EOF) {
		readPool.Put(bp)
		if errors.Is(err, fdcache.ErrForgotten) {
			// Deleted by retention since fileFor found it.
			return Units{First: offset}, fmt.Errorf("%w: %s/%d offset %d", ErrFileMissing, q.topic, q.queueID, offset)
		}
		return Units{First: offset}, fmt.Errorf("consumequeue: read %s at %d: %w", f.path(), pos-f.start, err)
	}
	return Units{First: offset, buf: bp, b: b}, nil
}

// UnitAt reads the single unit at queue offset offset.
func (q *Queue) UnitAt(offset int64) (Unit, error) {
	us, err := q.Read(offset, 1)
	if err != nil {
		return Unit{}, err
	}
	defer us.Release()
	if us.Len() == 0 {
		return Unit{}, fmt.Errorf("consumequeue: %s/%d offset %d beyond max %d", q.topic, q.queueID, offset, q.MaxOffset())
	}
	return us.At(0), nil
}

// Flush syncs files whose unsynced committed bytes reach leastPages pages
// (any amount when leastPages <= 0). The list lock is not held across Sync.
func (q *Queue) Flush(leastPages int) error {
	if err := q.syncDirs(); err != nil {
		return err
	}
	q.mu.RLock()
	var dirty []*file
	for _, f := range q.mu.files {
		if f.flushed.Load() < f.wrote.Load() {
			dirty = append(dirty, f)
		}
	}
	q.mu.RUnlock()
	var firstErr error
	for _, f := range dirty {
		w := f.wrote.Load()
		if firstErr == nil && (leastPages <= 0 || w-f.flushed.Load() >= int64(leastPages)*pageSize) {
			if err := f.h.Sync(); errors.Is(err, fdcache.ErrForgotten) {
				continue // deleted meanwhile
			} else if err != nil {
				firstErr = fmt.Errorf("consumequeue: sync %s: %w", f.path(), err)
			} else {
				f.flushed.Store(max(f.flushed.Load(), w))
			}
		}
	}
	return firstErr
}

// dirs are the directories a new file of the queue dirties, parents first:
// the Set's directory, the topic's, the queue's.
func (q *Queue) dirs() [3]string {
	topic := filepath.Dir(q.dir)
	return [3]string{filepath.Dir(topic), topic, q.dir}
}

// syncDirs syncs the queue's directories if files were created since they
// were last synced.
func (q *Queue) syncDirs() error {
	gen := q.dirGen.Load()
	if gen == q.dirSynced.Load() {
		return nil
	}
	for _, d := range q.dirs() {
		if err := q.fs.SyncDir(d); err != nil && !isNotExist(err) {
			return fmt.Errorf("consumequeue: sync dir %s: %w", d, err)
		}
	}
	q.markDirsSynced(gen)
	return nil
}

// markDirsSynced records that the directories are durable for the first
// gen files created.
func (q *Queue) markDirsSynced(gen int64) {
	for {
		s := q.dirSynced.Load()
		if s >= gen || q.dirSynced.CompareAndSwap(s, gen) {
			return
		}
	}
}

// FirstUnsynced returns the CommitLog offset the first committed unit not
// yet synced points at (ok false when every committed unit is synced):
// every unit of the queue pointing below it is durable, since units are in
// CommitLog order. A unit the queue read as a filler or damaged counts as
// offset 0 (nothing known durable).
func (q *Queue) FirstUnsynced() (phys int64, ok bool, err error) {
	// Files whose directory entries are not synced yet are the newest
	// unsynced ones: all of their units are at risk.
	unsyncedNames := q.dirGen.Load() - q.dirSynced.Load()
	q.mu.RLock()
	var f *file
	pos := int64(0)
	for i, x := range q.mu.files {
		if int64(len(q.mu.files)-i) <= unsyncedNames && x.wrote.Load() > 0 {
			f = x
			break
		}
		if x.flushed.Load() < x.wrote.Load() {
			// flushed only grows, and only past whole synced units: the
			// unit at it (rounded down) was unsynced at least when read.
			f, pos = x, x.flushed.Load()/UnitSize*UnitSize
			break
		}
	}
	q.mu.RUnlock()
	if f == nil {
		return 0, false, nil
	}
	var b [UnitSize]byte
	if _, err := f.h.ReadAt(b[:], pos); errors.Is(err, fdcache.ErrForgotten) {
		return 0, false, nil // deleted meanwhile
	} else if err != nil {
		return 0, false, fmt.Errorf("consumequeue: read %s at %d: %w", f.path(), pos, err)
	}
	u, err := ParseUnit(b[:])
	if err != nil || !u.Valid() || u.IsFiller() {
		return 0, true, nil
	}
	return u.Offset, true, nil
}

// Dirty reports whether committed units, or the entries of new files, are
// not yet flushed.
func (q *Queue) Dirty() bool {
	if q.dirGen.Load() != q.dirSynced.Load() {
		return true
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	for _, f := range q.mu.files {
		if f.flushed.Load() < f.wrote.Load() {
			return true
		}
	}
	return false
}

// closeFiles drops the queue's files without syncing them: their
// descriptors close now, or when their readers finish.
func (q *Queue) closeFiles() {
	q.mu.Lock()
	files := q.mu.files
	q.mu.files = nil
	q.mu.Unlock()
	for _, f := range files {
		f.h.Forget()
	}
}
