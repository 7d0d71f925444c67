package segment

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/vfs"
)

// Handle is what a File reads, writes and syncs through: by default the
// vfs.File opened when the File was loaded or created, kept open for the
// File's life; with Config.Handles, whatever that returns (for example a
// handle that opens the file only while it is used). Close is called once,
// at the File's last Release.
type Handle interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Handles makes the Handles of a Queue's files (Config.Handles).
type Handles interface {
	// Open returns a handle on the existing file at path; it need not
	// open the file yet.
	Open(path string) Handle
	// Create creates (or truncates) the file at path.
	Create(path string) (Handle, error)
}

// File is one fixed-size segment: a vfs.File covering the global byte range
// [Start, Start+Size) of its log, with the positions described in the package
// documentation, a sticky sync error and a reference count.
//
// The Queue owns one reference. Readers that use the file outside the Queue's
// lock take another with Hold and give it back with Release; the file is
// closed when the count drops to zero, and deleted from disk too if it was
// removed from its Queue.
type File struct {
	start int64
	size  int64
	path  string
	file  Handle
	fs    vfs.FS

	wrote     atomic.Int64
	committed atomic.Int64
	flushed   atomic.Int64

	refs    atomic.Int64
	removed atomic.Bool
	// gone: unlinkNow removed the file from disk already.
	gone atomic.Bool
	err  atomic.Pointer[error]

	onLastRelease func(f *File, err error) // logs close/remove failures; may be nil
}

func newFile(fs vfs.FS, path string, vf Handle, start, size int64) *File {
	f := &File{start: start, size: size, path: path, file: vf, fs: fs}
	f.refs.Store(1)
	return f
}

// Start is the global offset of the file's first byte.
func (f *File) Start() int64 { return f.start }

// Size is the fixed size of the file.
func (f *File) Size() int64 { return f.size }

// End is the global offset just past the file's last byte.
func (f *File) End() int64 { return f.start + f.size }

// Handle is what the file is read and written through (see Config.Handles).
func (f *File) Handle() Handle { return f.file }

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Contains reports whether the global offset falls inside the file.
func (f *File) Contains(offset int64) bool { return offset >= f.start && offset < f.start+f.size }

// Wrote is the write position relative to Start.
func (f *File) Wrote() int64 { return f.wrote.Load() }

// Committed is the committed position relative to Start.
func (f *File) Committed() int64 { return f.committed.Load() }

// Flushed is the flushed position relative to Start.
func (f *File) Flushed() int64 { return f.flushed.Load() }

// SetWrote sets the write position (relative). Owned by the single writer.
func (f *File) SetWrote(pos int64) { f.wrote.Store(pos) }

// SetCommitted sets the committed position (relative).
func (f *File) SetCommitted(pos int64) { f.committed.Store(pos) }

// SetFlushed sets the flushed position (relative).
func (f *File) SetFlushed(pos int64) { f.flushed.Store(pos) }

// setPositions sets all three positions at once (load, truncate).
func (f *File) setPositions(pos int64) {
	f.wrote.Store(pos)
	f.committed.Store(pos)
	f.flushed.Store(pos)
}

// Full reports whether the write position reached the end of the file.
func (f *File) Full() bool { return f.wrote.Load() >= f.size }

// Err returns the sticky sync error, if any.
func (f *File) Err() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (f *File) fail(err error) error {
	f.err.CompareAndSwap(nil, &err)
	return f.Err()
}

// WriteAt writes p at position pos (relative to Start) and returns how many
// bytes reached the file, which on an error may be some (a short write on a
// full disk). A failed write is not sticky: nothing was acknowledged for
// the bytes, and the owner takes them back and may write there again once
// the cause (ENOSPC) is gone. Writes fail after a failed Sync, which is
// sticky.
func (f *File) WriteAt(p []byte, pos int64) (int, error) {
	if err := f.Err(); err != nil {
		return 0, err
	}
	if pos < 0 || pos+int64(len(p)) > f.size {
		return 0, fmt.Errorf("segment: write %s [%d,%d): outside the file of size %d", f.path, pos, pos+int64(len(p)), f.size)
	}
	n, err := f.file.WriteAt(p, pos)
	if err == nil && n != len(p) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(p))
	}
	if err != nil {
		return n, fmt.Errorf("segment: write %s at %d: %w", f.path, pos, err)
	}
	return n, nil
}

// ReadAt reads len(p) bytes at position pos (relative to Start). The caller
// decides which positions are readable (normally up to Committed).
func (f *File) ReadAt(p []byte, pos int64) (int, error) {
	if pos < 0 || pos+int64(len(p)) > f.size {
		return 0, fmt.Errorf("segment: read %s [%d,%d): outside the file of size %d", f.path, pos, pos+int64(len(p)), f.size)
	}
	n, err := f.file.ReadAt(p, pos)
	if err != nil && n == len(p) {
		err = nil // io.ReaderAt may report EOF with a full read at the end
	}
	if err != nil {
		return n, fmt.Errorf("segment: read %s at %d: %w", f.path, pos, err)
	}
	return n, nil
}

// Sync makes the written data durable. A failure is sticky:
// after a failed fsync the kernel may have dropped the dirty pages, so no
// later Sync of this file can prove anything (the "fsyncgate" lesson).
func (f *File) Sync() error {
	if err := f.Err(); err != nil {
		return err
	}
	if err := f.file.Sync(); err != nil {
		return f.fail(fmt.Errorf("segment: sync %s: %w", f.path, err))
	}
	return nil
}

// Hold takes a reference so that the file stays open while the caller uses
// it. It fails when the last reference is already gone (the file is closed).
// Every successful Hold must be paired with one Release.
func (f *File) Hold() bool {
	for {
		n := f.refs.Load()
		if n <= 0 {
			return false
		}
		if f.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives back a reference taken by Hold (or the Queue's own one). The
// last Release closes the file and, when it was removed from its Queue,
// deletes it from disk.
func (f *File) Release() {
	n := f.refs.Add(-1)
	if n > 0 {
		return
	}
	if n < 0 {
		panic("segment: Release without Hold on " + f.path)
	}
	err := f.file.Close()
	if err != nil {
		err = fmt.Errorf("segment: close %s: %w", f.path, err)
	}
	if f.removed.Load() && !f.gone.Load() {
		if rerr := f.fs.Remove(f.path); rerr != nil && err == nil {
			err = fmt.Errorf("segment: remove %s: %w", f.path, rerr)
		}
	}
	if f.onLastRelease != nil {
		f.onLastRelease(f, err)
	}
}

// unlinkNow marks the file removed and deletes it from disk at once
// instead of at its last Release: a truncated queue may create a file of
// the same name before a reader releases this one, and the deferred
// removal would then delete the new file. Readers keep reading the
// unlinked file.
func (f *File) unlinkNow() error {
	f.removed.Store(true)
	if err := f.fs.Remove(f.path); err != nil {
		return fmt.Errorf("segment: remove %s: %w", f.path, err)
	}
	f.gone.Store(true)
	return nil
}

// Removed reports whether the file was dropped from its Queue.
func (f *File) Removed() bool { return f.removed.Load() }
