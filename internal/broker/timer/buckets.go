package timer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/rocketd/rocketd/internal/vfs"
)

// entrySize is the on-disk size of an entry (see doc.go).
const entrySize = 20

// checkpointName is the progress file inside the timer directory.
const checkpointName = "checkpoint"

// checkpointSize: enqueue offset, watermark, CRC32 (see doc.go).
const checkpointSize = 20

// buckets is the on-disk part: one append-only file per time bucket that
// holds pending entries, and the checkpoint. Not safe for concurrent use
// (the service's goroutine owns it).
type buckets struct {
	fs    vfs.FS
	dir   string
	width int64 // bucket width, ms

	sizes   map[int64]int64    // bucket start -> file size (every bucket file that exists)
	pending map[int64][]byte   // bucket start -> encoded entries not yet written
	dirty   map[int64]struct{} // written since the last sync
	order   []int64            // sorted bucket starts with a file (index)
	readers map[int64]vfs.File // open bucket files of copied records
	writers map[int64]vfs.File // bucket files open for appending (at most maxWriters)
}

// maxWriters bounds the bucket files kept open for appending: messages
// spread over many buckets reuse their handles instead of an open and a
// close per enqueue round.
const maxWriters = 256

func openBuckets(fsys vfs.FS, dir string, width int64) (*buckets, error) {
	if err := vfs.MkdirAllSync(fsys, dir, 0o755); err != nil {
		return nil, fmt.Errorf("timer: create %s: %w", dir, err)
	}
	b := &buckets{fs: fsys, dir: dir, width: width, sizes: map[int64]int64{},
		pending: map[int64][]byte{}, dirty: map[int64]struct{}{}, readers: map[int64]vfs.File{},
		writers: map[int64]vfs.File{}}
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("timer: list %s: %w", dir, err)
	}
	for _, name := range names {
		start, err := strconv.ParseInt(name, 10, 64)
		if err != nil || len(name) != 20 {
			continue // checkpoint, temp files
		}
		st, err := fsys.Stat(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("timer: stat %s: %w", name, err)
		}
		b.sizes[start] = st.Size() // a torn tail is cut by load
		b.order = append(b.order, start)
	}
	slices.Sort(b.order)
	return b, nil
}

func (b *buckets) start(ms int64) int64 {
	s := ms - ms%b.width
	if ms < 0 && ms%b.width != 0 {
		s -= b.width
	}
	return s
}

func (b *buckets) path(start int64) string {
	return filepath.Join(b.dir, fmt.Sprintf("%020d", start))
}

// add queues an entry for its bucket's file (written by writePending).
// With record, the record is copied into the file after the entry (the
// size field is then negative: see doc.go).
func (b *buckets) add(e entry, record []byte) {
	s := b.start(e.deliverMs)
	size := e.size
	if record != nil {
		size = -int32(len(record))
	}
	var hdr [entrySize]byte
	binary.BigEndian.PutUint64(hdr[0:], uint64(e.deliverMs))
	binary.BigEndian.PutUint64(hdr[8:], uint64(e.phyOffset))
	binary.BigEndian.PutUint32(hdr[16:], uint32(size))
	b.pending[s] = append(append(b.pending[s], hdr[:]...), record...)
}

// writePending appends the queued entries to their files (one write per
// bucket; not synced).
func (b *buckets) writePending() error {
	for s, data := range b.pending {
		size, exists := b.sizes[s]
		f, err := b.writer(s, exists)
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(data, size); err != nil {
			return fmt.Errorf("timer: append to bucket %d: %w", s, err)
		}
		if !exists {
			i, _ := slices.BinarySearch(b.order, s)
			b.order = slices.Insert(b.order, i, s)
		}
		b.sizes[s] = size + int64(len(data))
		b.dirty[s] = struct{}{}
		delete(b.pending, s)
	}
	return nil
}

