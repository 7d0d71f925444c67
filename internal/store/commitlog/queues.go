package commitlog

import (
	"maps"
	"strings"
	"sync/atomic"
)

// queueTable holds the next queue offset of every topic queue.
//
// A put finds its queue's cell without the put lock, in a read-only map
// (copy-on-write, loaded atomically), and only increments the cell under
// the lock: the map lookup (hashing the topic, ~25 ns) runs in parallel
// instead of serializing every writer. New queues go through the lock: the
// dirty map then holds every cell (read's and the new ones); it replaces
// read once it has served as many lock-held lookups as it has entries, so
// the copying is amortized O(1) per lookup (sync.Map's scheme).
type queueTable struct {
	read atomic.Pointer[map[queueKey]*queueCell]
	// Guarded by the put lock:
	dirty  map[queueKey]*queueCell // nil, or a superset of read
	misses int
}

type queueKey struct {
	topic   string
	queueID int32
}

// queueCell is one queue's next offset. Guarded by the put lock: a cell is
// read without the lock only as a pointer; removed tells a put holding a
// cell from before RemoveQueueOffsets to look again.
type queueCell struct {
	next    int64
	removed bool
}

func (t *queueTable) init() {
	m := map[queueKey]*queueCell{}
	t.read.Store(&m)
}

// lookup returns the cell of a queue, or nil if it has none yet; the
// caller validates it under the lock (cellLocked).
func (t *queueTable) lookup(key queueKey) *queueCell {
	return (*t.read.Load())[key]
}

// cellLocked returns the live cell of key, creating it: c is the result of
// an earlier lookup (may be nil or removed).
// REQUIRES: put lock held.
func (t *queueTable) cellLocked(key queueKey, c *queueCell) *queueCell {
	if c != nil && !c.removed {
		return c
	}
	read := *t.read.Load()
	if c = read[key]; c != nil {
		return c
	}
	if t.dirty == nil {
		t.dirty = maps.Clone(read)
	}
	if c = t.dirty[key]; c == nil {
		c = new(queueCell)
		// The caller's topic may alias a request buffer: the table keeps
		// its own copy.
		key.topic = strings.Clone(key.topic)
		t.dirty[key] = c
	}
	if t.misses++; t.misses >= len(t.dirty) {
		d := t.dirty
		t.read.Store(&d)
		t.dirty, t.misses = nil, 0
	}
	return c
}

// findLocked returns the live cell of key, or nil.
// REQUIRES: put lock held.
func (t *queueTable) findLocked(key queueKey) *queueCell {
	c := (*t.read.Load())[key]
	if c == nil && t.dirty != nil {
		c = t.dirty[key]
	}
	return c
}

// getLocked returns the next offset of key (0 if unknown).
// REQUIRES: put lock held.
func (t *queueTable) getLocked(key queueKey) int64 {
	if c := t.findLocked(key); c != nil {
		return c.next
	}
	return 0
}

// removeTopicLocked drops every queue of topic: their cells are marked
// removed (puts holding them look again) and a new read map without them
// replaces the old one.
// REQUIRES: put lock held.
func (t *queueTable) removeTopicLocked(topic string) {
	all := t.dirty
	if all == nil {
		all = maps.Clone(*t.read.Load())
	}
	for k, c := range all {
		if k.topic == topic {
			c.removed = true
			delete(all, k)
		}
	}
	t.read.Store(&all)
	t.dirty, t.misses = nil, 0
}

// removeKeyLocked drops one queue, as removeTopicLocked does a topic's.
// REQUIRES: put lock held.
func (t *queueTable) removeKeyLocked(key queueKey) {
	all := t.dirty
	if all == nil {
		all = maps.Clone(*t.read.Load())
	}
	if c := all[key]; c != nil {
		c.removed = true
		delete(all, key)
	}
	t.read.Store(&all)
	t.dirty, t.misses = nil, 0
}

// SetQueueOffset sets the next queue offset of a topic queue (recovery).
func (l *Log) SetQueueOffset(topic string, queueID int32, next int64) {
	l.lock()
	key := queueKey{topic, queueID}
	l.queues.cellLocked(key, l.queues.lookup(key)).next = next
	l.unlock()
}

// QueueOffset returns the next queue offset of a topic queue (0 if unknown).
func (l *Log) QueueOffset(topic string, queueID int32) int64 {
	l.lock()
	defer l.unlock()
	return l.queues.getLocked(queueKey{topic, queueID})
}

// RemoveQueueOffsets forgets every queue of a topic (topic deletion).
func (l *Log) RemoveQueueOffsets(topic string) {
	l.lock()
	defer l.unlock()
	l.queues.removeTopicLocked(topic)
}

// RemoveQueueOffsetIf forgets the next offset of one queue when cond,
// called with it (0 if unknown) under the put lock, so that no put takes
// an offset of that queue meanwhile, returns true. cond must be quick.
func (l *Log) RemoveQueueOffsetIf(topic string, queueID int32, cond func(next int64) bool) bool {
	l.lock()
	defer l.unlock()
	key := queueKey{topic, queueID}
	if !cond(l.queues.getLocked(key)) {
		return false
	}
	l.queues.removeKeyLocked(key)
	return true
}
