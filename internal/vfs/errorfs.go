package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// ErrInjected is the error (wrapped with the operation and path) that an
// ErrorFS returns when its Injector decides an operation fails.
var ErrInjected = errors.New("vfs: injected error")

// OpKind is one kind of file-system operation, a bit so that kinds combine
// into a set (OpWrite|OpSync).
type OpKind uint32

// The operation kinds an Injector sees.
const (
	OpCreate OpKind = 1 << iota
	OpOpen          // Open and OpenReadWrite
	OpRemove        // Remove and RemoveAll
	OpRename
	OpMkdir
	OpList
	OpStat
	OpSyncDir
	OpDiskUsage
	OpLock
	OpRead // File.ReadAt
	OpWrite
	OpSync
	OpTruncate
	OpSize
	OpClose

	// OpMutating is every kind that changes what is (or will be) on disk:
	// the set a "crash at the k-th write" test counts.
	OpMutating = OpCreate | OpRemove | OpRename | OpMkdir | OpSyncDir | OpWrite | OpSync | OpTruncate
	// OpAll is every kind.
	OpAll = OpClose<<1 - 1
)

var opNames = [...]string{"create", "open", "remove", "rename", "mkdir", "list", "stat", "syncdir",
	"diskusage", "lock", "read", "write", "sync", "truncate", "size", "close"}

func (k OpKind) String() string {
	var parts []string
	for i, n := range opNames {
		if k&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Op describes one operation offered to an Injector.
type Op struct {
	Kind OpKind
	Path string // the file or directory operated on (the old name for Rename)
}

// Injector decides whether an operation fails. MaybeError is called before
// the operation reaches the inner FS, from any goroutine; a non-nil result is
// returned to the caller (ErrorFS wraps it with the operation and path) and
// the operation is not performed.
type Injector interface {
	MaybeError(op Op) error
}

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(op Op) error

// MaybeError calls f.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// ErrorFS wraps an FS and lets an Injector fail any operation, including the
// operations on files it opened.
type ErrorFS struct {
	inner FS
	inj   Injector
}

var _ FS = (*ErrorFS)(nil)

// NewErrorFS wraps inner with the injector inj.
func NewErrorFS(inner FS, inj Injector) *ErrorFS { return &ErrorFS{inner: inner, inj: inj} }

func (e *ErrorFS) check(kind OpKind, name string) error {
	if err := e.inj.MaybeError(Op{Kind: kind, Path: name}); err != nil {
		return fmt.Errorf("vfs: %s %s: %w", kind, name, err)
	}
	return nil
}

func (e *ErrorFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

func (e *ErrorFS) Create(name string) (File, error) {
	if err := e.check(OpCreate, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.Create(name))
}

func (e *ErrorFS) OpenReadWrite(name string) (File, error) {
	if err := e.check(OpOpen, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.OpenReadWrite(name))
}

func (e *ErrorFS) Open(name string) (File, error) {
	if err := e.check(OpOpen, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.Open(name))
}

func (e *ErrorFS) Remove(name string) error {
	if err := e.check(OpRemove, name); err != nil {
		return err
	}
	return e.inner.Remove(name)
}

func (e *ErrorFS) RemoveAll(name string) error {
	if err := e.check(OpRemove, name); err != nil {
		return err
	}
	return e.inner.RemoveAll(name)
}

func (e *ErrorFS) Rename(oldname, newname string) error {
	if err := e.check(OpRename, oldname); err != nil {
		return err
	}
	return e.inner.Rename(oldname, newname)
}

func (e *ErrorFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.check(OpMkdir, dir); err != nil {
		return err
	}
	return e.inner.MkdirAll(dir, perm)
}

func (e *ErrorFS) List(dir string) ([]string, error) {
	if err := e.check(OpList, dir); err != nil {
		return nil, err
	}
	return e.inner.List(dir)
}

func (e *ErrorFS) Stat(name string) (os.FileInfo, error) {
	if err := e.check(OpStat, name); err != nil {
		return nil, err
	}
	return e.inner.Stat(name)
}

func (e *ErrorFS) SyncDir(dir string) error {
	if err := e.check(OpSyncDir, dir); err != nil {
		return err
	}
	return e.inner.SyncDir(dir)
}

func (e *ErrorFS) DiskUsage(name string) (DiskSpace, error) {
	if err := e.check(OpDiskUsage, name); err != nil {
		return DiskSpace{}, err
	}
	return e.inner.DiskUsage(name)
}

func (e *ErrorFS) Lock(name string) (io.Closer, error) {
	if err := e.check(OpLock, name); err != nil {
		return nil, err
	}
	return e.inner.Lock(name)
}

// errorFile routes a file's operations through the injector.
type errorFile struct {
	File
	fs *ErrorFS
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *errorFile) Sync() error {
	if err := f.fs.check(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *errorFile) Truncate(size int64) error {
	if err := f.fs.check(OpTruncate, f.Name()); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *errorFile) Size() (int64, error) {
	if err := f.fs.check(OpSize, f.Name()); err != nil {
		return 0, err
	}
	return f.File.Size()
}

// Close always closes the inner file (a leaked descriptor helps no test);
// an injected error is reported after it.
func (f *errorFile) Close() error {
	injected := f.fs.check(OpClose, f.Name())
	err := f.File.Close()
	if injected != nil {
		return injected
	}
	return err
}

// Trigger is a counting Injector: it counts the operations whose kind is in
// its set and fails according to its mode once the count reaches n (0-based:
// n = 0 is the first matching operation). A test iterates n = 0, 1, 2, ...
// until a run ends with Fired() false, which means the workload did fewer
// than n+1 matching operations and every failure point has been visited.
type Trigger struct {
	kinds OpKind
	n     int64
	mode  triggerMode

	mu    sync.Mutex
	count int64
	fired bool
}

type triggerMode int

const (
	failOnce   triggerMode = iota // only the n-th matching op fails
	failFrom                      // the n-th and every later matching op fail
	crashWorld                    // the n-th matching op and every later op of any kind fail
)

// FailNth fails only the n-th operation of the given kinds.
func FailNth(kinds OpKind, n int64) *Trigger { return &Trigger{kinds: kinds, n: n, mode: failOnce} }

// FailFrom fails the n-th operation of the given kinds and every later one of
// those kinds (a disk that went bad and stays bad).
func FailFrom(kinds OpKind, n int64) *Trigger { return &Trigger{kinds: kinds, n: n, mode: failFrom} }

// CrashAt stops the world at the n-th operation of the given kinds: that
// operation and every later operation of any kind fail, so nothing more
// reaches the inner FS. With a MemFS underneath, the test then takes
// mem.CrashClone() as the image a crash at that point would leave, and
// reopens the store on it. Typical: CrashAt(OpMutating, k).
func CrashAt(kinds OpKind, n int64) *Trigger { return &Trigger{kinds: kinds, n: n, mode: crashWorld} }

// MaybeError implements Injector.
func (t *Trigger) MaybeError(op Op) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fired && t.mode == crashWorld {
		return ErrInjected
	}
	if op.Kind&t.kinds == 0 {
		return nil
	}
	i := t.count
	t.count++
	switch {
	case i == t.n:
		t.fired = true
		return ErrInjected
	case i > t.n && t.mode == failFrom:
		return ErrInjected
	}
	return nil
}

// Count returns how many operations of the trigger's kinds it has seen
// (including failed ones).
func (t *Trigger) Count() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count
}

// Fired reports whether the trigger point was reached.
func (t *Trigger) Fired() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fired
}