// writer returns the open append handle of a bucket file, creating the
// file when it does not exist yet.
func (b *buckets) writer(s int64, exists bool) (vfs.File, error) {
	if f, ok := b.writers[s]; ok {
		return f, nil
	}
	if len(b.writers) >= maxWriters {
		b.closeWriters() // unsynced data stays dirty: sync reopens
	}
	var f vfs.File
	var err error
	if exists {
		f, err = b.fs.OpenReadWrite(b.path(s))
	} else {
		f, err = b.fs.Create(b.path(s))
	}
	if err != nil {
		return nil, fmt.Errorf("timer: open bucket %d: %w", s, err)
	}
	b.writers[s] = f
	return f, nil
}

func (b *buckets) closeWriters() {
	for s, f := range b.writers {
		_ = f.Close()
		delete(b.writers, s)
	}
}

// sync makes the written bucket files (and new names) durable.
func (b *buckets) sync() error {
	if len(b.dirty) == 0 {
		return nil
	}
	for s := range b.dirty {
		if f, ok := b.writers[s]; ok {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("timer: sync bucket %d: %w", s, err)
			}
			delete(b.dirty, s)
			continue
		}
		f, err := b.fs.OpenReadWrite(b.path(s))
		if errors.Is(err, fs.ErrNotExist) {
			delete(b.dirty, s)
			continue
		}
		if err != nil {
			return fmt.Errorf("timer: open bucket %d: %w", s, err)
		}
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(serr, cerr); err != nil {
			return fmt.Errorf("timer: sync bucket %d: %w", s, err)
		}
		delete(b.dirty, s)
	}
	if err := b.fs.SyncDir(b.dir); err != nil {
		return fmt.Errorf("timer: sync dir %s: %w", b.dir, err)
	}
	return nil
}

// load reads a bucket's entries with a delivery time >= from, without
// duplicates (the same CommitLog offset appended twice after a crash). The
// file is read sequentially; copied records are skipped (read at delivery).
// A torn tail (a crash in the middle of an append) is cut off.
func (b *buckets) load(start, from int64, dst []entry) ([]entry, error) {
	size, ok := b.sizes[start]
	if !ok || size == 0 {
		return dst, nil
	}
	f, err := b.fs.Open(b.path(start))
	if err != nil {
		return dst, fmt.Errorf("timer: open bucket %d: %w", start, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10)
	first := len(dst)
	var hdr [entrySize]byte
	pos := int64(0)
	for pos+entrySize <= size {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return dst, fmt.Errorf("timer: read bucket %d at %d: %w", start, pos, err)
		}
		e := entry{
			deliverMs: int64(binary.BigEndian.Uint64(hdr[0:])),
			phyOffset: int64(binary.BigEndian.Uint64(hdr[8:])),
			fileOff:   -1,
			size:      int32(binary.BigEndian.Uint32(hdr[16:])),
		}
		next := pos + entrySize
		if e.size == math.MinInt32 {
			break // corrupt: cannot be a record size
		}
		if e.size < 0 {
			e.size = -e.size
			e.fileOff = next
			next += int64(e.size)
			if next > size {
				break // torn copy
			}
			if _, err := r.Discard(int(e.size)); err != nil {
				return dst, fmt.Errorf("timer: read bucket %d at %d: %w", start, pos, err)
			}
		}
		pos = next
		if e.deliverMs >= from && e.size > 0 && b.start(e.deliverMs) == start {
			dst = append(dst, e)
		}
	}
	b.sizes[start] = pos // the next append overwrites a torn tail
	loaded := dst[first:]
	slices.SortFunc(loaded, func(x, y entry) int {
		if x.phyOffset != y.phyOffset {
			if x.phyOffset < y.phyOffset {
				return -1
			}
			return 1
		}
		return 0
	})
	loaded = slices.CompactFunc(loaded, func(x, y entry) bool { return x.phyOffset == y.phyOffset })
	return dst[:first+len(loaded)], nil
}

