package store

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rocketd/rocketd/internal/vfs"
)

// EpochFile is the epoch file's name in the store directory (Java's
// MessageStoreConfig.getStorePathEpochFile).
const EpochFile = "epochFileCheckpoint"

// EpochEntry is one master epoch of the CommitLog: the epoch's master
// wrote [StartOffset, EndOffset). The last entry's EndOffset is
// math.MaxInt64 (open), as in Java's EpochEntry.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
	EndOffset   int64
}

// ErrEpochOrder refuses an epoch entry that does not follow the last one
// (a smaller or equal epoch or start offset).
var ErrEpochOrder = errors.New("store: epoch entry does not follow the last one")

// Epochs is Java's EpochFileCache: which master epoch wrote which range
// of the CommitLog, kept in EpochFile (format in doc.go, "Epoch file").
// A master appends an entry when it takes an epoch; two brokers find the
// last offset their logs share with ConsistentPoint. Safe for concurrent
// use.
type Epochs struct {
	fs   vfs.FS
	path string

	mu      sync.Mutex
	entries []EpochEntry // ascending epoch and start offset
}

// OpenEpochs reads the epoch file at path, or its ".bak" copy when the
// file is missing, empty or damaged (as Java's CheckpointFile.read). No
// file: no entries.
func OpenEpochs(fsys vfs.FS, path string) (*Epochs, error) {
	e := &Epochs{fs: fsys, path: path}
	entries, err := readEpochFile(fsys, path)
	if err != nil || len(entries) == 0 {
		bak, berr := readEpochFile(fsys, path+".bak")
		if berr != nil {
			if err != nil {
				return nil, fmt.Errorf("store: epoch file: %w (and %s: %w)", err, path+".bak", berr)
			}
			return nil, fmt.Errorf("store: epoch file: %w", berr)
		}
		entries = bak
	}
	for i := range entries {
		if i > 0 && (entries[i].Epoch <= entries[i-1].Epoch || entries[i].StartOffset < entries[i-1].StartOffset) {
			return nil, fmt.Errorf("store: epoch file %s: entry %d-%d does not follow %d-%d",
				path, entries[i].Epoch, entries[i].StartOffset, entries[i-1].Epoch, entries[i-1].StartOffset)
		}
	}
	e.entries = entries
	e.linkEnds()
	return e, nil
}

// readEpochFile parses one epoch file; a missing file has no entries.
func readEpochFile(fsys vfs.FS, path string) ([]EpochEntry, error) {
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseEpochFile(data)
}

// parseEpochFile reads CheckpointFile's format: the entry count, the
// CRC32 of the entry lines (0: unchecked), one "epoch-startOffset" line
// per entry.
func parseEpochFile(data []byte) ([]EpochEntry, error) {
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) < 2 {
		return nil, fmt.Errorf("epoch file: %d lines, want the count and the CRC at least", len(lines))
	}
	count, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return nil, fmt.Errorf("epoch file: count: %w", err)
	}
	sum, err := strconv.ParseInt(strings.TrimSpace(lines[1]), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("epoch file: crc: %w", err)
	}
	var body bytes.Buffer
	var entries []EpochEntry
	for _, l := range lines[2:] {
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			continue
		}
		body.WriteString(l)
		body.WriteByte('\n')
		ep, off, ok := strings.Cut(l, "-")
		if !ok {
			continue // Java skips a line it cannot read (and the count catches it)
		}
		epoch, err1 := strconv.ParseInt(ep, 10, 32)
		start, err2 := strconv.ParseInt(off, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("epoch file: line %q", l)
		}
		entries = append(entries, EpochEntry{Epoch: int32(epoch), StartOffset: start})
	}
	if len(entries) != count {
		return nil, fmt.Errorf("epoch file: expect %d entries, only found %d entries", count, len(entries))
	}
	if sum != 0 && int32(sum) != javaCRC32(body.Bytes()) {
		return nil, fmt.Errorf("epoch file: entries crc32 %d does not match %d", sum, javaCRC32(body.Bytes()))
	}
	return entries, nil
}

// javaCRC32 is UtilAll.crc32: CRC-32 (IEEE) with the sign bit cleared.
func javaCRC32(b []byte) int32 { return int32(crc32.ChecksumIEEE(b) & 0x7FFFFFFF) }

// formatEpochFile writes entries in CheckpointFile's format.
func formatEpochFile(entries []EpochEntry) []byte {
	var body bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&body, "%d-%d\n", e.Epoch, e.StartOffset)
	}
	return fmt.Appendf(nil, "%d\n%d\n%s", len(entries), javaCRC32(body.Bytes()), body.Bytes())
}

