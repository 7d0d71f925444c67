package client

import (
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// Locks is Java's RebalanceLockManager: which client of a consumer group
// owns each message queue, for orderly consumers (LOCK_BATCH_MQ and
// UNLOCK_BATCH_MQ, rocketmq-spec.md §4.6). A lock lives maxLive after its
// last renewal; a live lock belongs to its owner only, an expired one goes
// to whoever asks next. Safe for concurrent use.
type Locks struct {
	maxLive time.Duration
	now     func() time.Time

	mu     sync.Mutex
	groups map[string]map[protocol.MessageQueue]*lockEntry
}

type lockEntry struct {
	clientID   string
	lastUpdate time.Time
}

// NewLocks returns an empty lock table; now is the clock (time.Now when nil).
func NewLocks(maxLive time.Duration, now func() time.Time) *Locks {
	if now == nil {
		now = time.Now
	}
	return &Locks{maxLive: maxLive, now: now, groups: make(map[string]map[protocol.MessageQueue]*lockEntry)}
}

func (e *lockEntry) expired(now time.Time, maxLive time.Duration) bool {
	return now.Sub(e.lastUpdate) > maxLive
}

// TryLockBatch locks, for clientID, every queue of mqs that is unowned,
// already its own, or whose owner's lock expired, renewing those it already
// held; it returns the queues clientID now holds, in the order of mqs (the
// LockBatchResponseBody's lockOKMQSet). Queues live-locked by another
// client are left out.
func (l *Locks) TryLockBatch(group, clientID string, mqs []protocol.MessageQueue) []protocol.MessageQueue {
	now := l.now()
	locked := make([]protocol.MessageQueue, 0, len(mqs))
	l.mu.Lock()
	defer l.mu.Unlock()
	table := l.groups[group]
	for _, mq := range mqs {
		e := table[mq]
		switch {
		case e == nil:
			if table == nil {
				table = make(map[protocol.MessageQueue]*lockEntry)
				l.groups[strings.Clone(group)] = table
			}
			mq = cloneQueue(mq)
			table[mq] = &lockEntry{clientID: strings.Clone(clientID), lastUpdate: now}
		case e.clientID == clientID:
			e.lastUpdate = now
		case e.expired(now, l.maxLive):
			e.clientID, e.lastUpdate = strings.Clone(clientID), now
		default:
			continue // held by another live client
		}
		locked = append(locked, mq)
	}
	return locked
}

// UnlockBatch releases the queues of mqs that clientID owns; queues of
// other owners are left alone.
func (l *Locks) UnlockBatch(group, clientID string, mqs []protocol.MessageQueue) {
	l.mu.Lock()
	defer l.mu.Unlock()
	table := l.groups[group]
	for _, mq := range mqs {
		if e := table[mq]; e != nil && e.clientID == clientID {
			delete(table, mq)
		}
	}
	if table != nil && len(table) == 0 {
		delete(l.groups, group)
	}
}

// IsLocked reports whether clientID holds a live lock on mq.
func (l *Locks) IsLocked(group, clientID string, mq protocol.MessageQueue) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.groups[group][mq]
	return e != nil && e.clientID == clientID && !e.expired(now, l.maxLive)
}

// Owner returns the client holding a live lock on mq, if any.
func (l *Locks) Owner(group string, mq protocol.MessageQueue) (string, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.groups[group][mq]
	if e == nil || e.expired(now, l.maxLive) {
		return "", false
	}
	return e.clientID, true
}

// dropExpired forgets expired locks so the table does not keep every queue
// ever locked (Java keeps them; an expired entry behaves as a missing one).
func (l *Locks) dropExpired() {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for g, table := range l.groups {
		for mq, e := range table {
			if e.expired(now, l.maxLive) {
				delete(table, mq)
			}
		}
		if len(table) == 0 {
			delete(l.groups, g)
		}
	}
}

// cloneQueue copies the strings of a queue kept as a map key: the request
// body they came from must not stay reachable through the table.
func cloneQueue(mq protocol.MessageQueue) protocol.MessageQueue {
	mq.Topic, mq.BrokerName = strings.Clone(mq.Topic), strings.Clone(mq.BrokerName)
	return mq
}