// readCopy reads a record copied into a bucket file.
func (b *buckets) readCopy(e entry, dst []byte) ([]byte, error) {
	start := b.start(e.deliverMs)
	f, ok := b.readers[start]
	if !ok {
		var err error
		if f, err = b.fs.Open(b.path(start)); err != nil {
			return dst, fmt.Errorf("timer: open bucket %d: %w", start, err)
		}
		b.readers[start] = f
	}
	dst = slices.Grow(dst[:0], int(e.size))[:e.size]
	if _, err := f.ReadAt(dst, e.fileOff); err != nil {
		return dst, fmt.Errorf("timer: read copied record in bucket %d at %d: %w", start, e.fileOff, err)
	}
	return dst, nil
}

// closeFiles closes every open bucket file.
func (b *buckets) closeFiles() {
	for s, f := range b.readers {
		_ = f.Close()
		delete(b.readers, s)
	}
	b.closeWriters()
}

// remove deletes a bucket's file.
func (b *buckets) remove(start int64) error {
	if _, ok := b.sizes[start]; !ok {
		return nil
	}
	if f, ok := b.readers[start]; ok {
		_ = f.Close()
		delete(b.readers, start)
	}
	if f, ok := b.writers[start]; ok {
		_ = f.Close()
		delete(b.writers, start)
	}
	if err := b.fs.Remove(b.path(start)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("timer: remove bucket %d: %w", start, err)
	}
	delete(b.sizes, start)
	delete(b.dirty, start)
	if i, found := slices.BinarySearch(b.order, start); found {
		b.order = slices.Delete(b.order, i, i+1)
	}
	return nil
}

// progress is the checkpoint: the next offset of the timer queue to read,
// and the watermark (every entry due before it was delivered).
type progress struct {
	enqueueOffset int64
	watermarkMs   int64
}

var errBadCheckpoint = errors.New("timer: checkpoint is corrupt")

func decodeProgress(data []byte) (progress, error) {
	if len(data) != checkpointSize || crc32.ChecksumIEEE(data[:16]) != binary.BigEndian.Uint32(data[16:]) {
		return progress{}, errBadCheckpoint
	}
	return progress{
		enqueueOffset: int64(binary.BigEndian.Uint64(data[0:])),
		watermarkMs:   int64(binary.BigEndian.Uint64(data[8:])),
	}, nil
}

func encodeProgress(p progress) []byte {
	data := make([]byte, checkpointSize)
	binary.BigEndian.PutUint64(data[0:], uint64(p.enqueueOffset))
	binary.BigEndian.PutUint64(data[8:], uint64(p.watermarkMs))
	binary.BigEndian.PutUint32(data[16:], crc32.ChecksumIEEE(data[:16]))
	return data
}

// readProgress loads the checkpoint; found is false when there is none.
func (b *buckets) readProgress() (progress, bool, error) {
	data, err := vfs.ReadFile(b.fs, filepath.Join(b.dir, checkpointName))
	if errors.Is(err, fs.ErrNotExist) {
		return progress{}, false, nil
	}
	if err != nil {
		return progress{}, false, fmt.Errorf("timer: read checkpoint: %w", err)
	}
	p, err := decodeProgress(data)
	if err != nil {
		return progress{}, false, err
	}
	return p, true, nil
}

// writeProgress replaces the checkpoint atomically (temp file, sync,
// rename, sync dir).
func (b *buckets) writeProgress(p progress) error {
	tmp := filepath.Join(b.dir, checkpointName+".tmp")
	f, err := b.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("timer: create checkpoint: %w", err)
	}
	_, werr := f.WriteAt(encodeProgress(p), 0)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("timer: write checkpoint: %w", err)
	}
	if err := b.fs.Rename(tmp, filepath.Join(b.dir, checkpointName)); err != nil {
		return fmt.Errorf("timer: rename checkpoint: %w", err)
	}
	if err := b.fs.SyncDir(b.dir); err != nil {
		return fmt.Errorf("timer: sync dir %s: %w", b.dir, err)
	}
	return nil
}
