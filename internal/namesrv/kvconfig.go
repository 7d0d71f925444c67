package namesrv

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// OrderTopicConfigNamespace is the KV namespace holding each ordered topic's
// "brokerName:queueNums;..." layout, served as orderTopicConf in routes and
// returned to registering brokers.
const OrderTopicConfigNamespace = "ORDER_TOPIC_CONFIG"

// KVStore is the name server's KV configuration (namespace -> key -> value),
// kept in memory and written to a JSON file on every change:
// {"configTable":{"<namespace>":{"<key>":"<value>"}}}.
//
// Writes follow RocketMQ's string2File protocol: the new content goes to
// <file>.tmp (synced), the old content is copied to <file>.bak, then .tmp is
// renamed over <file> and the directory synced. Load falls back to .bak when
// the file is missing, empty or unreadable, so a crash at any step leaves a
// loadable state (the new one or the previous one).
type KVStore struct {
	fs   vfs.FS
	path string

	// persistMu serialises file writes so that a snapshot taken later is
	// never overwritten by one taken earlier. It guards no in-memory state
	// and is the only lock held across file I/O; mu never is.
	persistMu sync.Mutex

	mu struct {
		sync.RWMutex
		table map[string]map[string]string
	}
}

// OpenKVStore loads the KV configuration from path on fsys (an absent file
// is an empty configuration).
func OpenKVStore(fsys vfs.FS, path string) (*KVStore, error) {
	s := &KVStore{fs: fsys, path: path}
	s.mu.table = map[string]map[string]string{}
	table, err := loadKVFile(fsys, path)
	if err != nil {
		return nil, err
	}
	if table != nil {
		s.mu.table = table
	}
	return s, nil
}

// loadKVFile reads path, falling back to path.bak. Both absent is an empty
// (nil) table; content present in neither readable form is an error.
func loadKVFile(fsys vfs.FS, path string) (map[string]map[string]string, error) {
	var firstErr error
	for _, p := range []string{path, path + ".bak"} {
		data, err := vfs.ReadFile(fsys, p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			firstErr = firstError(firstErr, fmt.Errorf("namesrv: kv config: read %s: %w", p, err))
			continue
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var f protocol.KVConfigFile
		if err := protocol.UnmarshalFastJSON(data, &f); err != nil {
			firstErr = firstError(firstErr, fmt.Errorf("namesrv: kv config: parse %s: %w", p, err))
			continue
		}
		if f.ConfigTable == nil {
			f.ConfigTable = map[string]map[string]string{}
		}
		for ns, kv := range f.ConfigTable {
			if kv == nil {
				f.ConfigTable[ns] = map[string]string{}
			}
		}
		return f.ConfigTable, nil
	}
	return nil, firstErr
}

func firstError(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// Path returns the file the store persists to.
func (s *KVStore) Path() string { return s.path }

// Put sets namespace/key to value and persists the table.
func (s *KVStore) Put(namespace, key, value string) error {
	s.mu.Lock()
	kv := s.mu.table[namespace]
	if kv == nil {
		kv = map[string]string{}
		s.mu.table[namespace] = kv
	}
	kv[key] = value
	s.mu.Unlock()
	return s.persist()
}

// Delete removes namespace/key (and the namespace when it becomes empty) and
// persists the table if anything changed.
func (s *KVStore) Delete(namespace, key string) error {
	s.mu.Lock()
	kv := s.mu.table[namespace]
	_, ok := kv[key]
	if ok {
		delete(kv, key)
		if len(kv) == 0 {
			delete(s.mu.table, namespace)
		}
	}
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return s.persist()
}

// Get returns the value of namespace/key.
func (s *KVStore) Get(namespace, key string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.mu.table[namespace][key]
	return v, ok
}

// List returns a copy of one namespace's entries; ok is false when the
// namespace is absent.
func (s *KVStore) List(namespace string) (map[string]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	kv, ok := s.mu.table[namespace]
	if !ok {
		return nil, false
	}
	return maps.Clone(kv), true
}

// snapshot encodes the table. REQUIRES: persistMu held (so snapshots reach
// the file in the order they were taken).
func (s *KVStore) snapshot() ([]byte, error) {
	s.mu.RLock()
	f := protocol.KVConfigFile{ConfigTable: make(map[string]map[string]string, len(s.mu.table))}
	for ns, kv := range s.mu.table {
		f.ConfigTable[ns] = maps.Clone(kv)
	}
	s.mu.RUnlock()
	return protocol.MarshalFastJSON(&f)
}

func (s *KVStore) persist() error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	data, err := s.snapshot()
	if err != nil {
		return fmt.Errorf("namesrv: kv config: encode: %w", err)
	}
	return writeFileSafely(s.fs, s.path, data)
}

// writeFileSafely replaces path's content with data using RocketMQ's
// .tmp/.bak protocol, syncing data and directory entries. Unlike Java it
// renames .tmp over the file instead of deleting the file first, so the file
// never goes missing: after a crash at any point it holds the old or the new
// content (MemFS crash tests check this).
func writeFileSafely(fsys vfs.FS, path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := vfs.MkdirAllSync(fsys, dir, 0o755); err != nil {
		return fmt.Errorf("namesrv: kv config: %w", err)
	}
	if err := writeSynced(fsys, path+".tmp", data); err != nil {
		return err
	}
	prev, err := vfs.ReadFile(fsys, path)
	switch {
	case err == nil:
		if err := writeSynced(fsys, path+".bak", prev); err != nil {
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("namesrv: kv config: read %s: %w", path, err)
	}
	if err := fsys.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("namesrv: kv config: rename %s.tmp: %w", path, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("namesrv: kv config: sync dir %s: %w", dir, err)
	}
	return nil
}

func writeSynced(fsys vfs.FS, path string, data []byte) error {
	f, err := fsys.Create(path)
	if err != nil {
		return fmt.Errorf("namesrv: kv config: create %s: %w", path, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("namesrv: kv config: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("namesrv: kv config: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("namesrv: kv config: close %s: %w", path, err)
	}
	return nil
}
