package fdcache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/vfs"
)

// ErrForgotten is returned by operations on a File after Forget.
var ErrForgotten = errors.New("fdcache: file forgotten")

// ErrClosed is returned by operations after Cache.Close.
var ErrClosed = errors.New("fdcache: cache closed")

// MinMax is the smallest cap New accepts: below it a handful of concurrent
// users (dispatch, flush, pulls) would keep the cache over its cap.
const MinMax = 4

// Stats are the cache's counters.
type Stats struct {
	Open      int   // descriptors open now
	PeakOpen  int   // most descriptors open at once since New
	Opens     int64 // descriptors opened (Create included)
	Evictions int64 // idle descriptors closed to stay within Max
}

// Cache is an LRU of open descriptors over an FS, shared by every File it
// hands out. All methods are safe for concurrent use.
type Cache struct {
	fs  vfs.FS
	max int

	mu       sync.Mutex
	reserved int   // descriptors open or being opened, closing ones excluded
	osOpen   int   // descriptors the OS has open for us
	peak     int   // max of osOpen
	opens    int64 // OS opens
	evicted  int64
	closed   bool
	idle     File // sentinel of the idle list: idle.next is the most recently used
}

// New returns a cache that keeps at most max (at least MinMax) files of fsys
// open.
func New(fsys vfs.FS, limit int) *Cache {
	c := &Cache{fs: fsys, max: max(limit, MinMax)}
	c.idle.next, c.idle.prev = &c.idle, &c.idle
	return c
}

// Max is the cap on open descriptors.
func (c *Cache) Max() int { return c.max }

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Open: c.osOpen, PeakOpen: c.peak, Opens: c.opens, Evictions: c.evicted}
}

// File returns the File for an existing path; nothing is opened yet.
func (c *Cache) File(path string) *File { return &File{c: c, path: path} }

// Create creates (or truncates) path and returns its File, held: the caller
// must Release it.
func (c *Cache) Create(path string) (*File, error) {
	f := &File{c: c, path: path}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("fdcache: create %s: %w", path, ErrClosed)
	}
	f.refs = 1
	victims := c.reserveLocked(f)
	c.mu.Unlock()
	c.closeAll(victims)
	vf, err := c.fs.Create(path)
	c.opened(f, vf, err)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Close closes every idle descriptor (syncing written files first) and
