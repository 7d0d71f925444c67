package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/commitlog"
	"github.com/rocketd/rocketd/internal/store/consumequeue"
)

// GetStatus is the outcome of GetMessage: RocketMQ's GetMessageStatus.
type GetStatus int

// The statuses, in RocketMQ's order.
const (
	// Found: at least one message is returned.
	Found GetStatus = iota
	// NoMatchedMessage: units were scanned, none matched the filter.
	NoMatchedMessage
	// MessageWasRemoving: the units point at CommitLog data already deleted.
	MessageWasRemoving
	// OffsetFoundNull: the ConsumeQueue file for the offset is gone.
	OffsetFoundNull
	// OffsetOverflowBadly: offset > max offset.
	OffsetOverflowBadly
	// OffsetOverflowOne: offset == max offset (caught up).
	OffsetOverflowOne
	// OffsetTooSmall: offset < min offset.
	OffsetTooSmall
	// NoMatchedLogicQueue: no such queue.
	NoMatchedLogicQueue
	// NoMessageInQueue: the queue is empty (max offset 0).
	NoMessageInQueue
)

var getStatusNames = [...]string{
	Found: "FOUND", NoMatchedMessage: "NO_MATCHED_MESSAGE", MessageWasRemoving: "MESSAGE_WAS_REMOVING",
	OffsetFoundNull: "OFFSET_FOUND_NULL", OffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY",
	OffsetOverflowOne: "OFFSET_OVERFLOW_ONE", OffsetTooSmall: "OFFSET_TOO_SMALL",
	NoMatchedLogicQueue: "NO_MATCHED_LOGIC_QUEUE", NoMessageInQueue: "NO_MESSAGE_IN_QUEUE",
}

// String returns the Java enum name.
func (s GetStatus) String() string {
	if s >= 0 && int(s) < len(getStatusNames) {
		return getStatusNames[s]
	}
	return "GetStatus(" + strconv.Itoa(int(s)) + ")"
}

// MessageFilter decides which messages a pull returns. MatchTagsCode runs
// on the ConsumeQueue unit (cheap); MatchRecord on the stored record bytes of
// the units that passed (an exact check; return true to skip it).
type MessageFilter interface {
	MatchTagsCode(tagsCode int64) bool
	MatchRecord(record []byte) bool
}

// TagFilter is the TAG-type subscription filter: it matches units whose
// tags code (low 32 bits, spec §13.1) is one of the subscribed tags' hashes,
// and with Exact also checks the record's TAGS string (hash collisions).
// A TagFilter with no tags, or with "*", matches everything.
type TagFilter struct {
	all   bool
	codes map[int32]struct{}
	tags  map[string]struct{}
	exact bool
}

// NewTagFilter builds a filter for the given tags ("*" or none = all).
func NewTagFilter(exact bool, tags ...string) *TagFilter {
	f := &TagFilter{codes: map[int32]struct{}{}, tags: map[string]struct{}{}, exact: exact}
	for _, t := range tags {
		if t == "*" {
			f.all = true
		}
		f.codes[int32(message.TagsCode(t))] = struct{}{}
		f.tags[t] = struct{}{}
	}
	if len(tags) == 0 {
		f.all = true
	}
	return f
}

// AddCode makes units carrying code match too: callers add the hashes other
// clients compute for the same tags (the Go client hashes UTF-8 bytes) or the
// codes a subscription carries. The exact check, when on, still decides.
func (f *TagFilter) AddCode(code int32) {
	f.codes[code] = struct{}{}
}

// MatchTagsCode implements MessageFilter.
func (f *TagFilter) MatchTagsCode(tagsCode int64) bool {
	if f.all {
		return true
	}
	_, ok := f.codes[int32(tagsCode)]
	return ok
}

// MatchRecord implements MessageFilter.
func (f *TagFilter) MatchRecord(record []byte) bool {
	if f.all || !f.exact {
		return true
	}
	rec, _, err := message.DecodeRecordNoCopy(record, false)
	if err != nil {
		return false
	}
	tag, _ := message.Property(rec.Properties, message.PropertyTags)
	_, ok := f.tags[tag]
	return ok
}

// Message is one record returned by GetMessage: the stored bytes (spec
// §5.1), valid until the GetResult is released.
type Message struct {
	Bytes          []byte
	PhysicalOffset int64
	QueueOffset    int64
	TagsCode       int64
}

