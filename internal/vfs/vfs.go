// Package vfs is the file-system seam of the store. Every byte the store
// writes goes through an FS so that tests can inject I/O errors and simulate a
// crash (everything not yet synced is lost). The OS implementation is the
// production one; the in-memory crash-simulating and error-injecting versions
// exist for tests.
//
//   - Default: the OS (fdatasync, statfs, OFD lock on the lock file).
//   - NewMem: MemFS, in memory and sparse; CrashClone returns what a power
//     loss would leave (only synced file pages and SyncDir'ed directory
//     entries; see MemFS for the exact model); SetCapacity simulates a small
//     disk (DiskUsage, ENOSPC).
//   - NewErrorFS: wraps any FS and lets an Injector fail operations; the
//     Trigger injectors (FailNth, FailFrom, CrashAt) count operations by kind
//     so a test can visit every failure point: k = 0, 1, 2, ... until the
//     trigger no longer fires.
//   - MkdirAllSync and WriteFileAtomic are the crash-safe ways to create a
//     directory and to replace a small file (checkpoint, config JSON).
//
// A crash test typically runs the store on NewErrorFS(mem, CrashAt(OpMutating,
// k)), stops it when the trigger fires, reopens it on mem.CrashClone() and
// checks that everything acknowledged as durable is there.
package vfs

import (
	"errors"
	"io"
	"os"
)

// ErrLocked is returned (wrapped) by FS.Lock when another holder has the lock.
var ErrLocked = errors.New("vfs: locked by another holder")

// File is an open file. ReadAt and WriteAt follow io.ReaderAt/io.WriterAt
// (positional, safe for concurrent use on distinct ranges). Sync makes the
// file's written data durable (fdatasync on Linux); until Sync returns nil, a
// crash may lose any write made after the previous successful Sync.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync flushes written data to stable storage (fdatasync).
	Sync() error
	// Truncate changes the file's size; growing it reads back zeros.
	Truncate(size int64) error
	// Size returns the current size of the file in bytes.
	Size() (int64, error)
	// Name returns the path the file was opened with.
	Name() string
}

// Writebacker is implemented by files whose OS can write the dirty pages of
// a range to disk ahead of a Sync (Linux: sync_file_range(2)). It only
// paces I/O: it makes nothing durable (no metadata, no device cache flush),
// so the caller still calls Sync. With wait it also waits for the range's
// writeback to finish; without, it only starts it. Files that do not
// implement it (MemFS, ErrorFS) need no pacing; call it through Writeback.
type Writebacker interface {
	Writeback(off, n int64, wait bool) error
}

// Writeback starts (or, with wait, completes) the writeback of [off, off+n)
// of f when f is a Writebacker, and does nothing otherwise.
func Writeback(f File, off, n int64, wait bool) error {
	if w, ok := f.(Writebacker); ok {
		return w.Writeback(off, n, wait)
	}
	return nil
}

// FS is the set of file-system operations the store needs.
type FS interface {
	// Create creates or truncates the named file for reading and writing.
	Create(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing.
	OpenReadWrite(name string) (File, error)
	// Open opens an existing file read-only.
	Open(name string) (File, error)
	// Remove deletes a file or an empty directory.
	Remove(name string) error
	// RemoveAll deletes a path and everything below it.
	RemoveAll(name string) error
	// Rename moves oldname to newname atomically, replacing newname.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes the named file.
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes directory entries (creates, renames, removes) in dir durable.
	SyncDir(dir string) error
	// DiskUsage reports the space of the file system holding path, as df
	// shows it.
	DiskUsage(path string) (DiskSpace, error)
	// Lock takes an exclusive lock on the named file, creating it if needed,
	// and fails at once (without waiting) if another holder has it. The
	// store's <root>/lock file uses it so that two brokers never share a
	// data directory. On the OS it is an open-file-description lock on the
	// first byte, which conflicts with the fcntl lock a Java broker takes
	// (FileChannel.tryLock). Closing the returned Closer releases the lock.
	Lock(name string) (io.Closer, error)
}

// DiskSpace is a file system's space in bytes, counted as df(1) counts it:
// Used is what files hold (total minus free, root's reserve included in
// free), Avail what an unprivileged writer may still fill. Used + Avail may
// be less than Total: the difference is the blocks reserved for root.
type DiskSpace struct {
	Total uint64
	Used  uint64
	Avail uint64
}

// UsedPercent is df's Use%: Used / (Used + Avail), in percent. Root's
// reserve counts neither way, so a disk reads 100 % when an unprivileged
// writer can add nothing. An empty file system reads 0.
func (d DiskSpace) UsedPercent() float64 {
	if d.Used+d.Avail == 0 {
		return 0
	}
	return float64(d.Used) * 100 / float64(d.Used+d.Avail)
}
