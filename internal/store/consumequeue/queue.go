package consumequeue

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/store/fdcache"
	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/vfs"
)

// ErrFileMissing reports a queue offset inside [min, max) whose file is gone
// (deleted by retention while the reader looked): GetMessage's
// OFFSET_FOUND_NULL.
var ErrFileMissing = errors.New("consumequeue: no file for offset")

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

// cached is a queue file's handle for its segment.File: a file of the
// Files cache, opened on demand and closed when the cache needs room, never
// while in use. Close forgets it, so that a reader still holding a removed
// file gets ErrFileMissing instead of reading a deleted file.
type cached struct{ *fdcache.File }

func (c cached) Close() error {
	c.Forget()
	return nil
}

// cacheHandles makes the segment files' handles through the Files cache.
type cacheHandles struct{ c *fdcache.Cache }

func (h cacheHandles) Open(path string) segment.Handle { return cached{h.c.File(path)} }

func (h cacheHandles) Create(path string) (segment.Handle, error) {
	f, err := h.c.Create(path)
	if err != nil {
		return nil, err
	}
	f.Release() // created held; the cache keeps it open while it has room
	return cached{f}, nil
}

// cacheFile is the Files cache's file under f.
func cacheFile(f *segment.File) *fdcache.File { return f.Handle().(cached).File }

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
	fileSize int64
	log      *slog.Logger

	// seg is the list of files (named, found, rolled, truncated and
	// deleted by package segment). A file's Wrote is the bytes of its
	// committed units, Flushed the bytes known durable.
	seg       *segment.Queue
	written   atomic.Int64 // logical byte end of committed (visible) units
	minLogic  atomic.Int64 // logical byte offset of the first readable unit
	maxPhysic atomic.Int64 // end of the last appended record (pending included)

	pending   []byte // writer-owned: units staged by Append, written by Commit
	destroyed atomic.Bool

	// marks remember where recent commits began, so that FirstUnsynced
	// needs no read: with 10,000 queues the flusher's pread of every
	// dirty queue's first unsynced unit cost 10,000 reads a second (and
	// an open each when the descriptor cap is below the queue count).
	marksMu sync.Mutex
	marks   []mark // ascending pos; at most maxMarks

	// dirGen counts the files created (each dirties the queue's
	// directories: the new entry, and the directories MkdirAll made);
	// dirSynced is the count the last sync of the directories covered.
	dirGen    atomic.Int64
	dirSynced atomic.Int64

	// gen counts the starts and ends of changes to committed units
	// (Truncate, Recover, Destroy); ra is the read-ahead block (see
	// readahead.go).
	gen atomic.Uint64
	ra  readAhead
}

func newQueue(dir, topic string, queueID int32, o Options) *Queue {
	return &Queue{topic: topic, queueID: queueID, dir: dir, fs: o.FS,
		fileSize: int64(o.UnitsPerFile) * UnitSize,
		log:      o.Logger.With("topic", topic, "queueId", queueID)}
}

// segConfig describes the queue's files to package segment: created in
// place on demand through the Files cache, their directory entries made
// durable by Flush (dirGen counts them), a missing middle file tolerated
// (read as ErrFileMissing).
func (q *Queue) segConfig(o Options) segment.Config {
	return segment.Config{Dir: q.dir, FS: o.FS, Size: q.fileSize, Logger: q.log,
		Handles: cacheHandles{o.Files}, CreateInPlace: true, AllowGaps: true,
		// Counted once the entry may exist (even when the create failed
		// half way): a Flush that read the count before must not mark
		// the entry durable by syncing the directory before it was there.
		OnCreate: func() { q.dirGen.Add(1) }}
}

// openQueue loads the files under dir (possibly none) without keeping them
// open. Each loaded file claims to be full until Recover finds its end.
func openQueue(dir, topic string, queueID int32, o Options) (*Queue, error) {
	q := newQueue(dir, topic, queueID, o)
	seg, err := segment.Open(q.segConfig(o))
	if err != nil {
		return nil, fmt.Errorf("consumequeue: open %s/%d: %w", topic, queueID, err)
	}
	q.seg = seg
	if first, last := seg.First(), seg.Last(); last != nil {
		q.written.Store(last.End())
		q.minLogic.Store(first.Start())
	}
	return q, nil
}

