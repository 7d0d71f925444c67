package vfs

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemFS is an in-memory FS that remembers what a crash would keep, for crash
// tests. It is safe for concurrent use.
//
// Durability model (what CrashClone keeps), modelled on pebble's crashable
// memory FS and on POSIX, strict where POSIX is strict:
//
//   - File data: every file has a current content and a durable content.
//     File.Sync copies the current content (data and size) into the durable
//     one. A crash keeps only durable content: every WriteAt and Truncate made
//     after the file's last successful Sync is lost, by default entirely
//     (CrashOptions can keep a random subset of the unsynced 4 KiB pages, to
//     produce torn writes).
//   - Directory entries: every directory has a current and a durable set of
//     entries (name -> file or directory). SyncDir(dir) makes the current set
//     of dir durable. A crash keeps only durable entries: a Create, MkdirAll,
//     Rename or Remove whose parent directory was not synced afterwards is
//     undone. A file that was synced but whose name never became durable is
//     lost; a removed file whose removal was not made durable comes back with
//     its durable content. A rename across directories needs both directories
//     synced. The root directory always exists.
//   - Nothing else is durable: open handles, locks and modification times
//     (the clone stamps the crash time) do not survive.
//
// So a store that wants a new file to survive must Sync the file and SyncDir
// its parent, and a directory created by MkdirAll must be made durable in its
// own parent (MkdirAllSync does both).
//
// Paths are slash-separated; relative and absolute names are the same (both
// start at the root), "." and ".." are cleaned lexically. Unlike the OS,
// opening a directory fails (EISDIR): use List.
type MemFS struct {
	mu       sync.Mutex
	root     *memNode
	locks    map[string]bool
	capacity uint64 // 0: unlimited
	used     int64  // bytes held by linked files (their current sizes)
}

var _ FS = (*MemFS)(nil)

// NewMem returns an empty in-memory file system with unlimited capacity.
func NewMem() *MemFS {
	return &MemFS{root: newMemDir(), locks: map[string]bool{}}
}

// memUnlimited is what DiskUsage reports as the total when no capacity is set.
const memUnlimited = 1 << 40

// SetCapacity sets the size of the simulated disk: DiskUsage reports total =
// capacity and free = capacity - bytes held by files, and a WriteAt or
// Truncate that would grow the files past it fails with ENOSPC. 0 removes
// the limit. Tests of disk protection use it (fill, then free space by
// deleting files or by raising the capacity).
func (m *MemFS) SetCapacity(capacity uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.capacity = capacity
}

// SetModTime sets the modification time of the named file or directory, as
// os.Chtimes does; a later write sets it to the wall clock again. Tests of
// retention use it to age files without waiting.
func (m *MemFS) SetModTime(name string, t time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(splitPath(name))
	if err != nil {
		return pathErr("chtimes", name, err)
	}
	n.modTime = t
	return nil
}

// memNode is a file or a directory. All fields are guarded by MemFS.mu.
type memNode struct {
	isDir   bool
	modTime time.Time

	// directory
	children map[string]*memNode // current entries
	durable  map[string]*memNode // entries as of the last SyncDir

	// file
	data    memData            // current content
	synced  memData            // content as of the last Sync
	dirty   map[int64]struct{} // chunks of data changed since the last Sync
	linked  bool               // reachable by a name (counts towards used)
	openers int                // open handles (informational)
}

func newMemDir() *memNode {
	return &memNode{isDir: true, modTime: time.Now(), children: map[string]*memNode{}, durable: map[string]*memNode{}}
}

func newMemFile() *memNode {
	return &memNode{modTime: time.Now(), data: newMemData(), synced: newMemData(), dirty: map[int64]struct{}{}, linked: true}
}