// GetResult is the answer of GetMessage. Release it when the bytes have
// been sent; it must not be used afterwards.
type GetResult struct {
	Status          GetStatus
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	Messages        []Message
	TotalSize       int // bytes of all messages
	// SuggestPullingFromSlave: the last message read was "on disk" (see
	// Config.InMemoryBytes); the broker may point the consumer at a slave.
	SuggestPullingFromSlave bool

	// reads are the CommitLog reads the messages slice into: consecutive
	// records are read with one pread.
	reads []commitlog.Buffer
	// runs are the messages' bytes joined where they lie back to back in
	// one read (see BodyRuns).
	runs [][]byte
}

var getResultPool = sync.Pool{New: func() any {
	return &GetResult{Messages: make([]Message, 0, 32), reads: make([]commitlog.Buffer, 0, 4), runs: make([][]byte, 0, 4)}
}}

// BodyRuns returns the bytes of Messages, in order, as few slices as
// possible: records returned one after the other that were read by one
// pread are one slice. A pull of a backlog written in batches is then one
// or a few slices rather than one per record (a pull response's body, one
// iovec each). Valid until Release; the caller must not change the list.
func (r *GetResult) BodyRuns() [][]byte { return r.runs }

// Release returns the read buffers and the result to their pools.
func (r *GetResult) Release() {
	if r == nil {
		return
	}
	for i := range r.reads {
		r.reads[i].Release()
	}
	clear(r.Messages)
	clear(r.runs)
	*r = GetResult{Messages: r.Messages[:0], reads: r.reads[:0], runs: r.runs[:0]}
	getResultPool.Put(r)
}

// maxScanBytes is how much ConsumeQueue one GetMessage scans at least
// (16000 bytes, as RocketMQ: 800 units).
const maxScanBytes = 16000

// unitsPerRead bounds one ConsumeQueue read of GetMessage; firstUnitsRead
// is the least its first read takes.
const (
	unitsPerRead   = 256
	firstUnitsRead = 32
)

// GetMessage reads up to maxMsgNums messages of a queue from offset,
// following RocketMQ's DefaultMessageStore.getMessage (spec §13.1):
//
//	no queue              NO_MATCHED_LOGIC_QUEUE  next = 0
//	max == 0              NO_MESSAGE_IN_QUEUE     next = 0
//	offset < min          OFFSET_TOO_SMALL        next = min
//	offset == max         OFFSET_OVERFLOW_ONE     next = offset
//	offset > max          OFFSET_OVERFLOW_BADLY   next = max
//	file gone             OFFSET_FOUND_NULL       next = first offset of the next file
//	otherwise             FOUND / NO_MATCHED_MESSAGE / MESSAGE_WAS_REMOVING,
//	                      next = offset + units scanned
//
// The scan stops at maxMsgNums messages, MaxTransferBytes/MaxTransferCount
// (after at least one message), or max(16000 bytes, maxMsgNums×20) of
// ConsumeQueue. group is for the caller's bookkeeping (not used by the
// store). filter may be nil (everything matches). The result is never nil
// unless err (ErrClosed) is.
func (s *Store) GetMessage(group, topic string, queueID int32, offset int64, maxMsgNums int, filter MessageFilter) (*GetResult, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	r := getResultPool.Get().(*GetResult)
	r.Status = NoMessageInQueue
	q := s.cqs.Get(topic, queueID)
	if q == nil {
		r.Status = NoMatchedLogicQueue
		return r, nil
	}
	r.MinOffset, r.MaxOffset = q.MinOffset(), q.MaxOffset()
	switch {
	case r.MaxOffset == 0:
		r.Status, r.NextBeginOffset = NoMessageInQueue, 0
	case offset < r.MinOffset:
		r.Status, r.NextBeginOffset = OffsetTooSmall, r.MinOffset
	case offset == r.MaxOffset:
		r.Status, r.NextBeginOffset = OffsetOverflowOne, offset
	case offset > r.MaxOffset:
		// DefaultMessageStore.getMessage of 5.x (and 4.9.4 on): an offset
		// above the max offset is OFFSET_OVERFLOW_BADLY and the next offset
		// is corrected to the max offset, whatever the min offset is.
		// 4.9.3 and older corrected it to the min offset when that was 0,
		// so the consumer replayed the whole queue. (Java leaves the
		// offset alone on a slave unless offsetCheckInSlave: the pull
		// processor applies that rule.)
		r.Status, r.NextBeginOffset = OffsetOverflowBadly, r.MaxOffset
	default:
		s.scanQueue(r, q, offset, maxMsgNums, filter)
	}
	return r, nil
}

