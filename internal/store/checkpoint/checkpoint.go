package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/rocketd/rocketd/internal/vfs"
)

// Size is the size of the checkpoint file in bytes. Do not change.
const Size = 4096

// FileName is the checkpoint's name under the store root.
const FileName = "checkpoint"

// ErrShort reports a checkpoint file shorter than its 40 meaningful bytes.
var ErrShort = errors.New("checkpoint: file too short")

// State is the content of the checkpoint file.
type State struct {
	PhysicMsgTimestamp  int64
	LogicsMsgTimestamp  int64
	IndexMsgTimestamp   int64
	MasterFlushedOffset int64
	ConfirmPhyOffset    int64

	// ResumeRecord (rocketd's extension, valid when HasResume) is the
	// CommitLog offset of a record such that it and everything before it
	// are durable in the CommitLog and in the ConsumeQueues: recovery may
	// scan from there instead of from a segment start.
	ResumeRecord int64
	HasResume    bool
}

// resumeMagic marks rocketd's extension after Java's 40 bytes.
var resumeMagic = [8]byte{'r', 'o', 'c', 'k', 'e', 't', 'd', 1}

// extEnd is where rocketd's extension ends; the bytes after it are zero.
const extEnd = 72

// RecoveryTimestamp is the store time below which abnormal recovery may
// assume everything reached the disk: min(physic, logics) minus 3 s of slack
// (spec §7), and also bounded by the index timestamp when indexSafe is set.
func (s State) RecoveryTimestamp(indexSafe bool) int64 {
	m := min(s.PhysicMsgTimestamp, s.LogicsMsgTimestamp)
	if indexSafe {
		m = min(m, s.IndexMsgTimestamp)
	}
	return m - 3000
}

// AppendTo appends the 4096-byte page encoding s.
func (s State) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.PhysicMsgTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.LogicsMsgTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.IndexMsgTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.MasterFlushedOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.ConfirmPhyOffset))
	if !s.HasResume {
		return append(dst, make([]byte, Size-40)...)
	}
	dst = append(dst, resumeMagic[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.ResumeRecord))
	// The guard: Java rewrites only the first 40 bytes in place, so a
	// page it changed keeps a stale extension whose copy of the two
	// timestamps no longer matches.
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.PhysicMsgTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.LogicsMsgTimestamp))
	return append(dst, make([]byte, Size-extEnd)...)
}

// Parse decodes a checkpoint page. The first 40 bytes are Java's; a 4.x
// file has zeros (or garbage-free padding) in the 5.x fields. rocketd's
// extension counts only when its magic is there and its guard matches
// the timestamps.
func Parse(b []byte) (State, error) {
	if len(b) < 40 {
		return State{}, fmt.Errorf("%w: %d bytes", ErrShort, len(b))
	}
	s := State{
		PhysicMsgTimestamp:  int64(binary.BigEndian.Uint64(b[0:])),
		LogicsMsgTimestamp:  int64(binary.BigEndian.Uint64(b[8:])),
		IndexMsgTimestamp:   int64(binary.BigEndian.Uint64(b[16:])),
		MasterFlushedOffset: int64(binary.BigEndian.Uint64(b[24:])),
		ConfirmPhyOffset:    int64(binary.BigEndian.Uint64(b[32:])),
	}
	if len(b) >= extEnd && [8]byte(b[40:48]) == resumeMagic &&
		int64(binary.BigEndian.Uint64(b[56:])) == s.PhysicMsgTimestamp &&
		int64(binary.BigEndian.Uint64(b[64:])) == s.LogicsMsgTimestamp {
		if r := int64(binary.BigEndian.Uint64(b[48:])); r >= 0 {
			s.ResumeRecord, s.HasResume = r, true
		}
	}
	return s, nil
}

// File is the checkpoint of one store: the in-memory state updated by the
// flushers and the dispatcher, and Flush to persist it. Safe for concurrent use.
type File struct {
	fs   vfs.FS
	path string

	mu struct {
		sync.Mutex
		state State
	}
	// flushMu serialises Flush so two writers never race on the tmp file.
	flushMu sync.Mutex
}

// Open loads path (tolerating a missing file: all zeros) and returns the
// checkpoint. existed reports whether the file was there.
func Open(fsys vfs.FS, path string) (f *File, existed bool, err error) {
	f = &File{fs: fsys, path: path}
	st, err := load(fsys, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, false, nil
	case err != nil:
		return nil, false, err
	}
	f.mu.state = st
	return f, true, nil
}

func load(fsys vfs.FS, path string) (State, error) {
	file, err := fsys.Open(path)
	if err != nil {
		return State{}, fmt.Errorf("checkpoint: open %s: %w", path, err)
	}
	defer file.Close()
	buf := make([]byte, extEnd)
	n, err := file.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return State{}, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	st, err := Parse(buf[:n])
	if err != nil {
		return State{}, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return st, nil
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// State returns the in-memory state (what the next Flush writes).
func (f *File) State() State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.state
}

// SetPhysicMsgTimestamp records the store time of the last flushed CommitLog data.
func (f *File) SetPhysicMsgTimestamp(ts int64) {
	f.mu.Lock()
	f.mu.state.PhysicMsgTimestamp = ts
	f.mu.Unlock()
}

// SetLogicsMsgTimestamp records the store time of the last flushed ConsumeQueue unit.
func (f *File) SetLogicsMsgTimestamp(ts int64) {
	f.mu.Lock()
	f.mu.state.LogicsMsgTimestamp = ts
	f.mu.Unlock()
}

// SetIndexMsgTimestamp records the end time of the last full index file.
func (f *File) SetIndexMsgTimestamp(ts int64) {
	f.mu.Lock()
	f.mu.state.IndexMsgTimestamp = ts
	f.mu.Unlock()
}

// SetOffsets records the 5.x HA offsets.
func (f *File) SetOffsets(masterFlushed, confirmPhy int64) {
	f.mu.Lock()
	f.mu.state.MasterFlushedOffset = masterFlushed
	f.mu.state.ConfirmPhyOffset = confirmPhy
	f.mu.Unlock()
}

// SetResumeRecord records a durable record to resume recovery from (see
// State.ResumeRecord).
func (f *File) SetResumeRecord(offset int64) {
	f.mu.Lock()
	f.mu.state.ResumeRecord, f.mu.state.HasResume = offset, true
	f.mu.Unlock()
}

// ClearResumeRecord forgets the resume record (the CommitLog was cut
// below it, or may have been).
func (f *File) ClearResumeRecord() {
	f.mu.Lock()
	f.mu.state.ResumeRecord, f.mu.state.HasResume = 0, false
	f.mu.Unlock()
}

// Flush writes the current state crash-atomically (tmp file, fsync, rename,
// fsync of the directory). The state lock is not held across the I/O.
func (f *File) Flush() error {
	f.flushMu.Lock()
	defer f.flushMu.Unlock()
	page := f.State().AppendTo(make([]byte, 0, Size))
	if err := vfs.WriteFileAtomic(f.fs, f.path, page); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