// splitPath cleans name and returns its components below the root.
func splitPath(name string) []string {
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

func pathErr(op, name string, err error) error { return &os.PathError{Op: op, Path: name, Err: err} }

// lookupLocked walks to the node named by parts. REQUIRES: m.mu held.
func (m *MemFS) lookupLocked(parts []string) (*memNode, error) {
	n := m.root
	for _, p := range parts {
		if !n.isDir {
			return nil, syscall.ENOTDIR
		}
		c, ok := n.children[p]
		if !ok {
			return nil, syscall.ENOENT
		}
		n = c
	}
	return n, nil
}

// parentLocked returns the directory holding the last component of parts.
// REQUIRES: m.mu held.
func (m *MemFS) parentLocked(parts []string) (*memNode, string, error) {
	if len(parts) == 0 {
		return nil, "", syscall.EINVAL // the root has no parent
	}
	dir, err := m.lookupLocked(parts[:len(parts)-1])
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, parts[len(parts)-1], nil
}

// resizeLocked changes a file's current size, keeping the used-bytes count
// and the capacity limit. REQUIRES: m.mu held.
func (m *MemFS) resizeLocked(n *memNode, size int64) error {
	grow := size - n.data.size
	if n.linked && grow > 0 && m.capacity > 0 && uint64(m.used+grow) > m.capacity {
		return syscall.ENOSPC
	}
	n.data.truncate(size, n.dirty)
	if n.linked {
		m.used += grow
	}
	n.modTime = time.Now()
	return nil
}

// unlinkLocked drops a node's claim on disk space once no name refers to it.
// REQUIRES: m.mu held.
func (m *MemFS) unlinkLocked(n *memNode) {
	if n.isDir {
		for _, c := range n.children {
			m.unlinkLocked(c)
		}
		return
	}
	if n.linked {
		m.used -= n.data.size
		n.linked = false
	}
}

func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(splitPath(name))
	if err != nil {
		return nil, pathErr("create", name, err)
	}
	n, ok := dir.children[base]
	switch {
	case ok && n.isDir:
		return nil, pathErr("create", name, syscall.EISDIR)
	case ok:
		if err := m.resizeLocked(n, 0); err != nil {
			return nil, pathErr("create", name, err)
		}
	default:
		n = newMemFile()
		dir.children[base] = n
		dir.modTime = time.Now()
	}
	n.openers++
	return &memFile{fs: m, n: n, name: name}, nil
}

func (m *MemFS) open(name string, readOnly bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(splitPath(name))
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	if n.isDir {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	n.openers++
	return &memFile{fs: m, n: n, name: name, readOnly: readOnly}, nil
}

func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open(name, false) }
func (m *MemFS) Open(name string) (File, error)          { return m.open(name, true) }

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(splitPath(name))
	if err != nil {
		return pathErr("remove", name, err)
	}
	n, ok := dir.children[base]
	if !ok {
		return pathErr("remove", name, syscall.ENOENT)
	}
	if n.isDir && len(n.children) > 0 {
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(dir.children, base)
	dir.modTime = time.Now()
	m.unlinkLocked(n)
	return nil
}

func (m *MemFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := splitPath(name)
	if len(parts) == 0 {
		for k, c := range m.root.children {
			m.unlinkLocked(c)
			delete(m.root.children, k)
		}
		return nil
	}
	dir, base, err := m.parentLocked(parts)
	if err != nil {
		if err == syscall.ENOENT {
			return nil // like os.RemoveAll: a missing path is not an error
		}
		return pathErr("removeall", name, err)
	}
	if n, ok := dir.children[base]; ok {
		delete(dir.children, base)
		dir.modTime = time.Now()
		m.unlinkLocked(n)
	}
	return nil
}

func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldParts, newParts := splitPath(oldname), splitPath(newname)
	odir, obase, err := m.parentLocked(oldParts)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	n, ok := odir.children[obase]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOENT}
	}
	ndir, nbase, err := m.parentLocked(newParts)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if n.isDir && len(newParts) > len(oldParts) && strings.Join(newParts[:len(oldParts)], "/") == strings.Join(oldParts, "/") {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EINVAL}
	}
	if target, ok := ndir.children[nbase]; ok {
		if target == n {
			return nil
		}
		switch {
		case target.isDir && !n.isDir:
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EISDIR}
		case !target.isDir && n.isDir:
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOTDIR}
		case target.isDir && len(target.children) > 0:
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOTEMPTY}
		}
		m.unlinkLocked(target)
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	now := time.Now()
	odir.modTime, ndir.modTime = now, now
	return nil
}