// scanQueue is the in-range case of GetMessage.
func (s *Store) scanQueue(r *GetResult, q *consumequeue.Queue, offset int64, maxMsgNums int, filter MessageFilter) {
	maxUnits := int64(max(maxScanBytes, maxMsgNums*consumequeue.UnitSize) / consumequeue.UnitSize)
	segSize := s.log.SegmentSize()
	maxOffsetPy := s.log.MaxOffset()
	lastPhy := int64(-1)
	nextPhyFileStart := int64(math.MinInt64)
	r.Status = NoMatchedMessage
	scanned := int64(0)
	// run is the latest CommitLog read: [runStart, runStart+len(run)).
	var run []byte
	var runStart int64
	// The last of r.runs is run[bodyFrom:bodyEnd] while bodyRead is the
	// index of run in r.reads (-1: no run of this read yet).
	bodyRead := -1
	var bodyFrom, bodyEnd int64
scan:
	for scanned < maxUnits && offset+scanned < r.MaxOffset {
		if len(r.Messages) >= maxMsgNums {
			// Full by count: the next unit would only be turned away
			// (batchFull), so it is not read. A backlog pull of 32
			// read 256 more units for nothing, as many bytes as a
			// read-ahead block.
			break
		}
		// The first read takes the units the batch may hold (a filter
		// that passes them all needs no more); later ones up to
		// unitsPerRead.
		n := min(maxUnits-scanned, unitsPerRead)
		if scanned == 0 {
			n = min(n, int64(max(maxMsgNums, firstUnitsRead)))
		}
		us, err := q.Read(offset+scanned, int(n))
		if err != nil {
			if scanned == 0 {
				r.Status = OffsetFoundNull
				r.NextBeginOffset = q.RollNextFile(offset)
				if !errors.Is(err, consumequeue.ErrFileMissing) {
					s.cfg.Logger.Error("store: read consume queue", "topic", q.Topic(), "queueId", q.QueueID(), "offset", offset, "err", err)
				}
				return
			}
			break
		}
		if us.Len() == 0 {
			us.Release()
			break
		}
		for i := 0; i < us.Len(); i++ {
			u := us.At(i)
			lastPhy = u.Offset
			if s.batchFull(r, u.Size, maxMsgNums, s.onDisk(u.Offset, maxOffsetPy)) {
				us.Release()
				break scan
			}
			scanned++
			if nextPhyFileStart != math.MinInt64 && u.Offset < nextPhyFileStart {
				continue
			}
			if u.IsFiller() || !u.Valid() {
				continue // padding, or a damaged unit: nothing to read
			}
			if filter != nil && !filter.MatchTagsCode(u.TagsCode) {
				if r.TotalSize == 0 {
					r.Status = NoMatchedMessage
				}
				continue
			}
			if u.Offset < runStart || u.End() > runStart+int64(len(run)) {
				// Read this record and the following ones that are
				// contiguous in the CommitLog and likely to be returned.
				end := s.runEnd(r, &us, i, maxMsgNums, filter)
				buf, err := s.log.Read(u.Offset, int32(end-u.Offset))
				if err != nil {
					if r.TotalSize == 0 {
						r.Status = MessageWasRemoving
					}
					nextPhyFileStart = (u.Offset/segSize + 1) * segSize
					continue
				}
				r.reads = append(r.reads, buf)
				run, runStart = buf.Bytes, u.Offset
			}
			rec := run[u.Offset-runStart : u.End()-runStart : u.End()-runStart]
			if !looksLikeRecord(rec) {
				// A damaged unit pointing into the middle of the data:
				// never hand out bytes that are not one whole record.
				if r.TotalSize == 0 {
					r.Status = MessageWasRemoving
				}
				continue
			}
			if filter != nil && !filter.MatchRecord(rec) {
				if r.TotalSize == 0 {
					r.Status = NoMatchedMessage
				}
				continue
			}
			r.Messages = append(r.Messages, Message{Bytes: rec, PhysicalOffset: u.Offset,
				QueueOffset: us.First + int64(i), TagsCode: u.TagsCode})
			if from := u.Offset - runStart; bodyRead == len(r.reads)-1 && from == bodyEnd {
				bodyEnd = u.End() - runStart
				r.runs[len(r.runs)-1] = run[bodyFrom:bodyEnd:bodyEnd]
			} else {
				bodyRead, bodyFrom, bodyEnd = len(r.reads)-1, from, u.End()-runStart
				r.runs = append(r.runs, rec)
			}
			r.TotalSize += len(rec)
			r.Status = Found
			nextPhyFileStart = math.MinInt64
		}
		us.Release()
	}
	r.NextBeginOffset = offset + scanned
	r.SuggestPullingFromSlave = lastPhy >= 0 && s.onDisk(lastPhy, maxOffsetPy)
}