// refuses further opens; files in use are closed on their last Release.
// It returns the errors of the syncs and closes.
func (c *Cache) Close() error {
	c.mu.Lock()
	c.closed = true
	var victims []*File
	for c.idle.prev != &c.idle {
		victims = append(victims, c.evictLocked(c.idle.prev))
	}
	c.mu.Unlock()
	var errs []error
	for _, f := range victims {
		if err := c.closeFile(f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reserveLocked counts a descriptor about to be opened for f (held, busy
// while opening) and picks the idle files to close first so that no more
// than max are open. REQUIRES: c.mu held.
func (c *Cache) reserveLocked(f *File) []*File {
	f.busy = make(chan struct{})
	c.reserved++
	return c.victimsLocked()
}

// victimsLocked takes idle files, least recently used first, off the idle
// list while more than max are reserved. REQUIRES: c.mu held.
func (c *Cache) victimsLocked() []*File {
	var victims []*File
	for c.reserved > c.max && c.idle.prev != &c.idle {
		victims = append(victims, c.evictLocked(c.idle.prev))
		c.evicted++
	}
	return victims
}

// evictLocked takes idle f off the list and marks it closing. REQUIRES: c.mu
// held, f idle and open.
func (c *Cache) evictLocked(f *File) *File {
	f.unlink()
	f.busy = make(chan struct{})
	c.reserved--
	return f
}

// opened records the outcome of opening f's descriptor. REQUIRES: f busy,
// reserved, c.mu not held.
func (c *Cache) opened(f *File, vf vfs.File, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := f.busy
	f.busy = nil
	close(ch)
	if err != nil {
		c.reserved--
		f.refs--
		return
	}
	f.vf = vf
	c.opens++
	c.osOpen++
	c.peak = max(c.peak, c.osOpen)
}

func (c *Cache) closeAll(victims []*File) {
	for _, f := range victims {
		// An eviction's error is sticky on its file (reported by its next
		// Sync); nobody waits for it here.
		_ = c.closeFile(f)
	}
}

// closeFile syncs f if it was written since its last sync (unless
// forgotten), closes its descriptor and ends its busy state. REQUIRES: f
// busy (closing), c.mu not held.
func (c *Cache) closeFile(f *File) error {
	var err error
	if w := f.writes.Load(); w != f.synced.Load() && !f.isForgotten() {
		if err = f.vf.Sync(); err != nil {
			err = fmt.Errorf("fdcache: sync %s before close: %w", f.path, err)
		} else {
			f.synced.Store(w)
		}
	}
	if cerr := f.vf.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("fdcache: close %s: %w", f.path, cerr)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f.vf = nil
	c.osOpen--
	if err != nil && f.err == nil && !f.forgotten {
		f.err = err
	}
	ch := f.busy
	f.busy = nil
	close(ch)
	return err
}

// File is one file known to a Cache: a path and, while open, a descriptor.
// Its methods open the file when needed; Hold keeps it open across several
// of them.
type File struct {
	c    *Cache
	path string

	// guarded by c.mu
	vf        vfs.File      // nil while closed
	refs      int           // users holding the file open
	busy      chan struct{} // non-nil while its descriptor is being opened or closed
	forgotten bool
	err       error // sticky failure of a sync or close at eviction
	prev      *File // idle list links (set while open, unheld and not busy)
	next      *File

	// writes counts completed writes; synced is the count a successful
	// Sync covered (it read the count before its fsync began).
	writes atomic.Uint64
	synced atomic.Uint64
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

func (f *File) unlink() {
	f.prev.next, f.next.prev = f.next, f.prev
	f.prev, f.next = nil, nil
}

func (f *File) isForgotten() bool {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return f.forgotten
}

// Hold opens the file if needed and keeps it open until Release. Every
// successful Hold must be paired with one Release.
func (f *File) Hold() error {
	_, err := f.get()
	return err
}

// Release gives back a Hold.
func (f *File) Release() { f.put() }

// get holds f and returns its descriptor, opening it if needed.
func (f *File) get() (vfs.File, error) {
	c := f.c
	c.mu.Lock()
	for {
		switch {
		case f.forgotten:
			c.mu.Unlock()
			return nil, fmt.Errorf("fdcache: %s: %w", f.path, ErrForgotten)
		case c.closed:
			c.mu.Unlock()
			return nil, fmt.Errorf("fdcache: %s: %w", f.path, ErrClosed)
		case f.busy != nil:
			ch := f.busy
			c.mu.Unlock()
			<-ch
			c.mu.Lock()
			continue
		}
		break
	}
	if f.vf != nil {
		if f.refs == 0 {
			f.unlink()
		}
		f.refs++
		vf := f.vf
		c.mu.Unlock()
		return vf, nil
	}
	f.refs++
	victims := c.reserveLocked(f)
	c.mu.Unlock()
	c.closeAll(victims)
	vf, err := c.fs.OpenReadWrite(f.path)
	c.opened(f, vf, err)
	if err != nil {
		return nil, fmt.Errorf("fdcache: open %s: %w", f.path, err)
	}
	return vf, nil
}

// put gives back a hold taken by get; the last one makes the file idle (or
// closes it when forgotten or the cache is closed).
func (f *File) put() {
	c := f.c
	c.mu.Lock()
	f.refs--
	if f.refs < 0 {
		c.mu.Unlock()
		panic("fdcache: Release without Hold on " + f.path)
	}
	if f.refs > 0 || f.vf == nil {
		c.mu.Unlock()
		return
	}
	var victims []*File
	if f.forgotten || c.closed {
		f.busy = make(chan struct{})
		c.reserved--
		victims = []*File{f}
	} else {
		// Most recently used: at the front.
		f.prev, f.next = &c.idle, c.idle.next
		c.idle.next.prev = f
		c.idle.next = f
		victims = c.victimsLocked()
	}
	c.mu.Unlock()
	c.closeAll(victims)
}

// ReadAt reads at off (see io.ReaderAt).
func (f *File) ReadAt(b []byte, off int64) (int, error) {
	vf, err := f.get()
	if err != nil {
		return 0, err
	}
	defer f.put()
	return vf.ReadAt(b, off)
}

// WriteAt writes at off; the file is dirty until the next successful Sync.
func (f *File) WriteAt(b []byte, off int64) (int, error) {
	vf, err := f.get()
	if err != nil {
		return 0, err
	}
	defer f.put()
	n, err := vf.WriteAt(b, off)
	// Counted once done: a Sync that reads the count before this write
	// completes must not take it for synced.
	f.writes.Add(1)
	return n, err
}

// Truncate sets the file's size; the file is dirty until the next Sync.
func (f *File) Truncate(size int64) error {
	vf, err := f.get()
	if err != nil {
		return err
	}
	defer f.put()
	err = vf.Truncate(size)
	f.writes.Add(1)
	return err
}

// Size returns the file's size.
func (f *File) Size() (int64, error) {
	vf, err := f.get()
	if err != nil {
		return 0, err
	}
	defer f.put()
	return vf.Size()
}

// Sync makes the file's writes durable. A closed file has nothing to sync
// (it was synced when closed), so Sync does not reopen it; a failed sync or
// close at eviction is reported by every later Sync.
func (f *File) Sync() error {
	c := f.c
	c.mu.Lock()
	for f.busy != nil {
		ch := f.busy
		c.mu.Unlock()
		<-ch
		c.mu.Lock()
	}
	switch {
	case f.err != nil:
		err := f.err
		c.mu.Unlock()
		return err
	case f.forgotten:
		c.mu.Unlock()
		return fmt.Errorf("fdcache: sync %s: %w", f.path, ErrForgotten)
	case f.vf == nil || f.writes.Load() == f.synced.Load():
		c.mu.Unlock()
		return nil
	}
	// Open and dirty: hold it (no reopening) for the sync.
	if f.refs == 0 {
		f.unlink()
	}
	f.refs++
	vf := f.vf
	c.mu.Unlock()
	defer f.put()
	w := f.writes.Load()
	if err := vf.Sync(); err != nil {
		err = fmt.Errorf("fdcache: sync %s: %w", f.path, err)
		c.mu.Lock()
		if f.err == nil {
			f.err = err
		}
		c.mu.Unlock()
		return err
	}
	for {
		s := f.synced.Load()
		if s >= w || f.synced.CompareAndSwap(s, w) {
			return nil
		}
	}
}

// Forget drops the file from the cache for good, before it is deleted: it
// is closed now when idle (unsynced data is abandoned), else on its last
// Release. Later operations fail with ErrForgotten.
func (f *File) Forget() {
	c := f.c
	c.mu.Lock()
	f.forgotten = true
	var victims []*File
	if f.refs == 0 && f.vf != nil && f.busy == nil {
		victims = []*File{c.evictLocked(f)}
	}
	c.mu.Unlock()
	c.closeAll(victims)
}