// linkEnds sets each entry's end to the next one's start, the last one's
// to open. REQUIRES: mu held or e not shared yet.
func (e *Epochs) linkEnds() {
	for i := range e.entries {
		if i+1 < len(e.entries) {
			e.entries[i].EndOffset = e.entries[i+1].StartOffset
		} else {
			e.entries[i].EndOffset = math.MaxInt64
		}
	}
}

// persist writes the entries: the current file is first copied to
// ".bak" (Java's string2File), then replaced atomically (write, fsync,
// rename), so a crash leaves either version whole. No entries: both files
// are removed (Java would read an empty file's ".bak" back). REQUIRES: mu
// held.
func (e *Epochs) persist() error {
	if len(e.entries) == 0 {
		for _, p := range []string{e.path + ".bak", e.path} {
			if err := e.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("store: epoch file: %w", err)
			}
		}
		if err := e.fs.SyncDir(filepath.Dir(e.path)); err != nil {
			return fmt.Errorf("store: epoch file: %w", err)
		}
		return nil
	}
	if prev, err := vfs.ReadFile(e.fs, e.path); err == nil {
		if err := vfs.WriteFileAtomic(e.fs, e.path+".bak", prev); err != nil {
			return fmt.Errorf("store: epoch file backup: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: epoch file: %w", err)
	}
	if err := vfs.WriteFileAtomic(e.fs, e.path, formatEpochFile(e.entries)); err != nil {
		return fmt.Errorf("store: epoch file: %w", err)
	}
	return nil
}

// Entries returns a copy of the entries, oldest first.
func (e *Epochs) Entries() []EpochEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.entries)
}

// Last is the newest entry; ok is false without entries.
func (e *Epochs) Last() (entry EpochEntry, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.entries) == 0 {
		return EpochEntry{}, false
	}
	return e.entries[len(e.entries)-1], true
}

// LastEpoch is the newest entry's epoch, -1 without entries (Java).
func (e *Epochs) LastEpoch() int32 {
	if last, ok := e.Last(); ok {
		return last.Epoch
	}
	return -1
}

// Append records that epoch's master writes from start on: the last
// entry ends at start. An epoch or start offset below the last entry's
// is refused (ErrEpochOrder); the file is rewritten before Append
// returns.
func (e *Epochs) Append(epoch int32, start int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.entries); n > 0 {
		last := e.entries[n-1]
		// Java refuses an equal start offset too; a master that took an
		// epoch and wrote nothing before the next one would then be stuck,
		// so the empty epoch is replaced instead.
		if last.Epoch >= epoch || last.StartOffset > start {
			return fmt.Errorf("%w: %d-%d after %d-%d", ErrEpochOrder, epoch, start, last.Epoch, last.StartOffset)
		}
		if last.StartOffset == start {
			e.entries = e.entries[:n-1]
		}
	}
	prev := e.entries
	e.entries = append(slices.Clone(e.entries), EpochEntry{Epoch: epoch, StartOffset: start})
	e.linkEnds()
	if err := e.persist(); err != nil {
		e.entries = prev
		e.linkEnds()
		return err
	}
	return nil
}

// TruncateSuffixByOffset removes the entries that start at or after
// offset (the log is cut there); the last one left becomes open.
func (e *Epochs) TruncateSuffixByOffset(offset int64) error {
	return e.truncate(func(x EpochEntry) bool { return x.StartOffset >= offset })
}

// TruncateSuffixByEpoch removes the entries of epoch and later.
func (e *Epochs) TruncateSuffixByEpoch(epoch int32) error {
	return e.truncate(func(x EpochEntry) bool { return x.Epoch >= epoch })
}

// TruncatePrefixByOffset removes the entries that end at or before
// offset (the segments holding them were deleted).
func (e *Epochs) TruncatePrefixByOffset(offset int64) error {
	return e.truncate(func(x EpochEntry) bool { return x.EndOffset <= offset })
}

func (e *Epochs) truncate(drop func(EpochEntry) bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := slices.DeleteFunc(slices.Clone(e.entries), drop)
	if len(kept) == len(e.entries) {
		return nil
	}
	prev := e.entries
	e.entries = kept
	e.linkEnds()
	if err := e.persist(); err != nil {
		e.entries = prev
		return err
	}
	return nil
}

// ConsistentPoint is Java's EpochFileCache.findConsistentPoint: the end
// of the newest epoch both logs hold starting at the same offset, the
// smaller of the two ends (local and other list their entries oldest
// first; an open end is math.MaxInt64, so the caller caps the result at
// its log's end). -1: the logs share no epoch.
func ConsistentPoint(local, other []EpochEntry) int64 {
	for i := len(local) - 1; i >= 0; i-- {
		l := local[i]
		for _, o := range other {
			if o.Epoch == l.Epoch {
				if o.StartOffset == l.StartOffset {
					return min(l.EndOffset, o.EndOffset)
				}
				break
			}
		}
	}
	return -1
}
