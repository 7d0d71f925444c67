package consumequeue

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rocketd/rocketd/internal/store/fdcache"
	"github.com/rocketd/rocketd/internal/vfs"
)

// DirName is the ConsumeQueue directory under the store root.
const DirName = "consumequeue"

// Set is every ConsumeQueue of a store: <dir>/<topic>/<queueId>/.
type Set struct {
	dir  string
	opts Options
	// ownFiles: opts.Files was made by OpenSet, and Close closes it.
	ownFiles bool

	mu struct {
		sync.RWMutex
		queues map[string]map[int32]*Queue
	}
}

// OpenSet loads every queue under dir (the store's consumequeue directory).
// Directories whose name is not a decimal queue id are ignored. Call Recover
// before use.
func OpenSet(dir string, o Options) (*Set, error) {
	o.ensureDefaults()
	s := &Set{dir: dir, opts: o}
	if s.opts.Files == nil {
		s.opts.Files = fdcache.New(o.FS, DefaultMaxOpenFiles)
		s.ownFiles = true
	}
	o = s.opts
	s.mu.queues = map[string]map[int32]*Queue{}
	if err := vfs.MkdirAllSync(o.FS, dir, 0o755); err != nil {
		return nil, fmt.Errorf("consumequeue: mkdir %s: %w", dir, err)
	}
	topics, err := o.FS.List(dir)
	if err != nil {
		return nil, fmt.Errorf("consumequeue: list %s: %w", dir, err)
	}
	for _, topic := range topics {
		tdir := filepath.Join(dir, topic)
		st, err := o.FS.Stat(tdir)
		if err != nil || !st.IsDir() {
			continue
		}
		ids, err := o.FS.List(tdir)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("consumequeue: list %s: %w", tdir, err)
		}
		for _, name := range ids {
			id, err := strconv.ParseInt(name, 10, 32)
			if err != nil || id < 0 {
				continue
			}
			q, err := openQueue(filepath.Join(tdir, name), topic, int32(id), o)
			if err != nil {
				s.Close()
				return nil, err
			}
			if s.mu.queues[topic] == nil {
				s.mu.queues[topic] = map[int32]*Queue{}
			}
			s.mu.queues[topic][int32(id)] = q
		}
	}
	return s, nil
}

// Get returns the queue or nil.
func (s *Set) Get(topic string, queueID int32) *Queue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.mu.queues[topic][queueID]
}

// GetOrCreate returns the queue, creating an empty one (no file yet). topic
// may alias a transient buffer: a new queue keeps its own copy.
func (s *Set) GetOrCreate(topic string, queueID int32) *Queue {
	if q := s.Get(topic, queueID); q != nil {
		return q
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.mu.queues[topic][queueID]; q != nil {
		return q
	}
	topic = strings.Clone(topic) // the caller's string may alias a read buffer
	q := createQueue(filepath.Join(s.dir, topic, strconv.Itoa(int(queueID))), topic, queueID, s.opts)
	if s.mu.queues[topic] == nil {
		s.mu.queues[topic] = map[int32]*Queue{}
	}
	s.mu.queues[topic][queueID] = q
	return q
}

// snapshot returns all queues in no particular order: the per-queue loops
// below need no order, and sorting 100,000 queues on every flush costs
// tens of milliseconds.
func (s *Set) snapshot() []*Queue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, m := range s.mu.queues {
		n += len(m)
	}
	out := make([]*Queue, 0, n)
	for _, m := range s.mu.queues {
		for _, q := range m {
			out = append(out, q)
		}
	}
	return out
}

// FirstUnsynced returns the lowest CommitLog offset a committed but not
// yet synced unit of any queue points at (ok false when there is none):
// the units of every record below it are durable.
func (s *Set) FirstUnsynced() (phys int64, ok bool, err error) {
	for _, q := range s.snapshot() {
		p, dirty, err := q.FirstUnsynced()
		if err != nil {
			return 0, false, err
		}
		if dirty && (!ok || p < phys) {
			phys, ok = p, true
		}
	}
	return phys, ok, nil
}

