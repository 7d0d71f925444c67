package index

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Options configure an Index.
type Options struct {
	FS  vfs.FS
	Dir string // <root>/index
	// HashSlotNum and IndexNum are maxHashSlotNum / maxIndexNum: the
	// dimensions of every file (a file of another size is refused).
	HashSlotNum int
	IndexNum    int
	// LastExitOK and IndexMsgTimestamp (the checkpoint's) decide which
	// files survive Open after a crash (doc.go).
	LastExitOK        bool
	IndexMsgTimestamp int64
	// OnSealed is called by Commit after a full file is entirely on disk,
	// with its end timestamp: the store records it as the checkpoint's
	// indexMsgTimestamp and writes the checkpoint.
	OnSealed func(endTimestamp int64) error
	Clock    func() time.Time // names new files; default time.Now
	Logger   *slog.Logger     // default: discard
}

// Result is what a lookup found: CommitLog offsets (newest first per
// file) and the newest file's end, which QUERY_MESSAGE reports.
type Result struct {
	Offsets             []int64
	LastUpdateTimestamp int64
	LastUpdatePhyOffset int64
}

// FileInfo describes one index file (tests, tools).
type FileInfo struct {
	Name   string
	Header Header
}

// staged is one key of a staged record.
type staged struct {
	hash      int32
	offset    int64
	timestamp int64
}

// Index is the set of index files. Stage, Commit, Flush and Close are
// called by one writer (the store's dispatcher, then its Close); Query,
// Files and DeleteBelow may run concurrently with it.
type Index struct {
	o    Options
	size int64

	mu    sync.RWMutex
	files []*file // oldest first

	// Writer state.
	staged    []staged
	recOffset int64 // record of the last skip decision
	recSet    bool
	recSkip   bool
}

// tmpSuffix marks an index file being created (see create).
const tmpSuffix = ".tmp"

