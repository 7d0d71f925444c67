package meta

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/vfs"
)

// configFile is one of the broker's JSON config files, written with
// RocketMQ's protocol (MixAll.string2File, rocketmq-spec.md §6.1) made
// crash safe:
//
//  1. write <file>.tmp and fsync it;
//  2. copy the current <file> to <file>.bak and fsync it;
//  3. rename <file>.tmp over <file> and fsync the directory.
//
// Java deletes <file> before the rename; renaming over it instead means
// <file> never goes missing, so after a crash at any point it holds the old
// or the new content. Loading falls back to <file>.bak when <file> is
// missing, empty or unreadable, so a Java-written directory whose last
// write was torn still loads.
type configFile struct {
	fs   vfs.FS
	path string
	log  *slog.Logger

	// requested counts persist calls. A caller changes the table, then
	// takes a number here, so any snapshot taken after the number was
	// handed out holds that caller's change.
	requested atomic.Uint64
	// mu serializes writes: each takes its snapshot while holding it, so a
	// later snapshot is never overwritten by an earlier one.
	mu sync.Mutex
	// written is the highest request number a finished write covered, and
	// writeErr that write's result. REQUIRES: mu held.
	written  uint64
	writeErr error
}

// persist makes the caller's change durable: it takes a snapshot (the
// caller's table lock is taken and released inside snapshot, so readers
// are never blocked by the file I/O) and writes it. Callers that queue up
// behind a write share the next one (group commit): a burst of topic
// creations costs a few file writes, not one full-table rewrite each.
func (f *configFile) persist(snapshot func() ([]byte, error)) error {
	ticket := f.requested.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.written >= ticket {
		// A write that started after our change was applied covered it.
		return f.writeErr
	}
	covered := f.requested.Load()
	data, err := snapshot()
	if err != nil {
		err = fmt.Errorf("meta: encode %s: %w", f.path, err)
	} else {
		err = writeConfigFile(f.fs, f.path, data)
	}
	f.written, f.writeErr = covered, err
	return err
}

// errCorrupt marks a config file whose content does not decode.
var errCorrupt = errors.New("meta: config file does not decode")

// load reads the file, falling back to the .bak copy, and hands the
// content to decode, which must leave its target untouched on error. It
// reports false when neither file exists (a fresh broker). A file that
// exists but does not decode, with no usable .bak, is an error: starting
// with an empty table would silently forget topics or consumer progress
// (Java starts empty in that case).
func (f *configFile) load(decode func([]byte) error) (bool, error) {
	var firstErr error
	for _, p := range []string{f.path, f.path + ".bak"} {
		data, err := vfs.ReadFile(f.fs, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			firstErr = cmpErr(firstErr, fmt.Errorf("meta: read %s: %w", p, err))
			continue
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		if err := decode(data); err != nil {
			f.log.Warn("meta: config file does not decode, trying the backup", "path", p, "err", err)
			firstErr = cmpErr(firstErr, fmt.Errorf("%w: %s: %w", errCorrupt, p, err))
			continue
		}
		if p != f.path {
			f.log.Warn("meta: loaded the backup config file", "path", p)
		}
		return true, nil
	}
	return false, firstErr
}

func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// writeConfigFile replaces path's content with data (see configFile).
func writeConfigFile(fsys vfs.FS, path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := vfs.MkdirAllSync(fsys, dir, 0o755); err != nil {
		return fmt.Errorf("meta: write %s: %w", path, err)
	}
	if err := writeSyncedFile(fsys, path+".tmp", data); err != nil {
		return err
	}
	prev, err := vfs.ReadFile(fsys, path)
	switch {
	case err == nil:
		if err := writeSyncedFile(fsys, path+".bak", prev); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("meta: read %s for its backup: %w", path, err)
	}
	if err := fsys.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("meta: rename %s.tmp: %w", path, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("meta: sync dir %s: %w", dir, err)
	}
	return nil
}

func writeSyncedFile(fsys vfs.FS, path string, data []byte) error {
	f, err := fsys.Create(path)
	if err != nil {
		return fmt.Errorf("meta: create %s: %w", path, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("meta: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("meta: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("meta: close %s: %w", path, err)
	}
	return nil
}