func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.root
	for _, p := range splitPath(dir) {
		c, ok := n.children[p]
		if !ok {
			c = newMemDir()
			n.children[p] = c
			n.modTime = time.Now()
		} else if !c.isDir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		n = c
	}
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(splitPath(dir))
	if err != nil {
		return nil, pathErr("readdir", dir, err)
	}
	if !n.isDir {
		return nil, pathErr("readdir", dir, syscall.ENOTDIR)
	}
	names := make([]string, 0, len(n.children))
	for k := range n.children {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := splitPath(name)
	n, err := m.lookupLocked(parts)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	base := "/"
	if len(parts) > 0 {
		base = parts[len(parts)-1]
	}
	return n.infoLocked(base), nil
}

func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(splitPath(dir))
	if err != nil {
		return pathErr("fsync", dir, err)
	}
	if !n.isDir {
		return pathErr("fsync", dir, syscall.ENOTDIR)
	}
	n.durable = make(map[string]*memNode, len(n.children))
	for k, c := range n.children {
		n.durable[k] = c
	}
	return nil
}

func (m *MemFS) DiskUsage(name string) (DiskSpace, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.lookupLocked(splitPath(name)); err != nil {
		return DiskSpace{}, pathErr("statfs", name, err)
	}
	d := DiskSpace{Total: m.capacity, Used: uint64(m.used)}
	if d.Total == 0 {
		d.Total = memUnlimited
	}
	if d.Used < d.Total {
		d.Avail = d.Total - d.Used
	}
	return d, nil
}

func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := splitPath(name)
	key := strings.Join(parts, "/")
	dir, base, err := m.parentLocked(parts)
	if err != nil {
		return nil, pathErr("lock", name, err)
	}
	if n, ok := dir.children[base]; !ok {
		dir.children[base] = newMemFile()
	} else if n.isDir {
		return nil, pathErr("lock", name, syscall.EISDIR)
	}
	if m.locks[key] {
		return nil, fmt.Errorf("vfs: lock %s: %w", name, ErrLocked)
	}
	m.locks[key] = true
	return &memLock{fs: m, key: key}, nil
}

type memLock struct {
	fs   *MemFS
	key  string
	once sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		delete(l.fs.locks, l.key)
		l.fs.mu.Unlock()
	})
	return nil
}

func (n *memNode) infoLocked(name string) os.FileInfo {
	fi := memFileInfo{name: name, modTime: n.modTime, isDir: n.isDir}
	if !n.isDir {
		fi.size = n.data.size
	}
	return fi
}

type memFileInfo struct {
	name    string
	size    int64
	modTime time.Time
	isDir   bool
}

func (fi memFileInfo) Name() string       { return fi.name }
func (fi memFileInfo) Size() int64        { return fi.size }
func (fi memFileInfo) ModTime() time.Time { return fi.modTime }
func (fi memFileInfo) IsDir() bool        { return fi.isDir }
func (fi memFileInfo) Sys() any           { return nil }
func (fi memFileInfo) Mode() os.FileMode {
	if fi.isDir {
		return os.ModeDir | 0o755
	}
	return filePerm
}

// CrashOptions tune what CrashCloneWith keeps beyond the durable state.
type CrashOptions struct {
	// UnsyncedPagePercent is the chance (0-100) that each 4 KiB page written
	// since its file's last Sync reached the disk anyway, as the kernel's
	// write-back would do at random. 0 keeps none (the default crash).
	UnsyncedPagePercent int
	// TornPages, with UnsyncedPagePercent, keeps only a random prefix of
	// 512-byte sectors of each kept page (the rest keeps its durable bytes):
	// a write torn inside a page, as a disk without atomic page writes may
	// leave it.
	TornPages bool
	// Rand picks the pages; nil uses a fixed seed, so a test is reproducible.
	Rand *rand.Rand
}

// memSector is the unit a torn page is cut at.
const memSector = 512

// CrashClone returns the file system as it would be found after a power loss
// at this instant: only durable content and durable directory entries (see
// MemFS). m itself is unchanged and independent of the clone: writers still
// running against m cannot affect it.
func (m *MemFS) CrashClone() *MemFS { return m.CrashCloneWith(CrashOptions{}) }

