package meta

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// topicGroup is the key of the offset table; the file writes it as
// "topic@group" (topic first).
type topicGroup struct{ topic, group string }

func (k topicGroup) String() string { return k.topic + topicGroupSeparator + k.group }

const topicGroupSeparator = "@"

// Offsets is the broker's consumer offset table (Java's
// ConsumerOffsetManager): topic@group -> queueId -> next offset to consume.
// It is persisted to config/consumerOffset.json by Persist, which the
// broker calls periodically (StartAutoPersist) and on shutdown (Close).
// Safe for concurrent use; readers never wait for file I/O.
type Offsets struct {
	file *configFile
	log  *slog.Logger

	mu struct {
		sync.RWMutex
		table map[topicGroup]map[int32]int64
		// changedAt is the value of changes after the last change of each
		// key (absent: unchanged since open), so a slave can be sent only
		// what changed since the version it holds (SnapshotSince).
		changedAt map[topicGroup]uint64
		// resets holds the offsets an admin reset (INVOKE_BROKER_TO_RESET_OFFSET,
		// server side) that the queue's next pull has not yet handed to
		// its consumer; not persisted (Java's resetOffsetTable).
		resets map[topicGroup]map[int32]int64
	}
	// epoch tells this open table from any other (ns at open): a change
	// count means nothing across a restart.
	epoch int64
	// changes counts mutations; it is incremented under mu (write).
	// persisted is its value at the last successful persist (guarded by
	// file.mu), so an idle table is not rewritten every 5 s.
	changes   atomic.Uint64
	persisted uint64
	// pendingResets counts the entries of mu.resets, so that the pull and
	// commit paths skip the table (and its lock) when no reset waits.
	pendingResets atomic.Int64
	wroteOnce     bool
	auto          autoPersist
}

// OpenOffsets loads config/consumerOffset.json (or its .bak). Keys without
// '@' cannot be told apart and are dropped with a warning.
func OpenOffsets(opts Options) (*Offsets, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	o := &Offsets{file: opts.file(ConsumerOffsetFile), log: opts.Logger, epoch: opts.Now().UnixNano()}
	o.mu.table = map[topicGroup]map[int32]int64{}
	o.mu.changedAt = map[topicGroup]uint64{}
	o.mu.resets = map[topicGroup]map[int32]int64{}
	_, err := o.file.load(func(data []byte) error {
		var f protocol.ConsumerOffsetTable
		if err := protocol.UnmarshalFastJSON(data, &f); err != nil {
			return err
		}
		table := make(map[topicGroup]map[int32]int64, len(f.OffsetTable))
		for key, queues := range f.OffsetTable {
			topic, group, ok := strings.Cut(key, topicGroupSeparator)
			if !ok {
				o.log.Warn("meta: consumer offset key without '@' dropped", "key", key)
				continue
			}
			if queues == nil {
				queues = map[int32]int64{}
			}
			table[topicGroup{topic, group}] = queues
		}
		o.mu.table = table
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meta: consumer offsets: %w", err)
	}
	return o, nil
}

// Commit records the next offset group will consume from a queue
// (UPDATE_CONSUMER_OFFSET, or a pull carrying the commit-offset flag). Like
// Java it accepts any value, also one lower than the stored offset (a
// reset).
func (o *Offsets) Commit(group, topic string, queueID int32, offset int64) {
	k := topicGroup{topic, group}
	o.mu.Lock()
	queues, ok := o.mu.table[k]
	if !ok {
		queues = make(map[int32]int64, 8)
		o.mu.table[k] = queues
	}
	queues[queueID] = offset
	o.mu.changedAt[k] = o.changes.Add(1)
	o.mu.Unlock()
}

// Query returns the committed offset of group on a queue; ok=false when
// none is stored (the caller answers QUERY_NOT_FOUND unless the queue
// starts at 0 in memory, rocketmq-spec.md §13.3). A stored negative value
// is returned as it is; Java treats it as not found too.
func (o *Offsets) Query(group, topic string, queueID int32) (offset int64, ok bool) {
	o.mu.RLock()
	offset, ok = o.mu.table[topicGroup{topic, group}][queueID]
	o.mu.RUnlock()
	return offset, ok
}

// QueryAll returns a copy of group's offsets on every queue of topic (nil
// when none).
func (o *Offsets) QueryAll(group, topic string) map[int32]int64 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return maps.Clone(o.mu.table[topicGroup{topic, group}])
}