// createQueue returns a new queue without files (none exist yet).
func createQueue(dir, topic string, queueID int32, o Options) *Queue {
	q := newQueue(dir, topic, queueID, o)
	seg, err := segment.New(q.segConfig(o))
	if err != nil {
		panic(err) // a complete config: New cannot refuse it
	}
	q.seg = seg
	return q
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
	if end == 0 && q.seg.Len() == 0 && expect != 0 {
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
		if end != q.minLogic.Load() || q.seg.Len() > 0 || len(q.pending) > 0 {
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

// mark says that the unit at logical byte pos points at CommitLog offset
// phys; units are in CommitLog order, so every unit from pos on (up to the
// next mark) points at phys or later.
type mark struct{ pos, phys int64 }

// maxMarks bounds a queue's marks: when full, the newest is overwritten,
// which only lowers (never raises) the bound FirstUnsynced derives.
const maxMarks = 16

// addMark records the first non-filler unit of units, which are to be
// written at logical byte pos. Writer only.
func (q *Queue) addMark(pos int64, units []byte) {
	for off := 0; off+UnitSize <= len(units); off += UnitSize {
		u := unitAt(units, off)
		if u.IsFiller() {
			continue
		}
		m := mark{pos: pos + int64(off), phys: u.Offset}
		q.marksMu.Lock()
		if n := len(q.marks); n > 0 && q.marks[n-1].pos >= m.pos {
			// A retried commit: the newer mark is at least as exact.
			q.marks = q.marks[:n-1]
		}
		if len(q.marks) == maxMarks {
			q.marks[maxMarks-1] = m
		} else {
			q.marks = append(q.marks, m)
		}
		q.marksMu.Unlock()
		return
	}
}

// markBelow returns a lower bound of the CommitLog offsets the units from
// logical byte pos on point at (false when no mark covers pos), and drops
// the marks older than the one it used: pos only grows (the flushed end).
func (q *Queue) markBelow(pos int64) (int64, bool) {
	q.marksMu.Lock()
	defer q.marksMu.Unlock()
	i := sort.Search(len(q.marks), func(i int) bool { return q.marks[i].pos > pos }) - 1
	if i < 0 {
		return 0, false
	}
	phys := q.marks[i].phys
	if i > 0 {
		q.marks = q.marks[:copy(q.marks, q.marks[i:])]
	}
	return phys, true
}

// clearMarks forgets the marks (the positions they name are rewritten).
func (q *Queue) clearMarks() {
	q.marksMu.Lock()
	q.marks = nil
	q.marksMu.Unlock()
}

// HasPending reports whether Append staged units that Commit has not written.
func (q *Queue) HasPending() bool { return len(q.pending) > 0 }

// Commit writes the staged units (one WriteAt per file touched) and makes
// them visible. On error the units stay staged and Commit may be retried.
func (q *Queue) Commit() error {
	if q.destroyed.Load() {
		// The topic was deleted while the writer held the queue: drop the
		// units rather than resurrect its directory.
		q.pending = q.pending[:0]
		return nil
	}
	if len(q.pending) > 0 {
		q.addMark(q.written.Load(), q.pending)
	}
	done := 0
	defer func() {
		n := copy(q.pending, q.pending[done:])
		q.pending = q.pending[:n]
	}()
	for done < len(q.pending) {
		pos := q.written.Load()
		f := q.seg.Last()
		if f == nil || pos >= f.End() {
			// Make the full file durable before its successor exists:
			// recovery trusts every file before the last three without
			// scanning, so no later file may outlive an earlier one's data.
			if f != nil && f.Flushed() < f.Wrote() {
				w := f.Wrote()
				if err := f.Sync(); err != nil {
					return fmt.Errorf("consumequeue: sync full file: %w", err)
				}
				f.SetFlushed(max(f.Flushed(), w))
			}
			if f != nil {
				// Its name too (once per file rolled: cheap).
				if err := q.syncDirs(); err != nil {
					return err
				}
			}
			// The file's entry and the topic and queue directories become
			// durable with the next Flush (Set.Flush syncs each directory
			// once for every queue created since): syncing three
			// directories per new queue here held dispatch to a few
			// hundred new queues a second.
			nf, err := q.seg.Roll(pos)
			if err != nil {
				return fmt.Errorf("consumequeue: %s/%d: %w", q.topic, q.queueID, err)
			}
			f = nf
		}
		rel := pos - f.Start()
		n := min(int64(len(q.pending)-done), f.Size()-rel)
		if _, err := f.WriteAt(q.pending[done:done+int(n)], rel); err != nil {
			return fmt.Errorf("consumequeue: %w", err)
		}
		f.SetWrote(rel + n)
		f.SetCommitted(rel + n)
		q.written.Store(pos + n)
		done += int(n)
	}
	return nil
}

// Read returns up to maxUnits committed units starting at queue offset
// offset, all from one file (fewer at a file's end). It returns an empty
// Units at or past MaxOffset and ErrFileMissing when the file is gone.
func (q *Queue) Read(offset int64, maxUnits int) (Units, error) {
	pos := offset * UnitSize
	gen := q.gen.Load() // before written: see readAhead
	end := q.written.Load()
	if offset < 0 || pos >= end || maxUnits <= 0 {
		return Units{First: offset}, nil
	}
	f := q.seg.Find(pos)
	if f == nil {
		return Units{First: offset}, fmt.Errorf("%w: %s/%d offset %d", ErrFileMissing, q.topic, q.queueID, offset)
	}
	avail := min(end, f.End()) - pos
	n := min(avail, int64(maxUnits)*UnitSize)
	bp := readPool.Get().(*[]byte)
	if int64(cap(*bp)) < n {
		*bp = make([]byte, n)
	}
	b := (*bp)[:n]
	if q.readAheadHit(b, pos, gen) {
		return Units{First: offset, buf: bp, b: b}, nil
	}
	if err := q.readUnits(f, b, pos, avail, gen); err != nil {
		readPool.Put(bp)
		if errors.Is(err, fdcache.ErrForgotten) {
			// Deleted by retention since Find found it.
			return Units{First: offset}, fmt.Errorf("%w: %s/%d offset %d", ErrFileMissing, q.topic, q.queueID, offset)
		}
		return Units{First: offset}, fmt.Errorf("consumequeue: %w", err)
	}
	return Units{First: offset, buf: bp, b: b}, nil
}

// readUnits reads the units at [pos, pos+len(b)) of f into b: with those
// after them up to avail bytes (readAheadBytes at most) into the queue's
// read-ahead block when the reader is sequential and asks for less.
func (q *Queue) readUnits(f *segment.File, b []byte, pos, avail int64, gen uint64) error {
	ahead := min(avail, readAheadBytes)
	if ahead <= int64(len(b)) || !q.readAheadFrom(pos, gen) {
		_, err := f.ReadAt(b, pos-f.Start())
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return err
	}
	sp := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(sp)
	data := (*sp)[:ahead]
	got, err := f.ReadAt(data, pos-f.Start())
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	copy(b, data)
	if got == len(data) {
		q.fillReadAhead(data, pos, gen) // never a short read's stale tail
	}
	return nil
}

// scratchPool holds the buffers read-ahead reads into.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, readAheadBytes); return &b }}

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
	var dirty []*segment.File
	q.seg.View(func(files []*segment.File) {
		for _, f := range files {
			if f.Flushed() < f.Wrote() {
				dirty = append(dirty, f)
			}
		}
	})
	var firstErr error
	for _, f := range dirty {
		w := f.Wrote()
		if firstErr == nil && (leastPages <= 0 || w-f.Flushed() >= int64(leastPages)*pageSize) {
			if err := f.Sync(); errors.Is(err, fdcache.ErrForgotten) {
				continue // deleted meanwhile
			} else if err != nil {
				firstErr = fmt.Errorf("consumequeue: %w", err)
			} else {
				f.SetFlushed(max(f.Flushed(), w))
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
	var f *segment.File
	pos := int64(0)
	q.seg.View(func(files []*segment.File) {
		for i, x := range files {
			if int64(len(files)-i) <= unsyncedNames && x.Wrote() > 0 {
				f = x
				return
			}
			if x.Flushed() < x.Wrote() {
				// flushed only grows, and only past whole synced units:
				// the unit at it (rounded down) was unsynced at least
				// when read.
				f, pos = x, x.Flushed()/UnitSize*UnitSize
				return
			}
		}
	})
	if f == nil {
		return 0, false, nil
	}
	if phys, ok := q.markBelow(f.Start() + pos); ok {
		return phys, true, nil
	}
	var b [UnitSize]byte
	if _, err := f.ReadAt(b[:], pos); errors.Is(err, fdcache.ErrForgotten) {
		return 0, false, nil // deleted meanwhile
	} else if err != nil {
		return 0, false, fmt.Errorf("consumequeue: %w", err)
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
	dirty := false
	q.seg.View(func(files []*segment.File) {
		for _, f := range files {
			if f.Flushed() < f.Wrote() {
				dirty = true
				return
			}
		}
	})
	return dirty
}

// closeFiles drops the queue's files without syncing them: their
// descriptors close now, or when their readers finish.
func (q *Queue) closeFiles() {
	q.dropReadAhead()
	_ = q.seg.Close()
}