// onDisk reports whether the record at offset is too far behind the
// CommitLog end to be in the page cache (checkInDiskByCommitOffset).
func (s *Store) onDisk(offset, maxOffsetPy int64) bool {
	return s.cfg.InMemoryBytes > 0 && maxOffsetPy-offset > s.cfg.InMemoryBytes
}

// looksLikeRecord is the cheap check that rec is one whole record: a
// record magic and TOTALSIZE equal to its length.
func looksLikeRecord(rec []byte) bool {
	if len(rec) < message.MinRecordSize {
		return false
	}
	m := message.RecordMagic(rec)
	return (m == message.MagicV1 || m == message.MagicV2) && int(message.RecordTotalSize(rec)) == len(rec)
}

// runEnd returns the CommitLog end of the run of records starting with unit
// i of us: following units are added while their records are contiguous
// (so in the same segment), pass the tags filter and fit what the batch
// may still take.
func (s *Store) runEnd(r *GetResult, us *consumequeue.Units, i, maxMsgNums int, filter MessageFilter) int64 {
	u := us.At(i)
	end := u.End()
	budget := int64(s.cfg.MaxTransferBytes - r.TotalSize)
	count := min(maxMsgNums, s.cfg.MaxTransferCount) - len(r.Messages) - 1
	for j := i + 1; j < us.Len() && count > 0; j++ {
		v := us.At(j)
		if v.Offset != end || !v.Valid() || v.IsFiller() || end+int64(v.Size)-u.Offset > budget {
			break
		}
		if filter != nil && !filter.MatchTagsCode(v.TagsCode) {
			break
		}
		end += int64(v.Size)
		count--
	}
	return end
}

// batchFull is RocketMQ's isTheBatchFull.
func (s *Store) batchFull(r *GetResult, size int32, maxMsgNums int, onDisk bool) bool {
	n := len(r.Messages)
	if r.TotalSize == 0 || n == 0 {
		return false
	}
	if maxMsgNums <= n {
		return true
	}
	maxBytes, maxCount := s.cfg.MaxTransferBytes, s.cfg.MaxTransferCount
	if onDisk {
		maxBytes, maxCount = s.cfg.MaxTransferBytesOnDisk, s.cfg.MaxTransferCountOnDisk
	}
	return r.TotalSize+int(size) > maxBytes || n > maxCount-1
}

// MinOffset returns the min offset of a queue (0 if unknown).
func (s *Store) MinOffset(topic string, queueID int32) int64 {
	if q := s.cqs.Get(topic, queueID); q != nil {
		return q.MinOffset()
	}
	return 0
}

// MaxOffset returns the max offset of a queue: the offset the next
// dispatched message gets (0 if unknown).
func (s *Store) MaxOffset(topic string, queueID int32) int64 {
	if q := s.cqs.Get(topic, queueID); q != nil {
		return q.MaxOffset()
	}
	return 0
}

// Queues returns the queue ids of every topic with a ConsumeQueue.
func (s *Store) Queues() map[string][]int32 { return s.cqs.Topics() }

// CommitLogMinOffset is the first CommitLog offset still stored.
func (s *Store) CommitLogMinOffset() int64 { return s.log.MinOffset() }

// CommitLogMaxOffset is the CommitLog write position.
func (s *Store) CommitLogMaxOffset() int64 { return s.log.MaxOffset() }

// DispatchedOffset is the CommitLog offset up to which ConsumeQueues are built.
func (s *Store) DispatchedOffset() int64 { return s.disp.dispatched() }

// DispatchBehindBytes is how much committed CommitLog data awaits dispatch
// (RocketMQ's dispatchBehindBytes runtime figure).
func (s *Store) DispatchBehindBytes() int64 { return max(0, s.log.Committed()-s.disp.dispatched()) }