// Clone copies srcGroup's offsets on topic to dstGroup, replacing
// dstGroup's (CLONE_GROUP_OFFSET). It reports whether srcGroup had any.
func (o *Offsets) Clone(srcGroup, dstGroup, topic string) bool {
	o.mu.Lock()
	src, ok := o.mu.table[topicGroup{topic, srcGroup}]
	if ok {
		dst := topicGroup{topic, dstGroup}
		o.mu.table[dst] = maps.Clone(src)
		o.mu.changedAt[dst] = o.changes.Add(1)
	}
	o.mu.Unlock()
	return ok
}

// Delete removes group's offsets on topic and reports whether there were
// any.
func (o *Offsets) Delete(group, topic string) bool {
	return o.deleteWhere(func(k topicGroup) bool { return k.topic == topic && k.group == group }) > 0
}

// DeleteTopic removes every group's offsets on topic (after the topic is
// deleted) and returns how many groups had some.
func (o *Offsets) DeleteTopic(topic string) int {
	return o.deleteWhere(func(k topicGroup) bool { return k.topic == topic })
}

// DeleteGroup removes group's offsets on every topic (after the group is
// deleted) and returns how many topics had some.
func (o *Offsets) DeleteGroup(group string) int {
	return o.deleteWhere(func(k topicGroup) bool { return k.group == group })
}

func (o *Offsets) deleteWhere(match func(topicGroup) bool) int {
	n := 0
	o.mu.Lock()
	for k := range o.mu.table {
		if match(k) {
			delete(o.mu.table, k)
			delete(o.mu.changedAt, k)
			n++
		}
	}
	for k, pending := range o.mu.resets {
		if match(k) {
			o.pendingResets.Add(-int64(len(pending)))
			delete(o.mu.resets, k)
		}
	}
	if n > 0 {
		o.changes.Add(1)
	}
	o.mu.Unlock()
	return n
}

// GroupsOfTopic returns the groups with offsets on topic, sorted
// (whichGroupByTopic).
func (o *Offsets) GroupsOfTopic(topic string) []string {
	return o.collect(func(k topicGroup) (string, bool) { return k.group, k.topic == topic })
}

// TopicsOfGroup returns the topics group has offsets on, sorted
// (whichTopicByConsumer).
func (o *Offsets) TopicsOfGroup(group string) []string {
	return o.collect(func(k topicGroup) (string, bool) { return k.topic, k.group == group })
}

// Groups returns every group with offsets, sorted (GET_ALL_CONSUMER_OFFSET
// users, mqadmin consumerProgress without a group).
func (o *Offsets) Groups() []string {
	return o.collect(func(k topicGroup) (string, bool) { return k.group, true })
}

func (o *Offsets) collect(pick func(topicGroup) (string, bool)) []string {
	set := map[string]struct{}{}
	o.mu.RLock()
	for k := range o.mu.table {
		if s, ok := pick(k); ok {
			set[s] = struct{}{}
		}
	}
	o.mu.RUnlock()
	return slices.Sorted(maps.Keys(set))
}

// MinOffsets returns, per queue of topic, the lowest committed offset over
// all groups except those in exclude, ignoring offsets below the queue's
// minimum in the store (minInStore; they point at deleted data). It answers
// QUERY_CORRECTION_OFFSET (Java's queryMinOffsetInAllGroup, without its
// side effect of dropping the excluded groups' offsets).
func (o *Offsets) MinOffsets(topic string, exclude []string, minInStore func(queueID int32) int64) map[int32]int64 {
	out := map[int32]int64{}
	o.mu.RLock()
	defer o.mu.RUnlock()
	for k, queues := range o.mu.table {
		if k.topic != topic || slices.Contains(exclude, k.group) {
			continue
		}
		for q, off := range queues {
			if off < minInStore(q) {
				continue
			}
			if cur, ok := out[q]; !ok || off < cur {
				out[q] = off
			}
		}
	}
	return out
}