// FlushLaggards fully syncs up to limit queues whose first unsynced unit
// points below phys (queues a partial flush leaves behind because they
// grow slowly) and reports how many it synced. It tries them all before
// reporting the first error.
func (s *Set) FlushLaggards(phys int64, limit int) (int, error) {
	n := 0
	var errs []error
	for _, q := range s.snapshot() {
		if n >= limit {
			break
		}
		p, dirty, err := q.FirstUnsynced()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !dirty || p >= phys {
			continue
		}
		if err := q.Flush(0); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Dirty reports whether any queue has committed units not yet flushed.
func (s *Set) Dirty() bool {
	for _, q := range s.snapshot() {
		if q.Dirty() {
			return true
		}
	}
	return false
}

// Queues returns a snapshot of all queues, ordered by topic then queue id.
func (s *Set) Queues() []*Queue {
	s.mu.RLock()
	var out []*Queue
	for _, m := range s.mu.queues {
		for _, q := range m {
			out = append(out, q)
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].queueID < out[j].queueID
	})
	return out
}

// Topics returns the queue ids per topic.
func (s *Set) Topics() map[string][]int32 {
	out := map[string][]int32{}
	for _, q := range s.Queues() {
		out[q.topic] = append(out[q.topic], q.queueID)
	}
	return out
}

// Recover recovers every queue and returns the largest CommitLog end any of
// them references (0 if none).
func (s *Set) Recover() (maxPhysic int64, err error) {
	for _, q := range s.snapshot() {
		if err := q.Recover(); err != nil {
			return 0, err
		}
		maxPhysic = max(maxPhysic, q.MaxPhysicOffset())
	}
	return maxPhysic, nil
}

// Truncate truncates every queue to units whose record ends at or before phyEnd.
func (s *Set) Truncate(phyEnd int64) error {
	for _, q := range s.snapshot() {
		if err := q.Truncate(phyEnd); err != nil {
			return err
		}
	}
	return nil
}

// DeleteBelow deletes, in every queue, the files wholly below phyMin and
// recomputes the min offsets. It returns the number of files deleted.
func (s *Set) DeleteBelow(phyMin int64) (int, error) {
	total := 0
	for _, q := range s.snapshot() {
		n, err := q.DeleteBelow(phyMin)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// CorrectMinOffsets recomputes every queue's min offset against phyMin.
func (s *Set) CorrectMinOffsets(phyMin int64) error {
	for _, q := range s.snapshot() {
		if err := q.CorrectMinOffset(phyMin); err != nil {
			return err
		}
	}
	return nil
}

// Flush flushes every queue (see Queue.Flush); it reports the first error
// but tries every queue.
func (s *Set) Flush(leastPages int) error {
	queues := s.snapshot()
	var errs []error
	if err := s.syncDirs(queues); err != nil {
		errs = append(errs, err)
	}
	for _, q := range queues {
		if err := q.Flush(leastPages); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncDirs makes the entries of the files created since the last flush
// durable, syncing each directory once however many queues share it, parents
// before children.
func (s *Set) syncDirs(queues []*Queue) error {
	type created struct {
		q   *Queue
		gen int64
	}
	var pending []created
	var levels [3][]string
	seen := map[string]bool{}
	for _, q := range queues {
		gen := q.dirGen.Load()
		if gen == q.dirSynced.Load() {
			continue
		}
		pending = append(pending, created{q, gen})
		for i, d := range q.dirs() {
			if !seen[d] {
				seen[d] = true
				levels[i] = append(levels[i], d)
			}
		}
	}
	for _, dirs := range levels {
		for _, d := range dirs {
			// A directory gone meanwhile belonged to a removed topic.
			if err := s.opts.FS.SyncDir(d); err != nil && !isNotExist(err) {
				return fmt.Errorf("consumequeue: sync dir %s: %w", d, err)
			}
		}
	}
	for _, c := range pending {
		c.q.markDirsSynced(c.gen)
	}
	return nil
}

// RemoveTopic destroys every queue of topic.
func (s *Set) RemoveTopic(topic string) error {
	s.mu.Lock()
	m := s.mu.queues[topic]
	delete(s.mu.queues, topic)
	s.mu.Unlock()
	var errs []error
	for _, q := range m {
		if err := q.Destroy(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.opts.FS.RemoveAll(filepath.Join(s.dir, topic)); err != nil {
		errs = append(errs, fmt.Errorf("consumequeue: remove topic %s: %w", topic, err))
	}
	return errors.Join(errs...)
}

// DetachIf drops the queue from the set when cond, checked under the
// set's lock, holds for it, and returns it (nil otherwise); a topic left
// without queues is dropped too. The caller then deletes its files with
// DestroyDetached, outside its own locks.
func (s *Set) DetachIf(topic string, queueID int32, cond func(*Queue) bool) *Queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.mu.queues[topic][queueID]
	if q == nil || !cond(q) {
		return nil
	}
	delete(s.mu.queues[topic], queueID)
	if len(s.mu.queues[topic]) == 0 {
		delete(s.mu.queues, topic)
	}
	return q
}

// DestroyDetached deletes the files of a queue DetachIf returned, and its
// topic's directory when nothing is left in it (a queue created since
// keeps it).
func (s *Set) DestroyDetached(q *Queue) error {
	return errors.Join(q.Destroy(), s.removeEmptyDir(filepath.Join(s.dir, q.topic)))
}

// removeEmptyDir removes dir if it holds nothing.
func (s *Set) removeEmptyDir(dir string) error {
	names, err := s.opts.FS.List(dir)
	if err != nil || len(names) > 0 {
		return nil // gone already, or refilled
	}
	if err := s.opts.FS.Remove(dir); err != nil {
		return fmt.Errorf("consumequeue: remove %s: %w", dir, err)
	}
	return nil
}

// Destroy deletes every queue (the CommitLog is empty).
func (s *Set) Destroy() error {
	var errs []error
	for topic := range s.Topics() {
		if err := s.RemoveTopic(topic); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close drops every queue's files without flushing them (their descriptors
// close now, or when their readers finish), then closes the Files cache
// if OpenSet made it.
func (s *Set) Close() error {
	for _, q := range s.snapshot() {
		q.closeFiles()
	}
	if s.ownFiles {
		return s.opts.Files.Close()
	}
	return nil
}

// Options returns the options the set creates queues with.
func (s *Set) Options() Options { return s.opts }