// Open loads the index files in o.Dir (creating it), deleting after an
// abnormal exit those newer than the checkpoint (doc.go).
func Open(o Options) (*Index, error) {
	if o.HashSlotNum <= 0 || o.IndexNum < 2 || o.IndexNum > 1<<31-1 || o.HashSlotNum > 1<<31-1 {
		return nil, fmt.Errorf("index: maxHashSlotNum %d must be positive and maxIndexNum %d at least 2", o.HashSlotNum, o.IndexNum)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	x := &Index{o: o, size: FileSize(o.HashSlotNum, o.IndexNum)}
	if err := vfs.MkdirAllSync(o.FS, o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	names, err := o.FS.List(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("index: list %s: %w", o.Dir, err)
	}
	for _, name := range names {
		if base, ok := strings.CutSuffix(name, tmpSuffix); ok && validName(base) {
			// An index file whose creation a crash interrupted: it never
			// had an index name, so it holds no entry anyone was told of.
			if err := o.FS.Remove(filepath.Join(o.Dir, name)); err != nil {
				return nil, fmt.Errorf("index: remove %s: %w", name, err)
			}
			o.Logger.Info("index: removed an index file whose creation was interrupted", "file", name)
			continue
		}
		if !validName(name) {
			o.Logger.Warn("index: ignoring a file that is not an index file", "dir", o.Dir, "name", name)
			continue
		}
		fl, err := x.load(name)
		if err != nil {
			x.closeFiles()
			return nil, err
		}
		if fl == nil {
			continue
		}
		x.files = append(x.files, fl)
	}
	return x, nil
}

// load opens one file; nil when it was deleted by the crash rule.
func (x *Index) load(name string) (*file, error) {
	path := filepath.Join(x.o.Dir, name)
	f, err := x.o.FS.OpenReadWrite(path)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	size, err := f.Size()
	if err == nil && size == 0 {
		// Created but never sized: an older rocketd killed mid-creation
		// (files are made under a .tmp name now). It holds no entries.
		_ = f.Close()
		if err := x.o.FS.Remove(path); err != nil {
			return nil, fmt.Errorf("index: remove %s: %w", path, err)
		}
		x.o.Logger.Warn("index: removed an empty index file whose creation was interrupted", "file", name)
		return nil, nil
	}
	if err == nil && size != x.size {
		err = fmt.Errorf("size %d, but maxHashSlotNum %d and maxIndexNum %d make %d: set them to the values the file was written with, or remove the file",
			size, x.o.HashSlotNum, x.o.IndexNum, x.size)
	}
	var hb [HeaderSize]byte
	if err == nil {
		_, err = f.ReadAt(hb[:], 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	h, _ := ParseHeader(hb[:])
	if !x.o.LastExitOK && h.EndTimestamp > x.o.IndexMsgTimestamp {
		_ = f.Close()
		if err := x.o.FS.Remove(path); err != nil {
			return nil, fmt.Errorf("index: remove %s: %w", path, err)
		}
		x.o.Logger.Info("index: abnormal exit: deleted an index file newer than the checkpoint",
			"file", name, "endTimestamp", h.EndTimestamp, "indexMsgTimestamp", x.o.IndexMsgTimestamp)
		return nil, nil
	}
	if h.IndexCount > int32(x.o.IndexNum) {
		// A damaged header: no item lies beyond the file.
		x.o.Logger.Warn("index: header counts more items than the file holds; reading it as full",
			"file", name, "indexCount", h.IndexCount, "maxIndexNum", x.o.IndexNum)
		h.IndexCount = int32(x.o.IndexNum)
	}
	fl := &file{f: f, path: path, name: name, slotNum: int32(x.o.HashSlotNum), indexNum: int32(x.o.IndexNum), hdr: h}
	if fl.full() {
		fl.sealed, fl.persisted = true, true
	}
	return fl, nil
}

// Stage queues the keys of one dispatched record: its UNIQ_KEY and each
// KEYS entry (none for a rolled-back transaction record). They are
// indexed by the next Commit.
func (x *Index) Stage(topic, properties string, sysFlag int32, offset, storeTimestamp int64) {
	if message.TransactionType(sysFlag) == message.TransactionRollbackType {
		return
	}
	if v, ok := message.Property(properties, message.PropertyUniqClientMessageIDKeyIdx); ok {
		x.staged = append(x.staged, staged{KeyHash(topic, v), offset, storeTimestamp})
	}
	keys, _ := message.Property(properties, message.PropertyKeys)
	for keys != "" {
		var k string
		k, keys, _ = strings.Cut(keys, message.KeySeparator)
		if k != "" {
			x.staged = append(x.staged, staged{KeyHash(topic, k), offset, storeTimestamp})
		}
	}
}

// Commit indexes the staged keys: items are written to the current file
// once itemWriteBatch bytes of them gathered, full files are written back,
// synced and reported to OnSealed. On an
// error the keys not yet indexed stay staged and the next Commit goes on.
func (x *Index) Commit() error {
	if err := x.persistSealed(); err != nil {
		return err
	}
	for len(x.staged) > 0 {
		cur, err := x.writable()
		if err != nil {
			return err
		}
		x.mu.Lock()
		i := 0
		for ; i < len(x.staged) && !cur.full(); i++ {
			e := x.staged[i]
			if !x.recSet || e.offset != x.recOffset {
				x.recSet, x.recOffset = true, e.offset
				x.recSkip = e.offset < cur.hdr.EndPhyOffset // indexed before
			}
			if !x.recSkip {
				cur.put(e.hash, e.offset, e.timestamp)
			}
		}
		x.mu.Unlock()
		n := copy(x.staged, x.staged[i:])
		x.staged = x.staged[:n]
		if cur.sealed {
			if err := x.persistSealed(); err != nil {
				return err
			}
		}
	}
	x.recSet = false
	if cur := x.current(); cur != nil && cur.slots != nil && len(cur.pending) >= itemWriteBatch {
		return x.writeBack(cur, false)
	}
	return nil
}

// itemWriteBatch is how many bytes of new items (20 each) Commit lets
// gather in memory before it writes them. They are durable only with the
// slot table, written when the file fills and at Close, so writing them
// sooner buys nothing; under a closed loop of producers a dispatch round
// carries a few records, and a write per round was a pwrite per few
// messages (3% of the broker's CPU at 64 producers). Queries read the
// unwritten items from memory.
const itemWriteBatch = 64 << 10

// current returns the newest file, or nil.
func (x *Index) current() *file {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.files) == 0 {
		return nil
	}
	return x.files[len(x.files)-1]
}

// writable returns the file to write to: the newest if it is not full
// (its slots loaded), else a new one.
func (x *Index) writable() (*file, error) {
	last := x.current()
	if last != nil && !last.full() {
		if last.slots == nil {
			probe := &file{f: last.f, path: last.path, slotNum: last.slotNum, hdr: last.hdr}
			if err := probe.loadSlots(); err != nil {
				return nil, err
			}
			x.mu.Lock()
			last.slots, last.dirty, last.written = probe.slots, probe.dirty, probe.written
			x.mu.Unlock()
		}
		return last, nil
	}
	name := FileName(x.o.Clock())
	var h Header
	h.IndexCount = 1
	if last != nil {
		if name <= last.name {
			// Created within the same millisecond (tiny files): the
			// next name keeps the order.
			n, _ := strconv.ParseUint(last.name, 10, 64)
			name = fmt.Sprintf("%017d", n+1)
		}
		if last.hdr.EndPhyOffset > 0 {
			h.BeginPhyOffset, h.EndPhyOffset = last.hdr.EndPhyOffset, last.hdr.EndPhyOffset
		}
		if last.hdr.EndTimestamp > 0 {
			h.BeginTimestamp, h.EndTimestamp = last.hdr.EndTimestamp, last.hdr.EndTimestamp
		}
	}
	path := filepath.Join(x.o.Dir, name)
	// Made as "<name>.tmp", sized, headed and synced, then renamed: a
	// process killed in between leaves a .tmp (removed at Open), never a
	// short file under an index name, which Open would have to refuse.
	// The new name is made durable by the flush's SyncDir, before the
	// checkpoint may count the file's entries, as the name was before.
	tmp := path + tmpSuffix
	f, err := x.o.FS.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("index: create %s: %w", tmp, err)
	}
	err = f.Truncate(x.size)
	if err == nil {
		_, err = f.WriteAt(h.AppendTo(make([]byte, 0, HeaderSize)), 0)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = x.o.FS.Rename(tmp, path)
	}
	if err != nil {
		_ = f.Close()
		_ = x.o.FS.Remove(tmp)
		return nil, fmt.Errorf("index: create %s: %w", path, err)
	}
	fl := &file{f: f, path: path, name: name, slotNum: int32(x.o.HashSlotNum), indexNum: int32(x.o.IndexNum), hdr: h,
		slots: make([]int32, x.o.HashSlotNum), written: 1}
	fl.dirty = make([]uint64, (x.o.HashSlotNum+slotsPerChunk*64-1)/(slotsPerChunk*64))
	x.mu.Lock()
	x.files = append(x.files, fl)
	x.mu.Unlock()
	x.o.Logger.Info("index: new index file", "file", name, "beginPhyOffset", h.BeginPhyOffset)
	return fl, nil
}

// persistSealed writes back and syncs every full file not yet on disk,
// drops its memory and reports it to OnSealed.
func (x *Index) persistSealed() error {
	x.mu.RLock()
	var todo []*file
	for _, fl := range x.files {
		if fl.sealed && !fl.persisted {
			todo = append(todo, fl)
		}
	}
	x.mu.RUnlock()
	for _, fl := range todo {
		if err := x.writeBack(fl, true); err != nil {
			return err
		}
		x.mu.Lock()
		fl.persisted = true
		fl.slots, fl.dirty, fl.pending = nil, nil, nil
		end := fl.hdr.EndTimestamp
		x.mu.Unlock()
		if x.o.OnSealed != nil {
			if err := x.o.OnSealed(end); err != nil {
				return fmt.Errorf("index: record sealed %s: %w", fl.name, err)
			}
		}
	}
	return nil
}

// writeBack writes the file's unwritten items and, with all, its dirty
// slots and header, then syncs it. No lock is held during the I/O: only
// the writer changes the write state.
func (x *Index) writeBack(fl *file, all bool) error {
	x.mu.RLock()
	pending, from, h := fl.pending, fl.written, fl.hdr
	var dirty []uint64
	if all {
		dirty = append([]uint64(nil), fl.dirty...)
	}
	x.mu.RUnlock()
	if err := fl.writeItems(pending, from); err != nil {
		return err
	}
	x.mu.Lock()
	n := copy(fl.pending, fl.pending[len(pending):])
	fl.pending = fl.pending[:n]
	fl.written += int32(len(pending) / ItemSize)
	if all {
		clear(fl.dirty)
	}
	x.mu.Unlock()
	if !all {
		return nil
	}
	err := fl.writeSlots(fl.slots, dirty, h)
	if err == nil {
		if err = fl.f.Sync(); err != nil {
			err = fmt.Errorf("index: sync %s: %w", fl.path, err)
		}
	}
	if err == nil {
		// The file's name too: the checkpoint may count it as durable.
		if err = x.o.FS.SyncDir(x.o.Dir); err != nil {
			err = fmt.Errorf("index: %w", err)
		}
	}
	if err != nil {
		x.mu.Lock()
		for i, b := range dirty {
			fl.dirty[i] |= b
		}
		x.mu.Unlock()
	}
	return err
}

// Flush writes the current file back entirely and syncs it (Close; a
// sealed file is written back by Commit).
func (x *Index) Flush() error {
	if err := x.persistSealed(); err != nil {
		return err
	}
	if cur := x.current(); cur != nil && cur.slots != nil {
		return x.writeBack(cur, true)
	}
	return nil
}

// Query returns the offsets of records indexed under topic#key stored in
// [begin, end], at most maxNum (Java's IndexService.queryOffset). On a
// read error it returns what it found before with the error.
func (x *Index) Query(topic, key string, maxNum int, begin, end int64) (Result, error) {
	var r Result
	if maxNum <= 0 {
		return r, nil
	}
	hash := KeyHash(topic, key)
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i := len(x.files) - 1; i >= 0; i-- {
		fl := x.files[i]
		if i == len(x.files)-1 {
			r.LastUpdateTimestamp, r.LastUpdatePhyOffset = fl.hdr.EndTimestamp, fl.hdr.EndPhyOffset
		}
		if fl.timeMatched(begin, end) {
			var err error
			if r.Offsets, err = fl.selectOffsets(r.Offsets, hash, maxNum, begin, end); err != nil {
				return r, err
			}
		}
		if fl.hdr.BeginTimestamp < begin || len(r.Offsets) >= maxNum {
			break
		}
	}
	return r, nil
}

// DeleteBelow deletes the oldest files whose endPhyOffset is below
// minOffset (never the newest one) and returns how many it deleted.
func (x *Index) DeleteBelow(minOffset int64) (int, error) {
	x.mu.Lock()
	n := 0
	for n < len(x.files)-1 {
		fl := x.files[n]
		if fl.hdr.EndPhyOffset >= minOffset || fl.slots != nil {
			break // in use by the writer, or not expired
		}
		n++
	}
	rm := append([]*file(nil), x.files[:n]...)
	x.files = append(x.files[:0:0], x.files[n:]...)
	x.mu.Unlock()
	var errs []error
	for _, fl := range rm {
		if err := fl.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("index: close %s: %w", fl.path, err))
		}
		if err := x.o.FS.Remove(fl.path); err != nil {
			errs = append(errs, fmt.Errorf("index: remove %s: %w", fl.path, err))
		}
	}
	if n > 0 {
		if err := x.o.FS.SyncDir(x.o.Dir); err != nil {
			errs = append(errs, fmt.Errorf("index: %w", err))
		}
	}
	return n, errors.Join(errs...)
}

// Files describes the files, oldest first.
func (x *Index) Files() []FileInfo {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]FileInfo, len(x.files))
	for i, fl := range x.files {
		out[i] = FileInfo{Name: fl.name, Header: fl.hdr}
	}
	return out
}

// Close flushes (Flush) and closes the files.
func (x *Index) Close() error {
	err := x.Flush()
	return errors.Join(err, x.closeFiles())
}

func (x *Index) closeFiles() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	var errs []error
	for _, fl := range x.files {
		if err := fl.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("index: close %s: %w", fl.path, err))
		}
	}
	x.files = nil
	return errors.Join(errs...)
}