// DropUnsubscribed removes the offsets of every topic@group that no online
// consumer subscribes to (subscribed reports false) and whose committed
// offsets all lie at or below the queue's minimum in the store (minInStore):
// progress that no longer means anything. The broker runs it hourly (Java's
// scanUnsubscribedTopic). The callbacks run under the table's lock and must
// not call back into o. It returns the removed "topic@group" keys.
func (o *Offsets) DropUnsubscribed(subscribed func(group, topic string) bool, minInStore func(topic string, queueID int32) int64) []string {
	var dropped []string
	o.mu.Lock()
	for k, queues := range o.mu.table {
		if len(queues) == 0 || subscribed(k.group, k.topic) {
			continue
		}
		stale := true
		for q, off := range queues {
			if off > minInStore(k.topic, q) {
				stale = false
				break
			}
		}
		if stale {
			delete(o.mu.table, k)
			delete(o.mu.changedAt, k)
			dropped = append(dropped, k.String())
		}
	}
	if len(dropped) > 0 {
		o.changes.Add(1)
	}
	o.mu.Unlock()
	if len(dropped) > 0 {
		slices.Sort(dropped)
		o.log.Warn("meta: dropped offsets of unsubscribed groups behind the store", "keys", dropped)
	}
	return dropped
}

// Snapshot returns a copy of the table in its file form (the body of
// GET_ALL_CONSUMER_OFFSET).
func (o *Offsets) Snapshot() protocol.ConsumerOffsetTable {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.snapshotLocked()
}

// REQUIRES: o.mu held (read).
func (o *Offsets) snapshotLocked() protocol.ConsumerOffsetTable {
	table := make(map[string]map[int32]int64, len(o.mu.table))
	for k, queues := range o.mu.table {
		table[k.String()] = maps.Clone(queues)
	}
	return protocol.ConsumerOffsetTable{OffsetTable: table}
}

// OffsetsVersion identifies a state of an open offset table: Epoch is
// fixed while it is open, Changes counts its mutations.
type OffsetsVersion struct {
	Epoch   int64
	Changes uint64
}

// Version is the table's current version.
func (o *Offsets) Version() OffsetsVersion {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return OffsetsVersion{Epoch: o.epoch, Changes: o.changes.Load()}
}

// SnapshotSince is Snapshot for a slave that holds the table as it was at
// since: when since is a version of this open table, only the keys
// committed or cloned after it (delta=true; possibly none). Keys deleted
// since are not reported: a slave keeps offsets the master dropped, as
// Java's slave does (it merges the master's table into its own). A
// version of another epoch, or one ahead of the table, gets the whole
// table (delta=false). v is the version the snapshot reflects.
func (o *Offsets) SnapshotSince(since OffsetsVersion) (snap protocol.ConsumerOffsetTable, v OffsetsVersion, delta bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	v = OffsetsVersion{Epoch: o.epoch, Changes: o.changes.Load()}
	if since.Epoch != o.epoch || since.Changes > v.Changes {
		return o.snapshotLocked(), v, false
	}
	table := map[string]map[int32]int64{}
	if since.Changes < v.Changes {
		for k, at := range o.mu.changedAt {
			if at > since.Changes {
				table[k.String()] = maps.Clone(o.mu.table[k])
			}
		}
	}
	return protocol.ConsumerOffsetTable{OffsetTable: table}, v, true
}

// Persist writes config/consumerOffset.json if anything changed since the
// last successful persist (the first call always writes).
func (o *Offsets) Persist() error {
	o.file.mu.Lock()
	defer o.file.mu.Unlock()
	// Read the counter before the snapshot: a change racing with it is
	// either in this snapshot or makes the next Persist write again.
	changes := o.changes.Load()
	if o.wroteOnce && changes == o.persisted {
		return nil
	}
	data, err := protocol.MarshalFastJSONPretty(o.Snapshot())
	if err != nil {
		return fmt.Errorf("meta: encode %s: %w", o.file.path, err)
	}
	if err := writeConfigFile(o.file.fs, o.file.path, data); err != nil {
		return err
	}
	o.persisted, o.wroteOnce = changes, true
	return nil
}

// StartAutoPersist starts the goroutine that persists every interval (the
// broker uses flushConsumerOffsetInterval, 5 s). Close stops it.
func (o *Offsets) StartAutoPersist(interval time.Duration) error {
	return o.auto.start(ConsumerOffsetFile, interval, o.Persist, o.log)
}

// Close stops the auto-persist goroutine and persists a last time. Later
// calls do nothing and return nil; the table stays readable.
func (o *Offsets) Close() error {
	if !o.auto.stop() {
		return nil
	}
	return o.Persist()
}
