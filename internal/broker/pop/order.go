package pop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/vfs"
)

// OrderInfoFile is the orderly pops' state file in the config directory.
const OrderInfoFile = "consumerOrderInfo.json"

// orderInfo is ConsumerOrderInfoManager: for each topic@group and queue,
// the batch an orderly pop handed out last, which of its messages are
// acked, and how often each was handed out. A queue is blocked (its next
// messages not handed out) while the batch has an unacked message still
// invisible.
type orderInfo struct {
	fs   vfs.FS
	path string
	mu   sync.Mutex
	// changed: the table differs from the file.
	changed bool
	// table: "topic@group" -> queue id -> state (Java's JSON layout).
	table map[string]map[int32]*orderQueue
}

// orderQueue is Java's OrderInfo. OffsetList holds the first offset and
// then each other offset's distance from it.
type orderQueue struct {
	PopTime               int64           `json:"popTime"`
	InvisibleTime         int64           `json:"invisibleTime"`
	OffsetList            []int64         `json:"offsetList"`
	OffsetNextVisibleTime map[int64]int64 `json:"offsetNextVisibleTime"`
	OffsetConsumedCount   map[int64]int   `json:"offsetConsumedCount"`
	LastConsumeTimestamp  int64           `json:"lastConsumeTimestamp"`
	CommitOffsetBit       int64           `json:"commitOffsetBit"`
	AttemptID             string          `json:"attemptId,omitempty"`
}

type orderFile struct {
	Table map[string]map[int32]*orderQueue `json:"table"`
}

func openOrderInfo(fsys vfs.FS, path string) (*orderInfo, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	o := &orderInfo{fs: fsys, path: path, table: make(map[string]map[int32]*orderQueue)}
	if path == "" {
		return o, nil
	}
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return o, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pop: read %s: %w", path, err)
	}
	var f orderFile
	if err := protocol.UnmarshalFastJSON(data, &f); err != nil {
		return nil, fmt.Errorf("pop: %s: %w", path, err)
	}
	if f.Table != nil {
		o.table = f.Table
	}
	return o, nil
}

func (q *orderQueue) offset(i int) int64 {
	if i == 0 {
		return q.OffsetList[0]
	}
	return q.OffsetList[0] + q.OffsetList[i]
}

func (q *orderQueue) index(offset int64) int {
	for i := range q.OffsetList {
		if q.offset(i) == offset {
			return i
		}
	}
	return -1
}

func (q *orderQueue) acked(i int) bool { return q.CommitOffsetBit&(1<<i) != 0 }

// nextVisible is when offset i may be handed out again.
func (q *orderQueue) nextVisible(i int) int64 {
	if t, ok := q.OffsetNextVisibleTime[q.offset(i)]; ok {
		return t
	}
	return q.PopTime + q.InvisibleTime
}

func (o *orderInfo) get(topic, group string, qid int32) *orderQueue {
	return o.table[topic+keySplit+group][qid]
}

// blocked is checkBlock: the queue's last batch still has an unacked
// message that is invisible at now. The same attempt (a client retrying
// its request) is not blocked.
func (o *orderInfo) blocked(topic, group string, qid int32, attemptID string, now int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.get(topic, group, qid)
	if q == nil || len(q.OffsetList) == 0 {
		return false
	}
	if attemptID != "" && attemptID == q.AttemptID {
		return false
	}
	for i := range q.OffsetList {
		if !q.acked(i) && q.nextVisible(i) > now {
			return true
		}
	}
	return false
}

// update records a new batch and returns, per offset, how often it was
// handed out before (the messages' reconsume count).
func (o *orderInfo) update(topic, group string, qid int32, attemptID string, popTime, invisibleTime int64, offsets []int64) []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := topic + keySplit + group
	if o.table[key] == nil {
		o.table[key] = make(map[int32]*orderQueue)
	}
	old := o.table[key][qid]
	q := &orderQueue{
		PopTime: popTime, InvisibleTime: invisibleTime, AttemptID: attemptID, LastConsumeTimestamp: popTime,
		OffsetConsumedCount: make(map[int64]int), OffsetNextVisibleTime: make(map[int64]int64),
	}
	counts := make([]int, len(offsets))
	for i, off := range offsets {
		if i == 0 {
			q.OffsetList = append(q.OffsetList, off)
		} else {
			q.OffsetList = append(q.OffsetList, off-offsets[0])
		}
		if old != nil && old.index(off) >= 0 {
			counts[i] = old.OffsetConsumedCount[off] + 1
		}
		if counts[i] > 0 {
			q.OffsetConsumedCount[off] = counts[i]
		}
	}
	o.table[key][qid] = q
	o.changed = true
	return counts
}