// CrashCloneWith is CrashClone with a chance of keeping unsynced pages.
func (m *MemFS) CrashCloneWith(opts CrashOptions) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	rng := opts.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	c := &MemFS{locks: map[string]bool{}, capacity: m.capacity}
	c.root = c.crashCopyLocked(m.root, opts, rng)
	return c
}

// crashCopyLocked builds the post-crash copy of n. REQUIRES: the source FS's
// mu held (the receiver c is not shared yet).
func (c *MemFS) crashCopyLocked(n *memNode, opts CrashOptions, rng *rand.Rand) *memNode {
	now := time.Now()
	if n.isDir {
		d := newMemDir()
		d.modTime = now
		names := make([]string, 0, len(n.durable))
		for k := range n.durable {
			names = append(names, k)
		}
		sort.Strings(names) // a fixed order keeps a seeded crash reproducible
		for _, k := range names {
			cc := c.crashCopyLocked(n.durable[k], opts, rng)
			d.children[k] = cc
			d.durable[k] = cc
		}
		return d
	}
	f := newMemFile()
	f.modTime = now
	f.data = n.synced.clone()
	if keepPct := opts.UnsyncedPagePercent; keepPct > 0 && len(n.dirty) > 0 {
		idxs := make([]int64, 0, len(n.dirty))
		for i := range n.dirty {
			idxs = append(idxs, i)
		}
		sort.Slice(idxs, func(a, b int) bool { return idxs[a] < idxs[b] })
		for _, i := range idxs {
			if rng.IntN(100) >= keepPct {
				continue
			}
			// The page reached the disk: its current bytes replace the
			// durable ones, and the file is at least long enough to hold it.
			var page [memChunk]byte // the durable bytes, then the new ones over them
			if old := f.data.chunks[i]; old != nil {
				page = *old
			}
			var cur [memChunk]byte
			if src := n.data.chunks[i]; src != nil {
				cur = *src
			}
			keep := memChunk
			if opts.TornPages {
				keep = rng.IntN(memChunk/memSector+1) * memSector
			}
			copy(page[:keep], cur[:keep])
			f.data.chunks[i] = &page
			if end := min((i+1)*memChunk, n.data.size); end > f.data.size {
				f.data.size = end
			}
		}
		f.data.zeroBeyondSize()
	}
	f.synced = f.data.clone()
	c.used += f.data.size
	return f
}

// memFile is an open handle on a MemFS file. Like an OS descriptor it keeps
// working on the file after the name is removed.
type memFile struct {
	fs       *MemFS
	n        *memNode
	name     string
	readOnly bool
	closed   bool // guarded by fs.mu
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, pathErr("read", f.name, os.ErrClosed)
	}
	if off < 0 {
		return 0, pathErr("read", f.name, syscall.EINVAL)
	}
	n := f.n.data.readAt(p, off)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, pathErr("write", f.name, os.ErrClosed)
	}
	if f.readOnly {
		return 0, pathErr("write", f.name, syscall.EBADF)
	}
	if off < 0 {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	if end := off + int64(len(p)); end > f.n.data.size {
		if err := f.fs.resizeLocked(f.n, end); err != nil {
			return 0, pathErr("write", f.name, err)
		}
	}
	f.n.data.writeAt(p, off, f.n.dirty)
	f.n.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("truncate", f.name, os.ErrClosed)
	}
	if f.readOnly {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	if err := f.fs.resizeLocked(f.n, size); err != nil {
		return pathErr("truncate", f.name, err)
	}
	return nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("fdatasync", f.name, os.ErrClosed)
	}
	f.n.syncLocked()
	return nil
}

// syncLocked makes the file's current content durable. REQUIRES: fs.mu held.
func (n *memNode) syncLocked() {
	for i := range n.dirty {
		if src := n.data.chunks[i]; src != nil {
			dst := n.synced.chunks[i]
			if dst == nil {
				dst = new([memChunk]byte)
				n.synced.chunks[i] = dst
			}
			*dst = *src
		} else {
			delete(n.synced.chunks, i)
		}
		delete(n.dirty, i)
	}
	n.synced.size = n.data.size
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, pathErr("stat", f.name, os.ErrClosed)
	}
	return f.n.data.size, nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, os.ErrClosed)
	}
	f.closed = true
	f.n.openers--
	return nil
}
