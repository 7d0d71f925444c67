package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirAllSync creates dir and its missing parents and makes every new
// directory entry durable (SyncDir of each parent that gained one), so that
// files later created and synced inside dir survive a crash.
func MkdirAllSync(fsys FS, dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	// Find the deepest existing ancestor; everything below it is new.
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("vfs: mkdir %s: %w", dir, err)
		}
		missing = append(missing, d)
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("vfs: mkdir %s: %w", dir, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(missing[i])); err != nil {
			return fmt.Errorf("vfs: mkdir %s: %w", dir, err)
		}
	}
	return nil
}

// WriteFileAtomic replaces name with data so that after a crash the file
// holds either its old content or data, never a mix: it writes name+".tmp",
// syncs it, renames it over name and syncs the directory.
func WriteFileAtomic(fsys FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("vfs: write %s: %w", name, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("vfs: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("vfs: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("vfs: close %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return fmt.Errorf("vfs: rename %s: %w", tmp, err)
	}
	if err := fsys.SyncDir(filepath.Dir(name)); err != nil {
		return fmt.Errorf("vfs: sync dir of %s: %w", name, err)
	}
	return nil
}

// ReadFile returns the whole content of name.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return nil, fmt.Errorf("vfs: read %s: %w", name, err)
	}
	return buf[:n], nil
}