// commitAndNext acks offset in the queue's batch and returns the queue's
// next consume offset: after the batch when all of it is acked, else its
// first unacked offset. -2: the ack is for another (older) pop and
// changes nothing; -1: the offset is not in the batch.
func (o *orderInfo) commitAndNext(topic, group string, qid int32, offset, popTime int64) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.get(topic, group, qid)
	if q == nil || len(q.OffsetList) == 0 {
		return offset + 1
	}
	if q.PopTime != popTime {
		return -2
	}
	i := q.index(offset)
	if i < 0 {
		return -1
	}
	q.CommitOffsetBit |= 1 << i
	o.changed = true
	for j := range q.OffsetList {
		if !q.acked(j) {
			return q.offset(j)
		}
	}
	return q.offset(len(q.OffsetList)-1) + 1
}

// setNextVisible is updateNextVisibleTime (CHANGE_MESSAGE_INVISIBLETIME
// of an orderly message).
func (o *orderInfo) setNextVisible(topic, group string, qid int32, offset, popTime, at int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.get(topic, group, qid)
	if q == nil || q.PopTime != popTime || q.index(offset) < 0 {
		return false
	}
	q.OffsetNextVisibleTime[offset] = at
	o.changed = true
	return true
}

// persistIfChanged writes the table when it changed since the last write.
func (o *orderInfo) persistIfChanged() error {
	o.mu.Lock()
	changed := o.changed
	o.mu.Unlock()
	if !changed {
		return nil
	}
	return o.persist()
}

// persist writes the table (Java's JSON: numeric map keys as strings).
func (o *orderInfo) persist() error {
	if o.path == "" {
		return nil
	}
	o.mu.Lock()
	data, err := json.Marshal(orderFile{Table: o.table})
	o.changed = false
	o.mu.Unlock()
	if err != nil {
		return fmt.Errorf("pop: encode %s: %w", o.path, err)
	}
	if err := o.write(data); err != nil {
		o.mu.Lock()
		o.changed = true // written again next round
		o.mu.Unlock()
		return err
	}
	return nil
}

func (o *orderInfo) write(data []byte) error {
	dir := filepath.Dir(o.path)
	if err := vfs.MkdirAllSync(o.fs, dir, 0o755); err != nil {
		return fmt.Errorf("pop: write %s: %w", o.path, err)
	}
	tmp := o.path + ".tmp"
	f, err := o.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("pop: write %s: %w", o.path, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("pop: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("pop: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pop: close %s: %w", tmp, err)
	}
	if err := o.fs.Rename(tmp, o.path); err != nil {
		return fmt.Errorf("pop: rename %s: %w", tmp, err)
	}
	return o.fs.SyncDir(dir)
}

// ackOrderly is AckMessageProcessor.ackOrderly: the queue's consumer
// offset moves to the batch's first unacked message.
func (s *Service) ackOrderly(topic, group string, qid int32, offset, popTime int64, remote string) Status {
	if old, ok := s.cfg.Offsets.Query(group, topic, qid); ok && offset < old {
		return success // acked already
	}
	key := lockKey(topic, group, qid)
	s.locks.lock(key)
	defer s.locks.unlock(key)
	old, _ := s.cfg.Offsets.Query(group, topic, qid)
	if offset < old {
		return success
	}
	next := s.order.commitAndNext(topic, group, qid, offset, popTime)
	switch {
	case next == -1:
		return Status{protocol.MessageIllegal, fmt.Sprintf("offset is illegal, key:%s, old:%d, commit:%d, next:%d, %s", key, old, offset, next, remote)}
	case next > -1:
		s.cfg.Offsets.Commit(group, topic, qid, next)
		if !s.order.blocked(topic, group, qid, "", s.cfg.Now().UnixMilli()) {
			s.cfg.Notify(topic, -1, WakeAll)
			s.cfg.Notify(topic, HoldQueue(qid), WakeAll)
		}
	}
	return success
}

// changeInvisibleOrderly is processChangeInvisibleTimeForOrder: the
// message's next visible time moves; the check point stays the same.
func (s *Service) changeInvisibleOrderly(h *protocol.ChangeInvisibleTimeRequestHeader, ei ExtraInfo) (protocol.ChangeInvisibleTimeResponseHeader, Status) {
	rh := protocol.ChangeInvisibleTimeResponseHeader{PopTime: ei.PopTime, InvisibleTime: ei.InvisibleTime, ReviveQid: ei.ReviveQid}
	if old, ok := s.cfg.Offsets.Query(h.ConsumerGroup, h.Topic, h.QueueID); ok && h.Offset < old {
		return rh, success
	}
	key := lockKey(h.Topic, h.ConsumerGroup, h.QueueID)
	s.locks.lock(key)
	defer s.locks.unlock(key)
	next := s.cfg.Now().UnixMilli() + h.InvisibleTime
	s.order.setNextVisible(h.Topic, h.ConsumerGroup, h.QueueID, h.Offset, ei.PopTime, next)
	rh.InvisibleTime = next - ei.PopTime
	return rh, success
}
