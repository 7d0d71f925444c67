package stats

import (
	"strings"
	"sync"
	"sync/atomic"
)

// entry is the counters and windows of one stats key (a topic, a
// group@topic, or the broker).
type entry struct {
	c counter
	// system: the entry's topic is a system topic (decided once, at
	// creation: the broker's system topics do not change while it runs).
	system bool

	mu                sync.Mutex // guards the windows (sampler vs readers)
	minute, hour, day window
}

func newEntry() *entry {
	return &entry{
		minute: newWindow(minutePeriod, minuteKeep),
		hour:   newWindow(hourPeriod, hourKeep),
		day:    newWindow(dayPeriod, dayKeep),
	}
}

// groupKey names a group@topic entry.
type groupKey struct{ group, topic string }

// table maps keys to entries. Reads are one atomic load and a map lookup
// (no lock, no allocation); a new key copies the map under mu. Keys are
// created once per topic or group and never removed while the broker
// runs, so the copies cost O(keys²) over a broker's life, paid at first
// use of each key, never on a send of a known topic.
type table[K comparable] struct {
	mu sync.Mutex
	m  atomic.Pointer[map[K]*entry]
	// system tells whether a new key's topic is a system topic.
	system func(K) bool
}

func (t *table[K]) get(k K) *entry {
	if m := t.m.Load(); m != nil {
		if e := (*m)[k]; e != nil {
			return e
		}
	}
	return t.create(k)
}

// create adds k (cloned: the caller's strings may alias a request buffer).
func (t *table[K]) create(k K) *entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.m.Load()
	if old != nil {
		if e := (*old)[k]; e != nil {
			return e
		}
	}
	n := make(map[K]*entry, 1+lenOf(old))
	if old != nil {
		for key, e := range *old {
			n[key] = e
		}
	}
	e := newEntry()
	if t.system != nil {
		e.system = t.system(k)
	}
	n[cloneKey(k)] = e
	t.m.Store(&n)
	return e
}

// lookup returns k's entry without creating it.
func (t *table[K]) lookup(k K) (*entry, bool) {
	m := t.m.Load()
	if m == nil {
		return nil, false
	}
	e, ok := (*m)[k]
	return e, ok
}

// each calls fn for every entry (a snapshot of the map: keys created
// meanwhile may be missed).
func (t *table[K]) each(fn func(K, *entry)) {
	m := t.m.Load()
	if m == nil {
		return
	}
	for k, e := range *m {
		fn(k, e)
	}
}

func lenOf[K comparable](m *map[K]*entry) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

func cloneKey[K comparable](k K) K {
	switch v := any(k).(type) {
	case string:
		return any(strings.Clone(v)).(K)
	case groupKey:
		return any(groupKey{strings.Clone(v.group), strings.Clone(v.topic)}).(K)
	}
	return k
}