// FlushBehindBytes is how much written CommitLog data awaits its flush
// (Java's flushBehindBytes: max offset - flushed offset).
func (s *Store) FlushBehindBytes() int64 { return max(0, s.log.MaxOffset()-s.log.Flushed()) }

// WaitReadable waits until the record at offset can be read: until
// everything appended when it is called is committed, when offset lies in
// that range. With ASYNC_FLUSH the committer writes the ring to the
// segment just after the put answered, so a caller that learned an offset
// from a put's answer (END_TRANSACTION) may arrive before. False when
// offset was never written or ctx ended first.
func (s *Store) WaitReadable(ctx context.Context, offset int64) bool {
	target := s.log.MaxOffset()
	if offset < 0 || offset >= target {
		return false
	}
	// The committer was woken by the put and writes within microseconds:
	// yield first, sleep only if it is slow (a loaded machine).
	for spins := 0; s.log.Committed() < target; spins++ {
		if spins < 100 {
			runtime.Gosched()
			continue
		}
		if ctx.Err() != nil {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}

// storeTimestampAt reads the store time of the record at a CommitLog offset.
func (s *Store) storeTimestampAt(offset int64, size int32) (int64, error) {
	n := min(size, 96) // enough for the header of either host form
	buf, err := s.log.Read(offset, n)
	if err != nil {
		return 0, err
	}
	defer buf.Release()
	b := buf.Bytes
	if len(b) < message.PosSysFlag+4 {
		return 0, fmt.Errorf("store: record at %d: %w", offset, message.ErrTruncated)
	}
	pos := message.StoreTimestampPos(message.RecordSysFlag(b))
	if pos+8 > len(b) {
		return 0, fmt.Errorf("store: record at %d: %w", offset, message.ErrTruncated)
	}
	return message.RecordStoreTimestamp(b), nil
}

// MessageStoreTimestamp returns the store time of the message at a queue
// offset (-1 if it cannot be read).
func (s *Store) MessageStoreTimestamp(topic string, queueID int32, offset int64) int64 {
	q := s.cqs.Get(topic, queueID)
	if q == nil {
		return -1
	}
	u, err := q.UnitAt(offset)
	if err != nil || u.IsFiller() {
		return -1
	}
	ts, err := s.storeTimestampAt(u.Offset, u.Size)
	if err != nil {
		return -1
	}
	return ts
}

// EarliestMessageTime returns the store time of a queue's first message
// (-1 if none can be read).
func (s *Store) EarliestMessageTime(topic string, queueID int32) int64 {
	return s.MessageStoreTimestamp(topic, queueID, s.MinOffset(topic, queueID))
}

// EarliestStoreTime returns the store time of the CommitLog's first record
// (-1 if none).
func (s *Store) EarliestStoreTime() int64 {
	rec, buf, err := s.log.ReadRecordAt(s.log.MinOffset())
	if err != nil {
		return -1
	}
	defer buf.Release()
	return rec.StoreTimestamp
}

// Boundary picks which of several messages sharing one store timestamp
// OffsetByTimestamp answers (RocketMQ 5's BoundaryType).
type Boundary uint8

const (
	// BoundaryLower answers the first message stored at the timestamp (the
	// default: a consumer reset to a time sees every message of that ms).
	BoundaryLower Boundary = iota
	// BoundaryUpper answers the last one.
	BoundaryUpper
)

// ParseBoundary reads the boundaryType header value; anything but UPPER
// (case-insensitive) is LOWER, as in Java.
func ParseBoundary(s string) Boundary {
	if strings.EqualFold(s, "UPPER") {
		return BoundaryUpper
	}
	return BoundaryLower
}

// OffsetByTimestamp returns the queue offset of the message stored at
// timestamp (ms): binary search on store times read from the CommitLog; on
// an exact match the first (BoundaryLower) or last (BoundaryUpper) of the
// messages sharing that ms, else the nearer of the two neighbours (the
// later one on a tie), else the only neighbour there is (RocketMQ's
// getOffsetInQueueByTime). 0 for an unknown or empty queue.
func (s *Store) OffsetByTimestamp(topic string, queueID int32, timestamp int64, boundary Boundary) int64 {
	q := s.cqs.Get(topic, queueID)
	if q == nil {
		return 0
	}
	minOff, maxOff := q.MinOffset(), q.MaxOffset()-1
	low, high := minOff, maxOff
	if high < low {
		return 0
	}
	leftOff, rightOff := int64(-1), int64(-1)
	leftTs, rightTs := int64(-1), int64(-1)
	for low <= high {
		mid := low + (high-low)/2
		ts := s.MessageStoreTimestamp(topic, queueID, mid)
		if ts < 0 {
			return 0
		}
		switch {
		case ts == timestamp:
			return s.sameTimestampEdge(topic, queueID, mid, timestamp, boundary, minOff, maxOff)
		case ts > timestamp:
			high, rightOff, rightTs = mid-1, mid, ts
		default:
			low, leftOff, leftTs = mid+1, mid, ts
		}
	}
	switch {
	case leftTs == -1:
		return rightOff
	case rightTs == -1:
		return leftOff
	case timestamp-leftTs > rightTs-timestamp:
		return rightOff
	default:
		return leftOff
	}
}

// sameTimestampEdge walks from a message stored at timestamp to the first
// (or last) neighbour with the same store time. Store times never decrease
// along a queue, so the run is contiguous; it is at most one millisecond of
// messages long.
func (s *Store) sameTimestampEdge(topic string, queueID int32, at, timestamp int64, boundary Boundary, minOff, maxOff int64) int64 {
	step, limit := int64(-1), minOff
	if boundary == BoundaryUpper {
		step, limit = 1, maxOff
	}
	for at != limit && s.MessageStoreTimestamp(topic, queueID, at+step) == timestamp {
		at += step
	}
	return at
}

// LookMessageByOffset reads the record at a CommitLog offset (the offset
// msgId's lookup). Release the buffer when done with the record.
func (s *Store) LookMessageByOffset(offset int64) (message.Record, Buffer, error) {
	return s.log.ReadRecordAt(offset)
}

// ReadMessage returns the stored bytes of the record at offset of the given
// size (query results).
func (s *Store) ReadMessage(offset int64, size int32) (Buffer, error) {
	return s.log.Read(offset, size)
}

// ReadRaw reads committed CommitLog bytes for HA (see commitlog.Log.ReadRaw).
func (s *Store) ReadRaw(offset int64, maxBytes int) (Buffer, error) {
	return s.log.ReadRaw(offset, maxBytes)
}

// AppendRaw appends bytes received from the master (HA slave); the
// dispatcher builds the queues from them.
func (s *Store) AppendRaw(offset int64, data []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.slave.Load() {
		return ErrNotSlave
	}
	return s.log.AppendRaw(offset, data)
}

// DeleteTopic drops a topic's ConsumeQueues and its next-offset entries.
// Its records stay in the CommitLog until retention removes them.
func (s *Store) DeleteTopic(topic string) error {
	err := s.cqs.RemoveTopic(topic)
	s.log.RemoveQueueOffsets(topic)
	return err
}

// readLog reads n CommitLog bytes at offset for the dispatcher.
func (s *Store) readLog(offset int64, n int32) ([]byte, func(), error) {
	buf, err := s.log.Read(offset, n)
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes, buf.Release, nil
}

// QueueUnit is one ConsumeQueue entry as QUERY_CONSUME_QUEUE shows it.
type QueueUnit struct {
	QueueOffset  int64
	PhysicOffset int64 // CommitLog offset of the record
	Size         int32
	TagsCode     int64
}

// QueueUnits returns up to count units of a queue from queue offset from
// (fewer at its end, none before its min offset); found is false when the
// queue does not exist.
func (s *Store) QueueUnits(topic string, queueID int32, from int64, count int) (units []QueueUnit, found bool, err error) {
	q := s.cqs.Get(topic, queueID)
	if q == nil {
		return nil, false, nil
	}
	from = max(from, q.MinOffset())
	for len(units) < count {
		us, err := q.Read(from, count-len(units))
		if err != nil {
			return units, true, err
		}
		n := us.Len()
		for i := range n {
			u := us.At(i)
			if !u.IsFiller() {
				units = append(units, QueueUnit{QueueOffset: from + int64(i), PhysicOffset: u.Offset, Size: u.Size, TagsCode: u.TagsCode})
			}
		}
		us.Release()
		if n == 0 {
			break
		}
		from += int64(n)
	}
	return units, true, nil
}
