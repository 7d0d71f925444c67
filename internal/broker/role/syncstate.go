package role

import (
	"slices"
	"time"
)

// replicaProgress is what a master knows of one replica of its set at a
// check: how far its CommitLog reaches and the newest epoch in its epoch
// file (from GET_BROKER_EPOCH_CACHE); Reached is false when the replica
// did not answer.
type replicaProgress struct {
	ID        int64
	MaxOffset int64
	LastEpoch int32
	Reached   bool
}

// syncStateTracker makes a master's SyncStateSet decisions, as Java's
// AutoSwitchHAService.maybeShrinkSyncStateSet and
// maybeExpandInSyncStateSet do them:
//
//   - a replica is caught up at a check when it holds everything the
//     master held at the check before (or at this one), and follows the
//     master's epoch (a returning old master still holding its own
//     epoch's tail is not, whatever its offset);
//   - a member not caught up for longer than haMaxTimeSlaveNotCatchup
//     leaves the set; a member is given that long from the moment this
//     broker became master (Java drops members not yet connected at the
//     first check; waiting costs nothing in safety: only sends wait);
//   - a replica outside the set joins once it holds the confirm offset
//     (the smallest end among the members but the master: everything a
//     send answered under allAckInSyncStateSet reached) and reaches into
//     the master's epoch.
//
// It holds no lock: the controller loop alone calls it.
type syncStateTracker struct {
	self   int64
	epoch  int32         // the master epoch
	start  int64         // the offset the epoch starts at
	maxLag time.Duration // haMaxTimeSlaveNotCatchup

	caughtUp map[int64]time.Time
	prevEnd  int64
	prevAt   time.Time
}

func newSyncStateTracker(self int64, epoch int32, start int64, maxLag time.Duration, members []int64, now time.Time) *syncStateTracker {
	t := &syncStateTracker{self: self, epoch: epoch, start: start, maxLag: maxLag, caughtUp: map[int64]time.Time{}, prevEnd: -1}
	for _, id := range members {
		t.caughtUp[id] = now
	}
	return t
}

// adopt gives members the tracker has not seen (a set the controller
// changed) the full haMaxTimeSlaveNotCatchup from now.
func (t *syncStateTracker) adopt(members []int64, now time.Time) {
	for _, id := range members {
		if _, ok := t.caughtUp[id]; !ok && id != t.self {
			t.caughtUp[id] = now
		}
	}
}

// decide records the replicas' progress at now (the master's CommitLog
// ending at end) and returns the SyncStateSet it should have, sorted,
// and whether that differs from cur.
func (t *syncStateTracker) decide(now time.Time, end int64, cur []int64, replicas []replicaProgress) ([]int64, bool) {
	for _, p := range replicas {
		if !p.Reached || p.ID == t.self || p.LastEpoch != t.epoch {
			continue
		}
		switch {
		case p.MaxOffset >= end:
			t.caughtUp[p.ID] = now
		case t.prevEnd >= 0 && p.MaxOffset >= t.prevEnd:
			if t.prevAt.After(t.caughtUp[p.ID]) {
				t.caughtUp[p.ID] = t.prevAt
			}
		}
	}
	t.prevEnd, t.prevAt = end, now

	next := []int64{t.self}
	confirm := end
	for _, id := range cur {
		if id == t.self {
			continue
		}
		if at, ok := t.caughtUp[id]; ok && now.Sub(at) <= t.maxLag {
			next = append(next, id)
		}
	}
	for _, p := range replicas {
		if slices.Contains(next, p.ID) && p.ID != t.self && p.Reached {
			confirm = min(confirm, p.MaxOffset)
		}
	}
	for _, p := range replicas {
		if !p.Reached || p.ID == t.self || slices.Contains(next, p.ID) || slices.Contains(cur, p.ID) {
			continue
		}
		if p.LastEpoch == t.epoch && p.MaxOffset >= confirm && p.MaxOffset >= t.start {
			next = append(next, p.ID)
			t.caughtUp[p.ID] = now
		}
	}
	slices.Sort(next)
	sorted := slices.Sorted(slices.Values(cur))
	return next, !slices.Equal(next, sorted)
}
