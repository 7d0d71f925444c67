package vfs

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// sparsePage is the allocation unit of SparseFS (a file system block).
const sparsePage = 4096

// SparseFS wraps an FS to model a small disk the way ext4 or xfs fills: a
// file's size costs nothing (Truncate makes a hole), a write takes a block
// for each page it touches for the first time, and a write that needs more
// blocks than are left writes the prefix that fits and fails with ENOSPC
// (a short write, as pwrite(2) does). DiskUsage reports the blocks taken
// against the capacity; Remove gives a file's blocks back. Tests of disk
// protection use it: the committed bytes of a CommitLog segment sized with
// ftruncate are what fills the disk.
//
// Only what is written through the SparseFS counts; renames keep a file's
// blocks. Capacity 0 means unlimited.
type SparseFS struct {
	FS

	mu       sync.Mutex
	capacity int64
	used     int64
	pages    map[string]map[int64]bool // clean path -> pages holding data
}

// NewSparse wraps inner with a disk of capacity bytes.
func NewSparse(inner FS, capacity int64) *SparseFS {
	return &SparseFS{FS: inner, capacity: capacity, pages: map[string]map[int64]bool{}}
}

// SetCapacity changes the size of the disk (a test frees space by raising it).
func (s *SparseFS) SetCapacity(capacity int64) {
	s.mu.Lock()
	s.capacity = capacity
	s.mu.Unlock()
}

// Used returns the bytes of the blocks taken.
func (s *SparseFS) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

func (s *SparseFS) Create(name string) (File, error) {
	f, err := s.FS.Create(name)
	if err != nil {
		return nil, err
	}
	s.drop(name) // truncated to zero: its blocks are free
	return &sparseFile{File: f, fs: s, key: filepath.Clean(name)}, nil
}

func (s *SparseFS) OpenReadWrite(name string) (File, error) {
	f, err := s.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return &sparseFile{File: f, fs: s, key: filepath.Clean(name)}, nil
}

func (s *SparseFS) Remove(name string) error {
	if err := s.FS.Remove(name); err != nil {
		return err
	}
	s.drop(name)
	return nil
}

func (s *SparseFS) RemoveAll(name string) error {
	if err := s.FS.RemoveAll(name); err != nil {
		return err
	}
	prefix := filepath.Clean(name) + string(filepath.Separator)
	s.mu.Lock()
	for k, p := range s.pages {
		if k == filepath.Clean(name) || len(k) > len(prefix) && k[:len(prefix)] == prefix {
			s.used -= int64(len(p)) * sparsePage
			delete(s.pages, k)
		}
	}
	s.mu.Unlock()
	return nil
}

func (s *SparseFS) Rename(oldname, newname string) error {
	if err := s.FS.Rename(oldname, newname); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, n := filepath.Clean(oldname), filepath.Clean(newname)
	if p, ok := s.pages[n]; ok {
		s.used -= int64(len(p)) * sparsePage
	}
	if p, ok := s.pages[o]; ok {
		s.pages[n] = p
		delete(s.pages, o)
	} else {
		delete(s.pages, n)
	}
	return nil
}

func (s *SparseFS) DiskUsage(path string) (DiskSpace, error) {
	if _, err := s.FS.Stat(path); err != nil {
		return DiskSpace{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	total := s.capacity
	if total == 0 {
		total = memUnlimited
	}
	avail := max(total-s.used, 0)
	return DiskSpace{Total: uint64(total), Used: uint64(s.used), Avail: uint64(avail)}, nil
}

func (s *SparseFS) drop(name string) {
	s.mu.Lock()
	if p, ok := s.pages[filepath.Clean(name)]; ok {
		s.used -= int64(len(p)) * sparsePage
		delete(s.pages, filepath.Clean(name))
	}
	s.mu.Unlock()
}

// allocate takes the blocks for a write of n bytes at off and returns how
// many of the bytes may be written: all of them, or the prefix before the
// first page no block was left for.
func (s *SparseFS) allocate(key string, off int64, n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	pages := s.pages[key]
	if pages == nil {
		pages = map[int64]bool{}
		s.pages[key] = pages
	}
	end := off + int64(n)
	for p := off / sparsePage; p*sparsePage < end; p++ {
		if pages[p] {
			continue
		}
		if s.capacity > 0 && s.used+sparsePage > s.capacity {
			return int(max(p*sparsePage-off, 0))
		}
		pages[p] = true
		s.used += sparsePage
	}
	return n
}

type sparseFile struct {
	File
	fs  *SparseFS
	key string
}

func (f *sparseFile) WriteAt(p []byte, off int64) (int, error) {
	n := f.fs.allocate(f.key, off, len(p))
	if n < len(p) {
		w, err := f.File.WriteAt(p[:n], off)
		if err != nil {
			return w, err
		}
		return w, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(p, off)
}

func (f *sparseFile) Truncate(size int64) error {
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	// Pages past the new end are given back.
	f.fs.mu.Lock()
	for p := range f.fs.pages[f.key] {
		if p*sparsePage >= size {
			delete(f.fs.pages[f.key], p)
			f.fs.used -= sparsePage
		}
	}
	f.fs.mu.Unlock()
	return nil
}

// Writeback passes the hint on when the inner file takes it.
func (f *sparseFile) Writeback(off, n int64, wait bool) error {
	return Writeback(f.File, off, n, wait)
}

var (
	_ FS        = (*SparseFS)(nil)
	_ io.Closer = (*sparseFile)(nil)
)
