package commitlog

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/message"
)

// PutOptions qualify a put.
type PutOptions struct {
	// NoWait answers without waiting for the flush or the slave (the
	// producer's WAIT=false). The zero value waits, as an absent WAIT does.
	NoWait bool
	// NoDelayRewrite stores the message under its own topic even when it
	// carries a DELAY property: the schedule service re-delivering a delayed
	// message keeps DELAY in the stored properties (spec §9.2).
	NoDelayRewrite bool
}

// encodePool holds encode buffers: a record is encoded outside the put lock
// into one of them, patched and copied into the ring under the lock.
var encodePool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledEncode bounds the buffers kept in encodePool, so that one large
// message does not pin megabytes per P.
const maxPooledEncode = 1 << 20

func putEncodeBuf(p *[]byte, b []byte) {
	if cap(b) <= maxPooledEncode {
		*p = b
		encodePool.Put(p)
	}
}

// Put appends one message. It fills in r: StoreHost, BodyCRC, and, on
// success, QueueOffset, PhysicalOffset and StoreTimestamp; a delay-level
// message (DELAY > 0, plain or committed transaction type) is rewritten to
// SCHEDULE_TOPIC_XXXX with queue = level - 1 (level capped at the highest
// configured), REAL_TOPIC and REAL_QID added (spec §9.2).
//
// Statuses: PutOK; FlushDiskTimeout / FlushSlaveTimeout / SlaveNotAvailable
// (stored, not confirmed); MessageIllegal, PropertiesSizeExceeded,
// OSPageCacheBusy, ServiceNotAvailable (closed or sticky-failed),
// CreateMappedFileFailed (not stored).
func (l *Log) Put(ctx context.Context, r *message.Record, opts PutOptions) PutResult {
	if st := l.admit(); st != PutOK {
		return PutResult{Status: st}
	}
	if !opts.NoDelayRewrite {
		l.rewriteDelay(r)
	}
	r.StoreHost = l.cfg.StoreHost
	if st := l.checkRecord(r); st != PutOK {
		return PutResult{Status: st}
	}
	// The body CRC is the costly part of encoding: outside the lock.
	r.BodyCRC = message.BodyCRC(r.Body)
	size := r.Size()
	dispatched := message.Dispatched(r.SysFlag)

	now := l.lock()
	offset, st := l.reserveLocked(size)
	if st != PutOK {
		l.unlock()
		r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp = 0, 0, 0
		return PutResult{Status: st}
	}
	ts := l.storeTimeLocked(now)
	var queueOffset int64
	if dispatched {
		// Prepared and rolled-back transaction records get 0 and do not
		// advance the queue (they never reach a consume queue).
		next := l.queueOffsetLocked(queueKey{r.Topic, r.QueueID})
		queueOffset = *next
		*next++
	}
	r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp = queueOffset, offset, ts
	l.encodeRingLocked(r, size)
	l.lastPutTime.Store(ts)
	l.unlock()

	res := PutResult{
		Status:         PutOK,
		WroteOffset:    offset,
		WroteBytes:     int32(size),
		MsgID:          l.msgIDs.format(offset),
		StoreTimestamp: ts,
		QueueOffset:    queueOffset,
		MsgNum:         1,
	}
	res.Status = l.afterAppend(ctx, offset+int64(size), opts)
	return res
}

// PutBatch appends the records of one batch (spec §5.5) contiguously, in
// one segment (the whole batch moves to a new segment if it does not fit),
// with consecutive queue offsets. All records must share topic and queue,
// and carry no transaction type or delay level (MessageIllegal otherwise);
// the bodies together may not exceed MaxMessageSize. The records are
// filled in like Put's. MsgID is the comma-separated offset ids.
func (l *Log) PutBatch(ctx context.Context, recs []message.Record, opts PutOptions) PutResult {
	if st := l.admit(); st != PutOK {
		return PutResult{Status: st}
	}
	if len(recs) == 0 {
		return PutResult{Status: MessageIllegal}
	}
	topic, queueID := recs[0].Topic, recs[0].QueueID
	bodies := 0
	for i := range recs {
		r := &recs[i]
		if r.Topic != topic || r.QueueID != queueID || message.TransactionType(r.SysFlag) != message.TransactionNotType {
			return PutResult{Status: MessageIllegal}
		}
		if v, ok := message.Property(r.Properties, message.PropertyDelayTimeLevel); ok && v != "0" {
			return PutResult{Status: MessageIllegal}
		}
		r.StoreHost = l.cfg.StoreHost
		if st := l.checkRecord(r); st != PutOK {
			return PutResult{Status: st}
		}
		bodies += len(r.Body)
	}
	if bodies > l.cfg.MaxMessageSize {
		return PutResult{Status: MessageIllegal}
	}

	bufp := encodePool.Get().(*[]byte)
	buf := (*bufp)[:0]
	ends := make([]int, len(recs))
	for i := range recs {
		r := &recs[i]
		r.BodyCRC = message.BodyCRC(r.Body)
		r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp = 0, 0, 0
		buf = message.AppendRecord(buf, r)
		ends[i] = len(buf)
	}
	defer func() { putEncodeBuf(bufp, buf) }()
	if int64(len(buf))+message.BlankLen > l.cfg.SegmentSize {
		return PutResult{Status: MessageIllegal}
	}

	now := l.lock()
	offset, st := l.reserveLocked(len(buf))
	ts := l.storeTimeLocked(now)
	if st != PutOK {
		l.unlock()
		return PutResult{Status: st}
	}
	next := l.queueOffsetLocked(queueKey{topic, queueID})
	first := *next
	*next += int64(len(recs))
	start := 0
	for i, end := range ends {
		rec := buf[start:end]
		message.PatchQueueOffset(rec, first+int64(i))
		message.PatchPhysicalOffset(rec, offset+int64(start))
		message.PatchStoreTimestamp(rec, ts)
		start = end
	}
	l.writeRingLocked(buf)
	l.lastPutTime.Store(ts)
	l.unlock()

	var ids strings.Builder
	ids.Grow(len(recs) * (l.msgIDs.len() + 1))
	start = 0
	for i, end := range ends {
		r := &recs[i]
		r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp = first+int64(i), offset+int64(start), ts
		if i > 0 {
			ids.WriteByte(',')
		}
		id := l.msgIDs.fill(r.PhysicalOffset)
		ids.Write(id[:l.msgIDs.len()])
		start = end
	}
	res := PutResult{
		Status:         PutOK,
		WroteOffset:    offset,
		WroteBytes:     int32(len(buf)),
		MsgID:          ids.String(),
		StoreTimestamp: ts,
		QueueOffset:    first,
		MsgNum:         int32(len(recs)),
	}
	res.Status = l.afterAppend(ctx, offset+int64(len(buf)), opts)
	return res
}

// admit is the cheap refusal check before any work.
func (l *Log) admit() PutStatus {
	if l.closed.Load() || !l.recovered.Load() || l.stickyErr() != nil {
		return ServiceNotAvailable
	}
	if l.Busy() {
		return OSPageCacheBusy
	}
	return PutOK
}

// checkRecord applies the size limits (spec §5.1, §14.6).
func (l *Log) checkRecord(r *message.Record) PutStatus {
	if len(r.Topic) == 0 || len(r.Topic) > message.MaxTopicLenV1 {
		return MessageIllegal
	}
	if len(r.Properties) > message.MaxPropertiesLen {
		return PropertiesSizeExceeded
	}
	if len(r.Body) > l.cfg.MaxMessageSize {
		return MessageIllegal
	}
	size := int64(r.Size())
	if size > int64(l.cfg.MaxMessageSize+maxRecordOverhead) || size+message.BlankLen > l.cfg.SegmentSize {
		return MessageIllegal
	}
	return PutOK
}

// rewriteDelay parks a delay-level message in SCHEDULE_TOPIC_XXXX (spec §9.2).
func (l *Log) rewriteDelay(r *message.Record) {
	t := message.TransactionType(r.SysFlag)
	if t != message.TransactionNotType && t != message.TransactionCommitType {
		return
	}
	v, ok := message.Property(r.Properties, message.PropertyDelayTimeLevel)
	if !ok {
		return
	}
	level, err := strconv.Atoi(v)
	if err != nil || level <= 0 {
		return
	}
	level = min(level, len(l.cfg.DelayLevels))
	props := message.ParseProperties(r.Properties)
	props[message.PropertyDelayTimeLevel] = strconv.Itoa(level)
	props[message.PropertyRealTopic] = r.Topic
	props[message.PropertyRealQueueID] = strconv.Itoa(int(r.QueueID))
	r.Properties = message.EncodeProperties(props)
	r.Topic = message.ScheduleTopic
	r.QueueID = int32(level - 1)
}

// afterAppend waits, outside the put lock, for what the put asked for: the
// sync flush (group commit) and the slave; the slave's status wins (§8).
func (l *Log) afterAppend(ctx context.Context, end int64, opts PutOptions) PutStatus {
	if !l.cfg.FlushSync {
		l.kickCommitter()
	}
	if opts.NoWait {
		if l.cfg.FlushSync {
			l.flusher.wake()
		}
		return PutOK
	}
	st := PutOK
	if l.cfg.FlushSync {
		st = l.waitFlush(ctx, end)
	}
	if l.cfg.Replica != nil {
		if rs := l.cfg.Replica.Wait(ctx, end); rs != PutOK {
			st = rs
		}
	}
	return st
}

// lock takes the put lock and records when (OS_PAGECACHE_BUSY). It returns
// the time to derive the store timestamp from (storeTimeLocked).
//
// The clock is read before taking the lock: a clock read costs 50-70 ns
// here, a large share of the hold time of a small put. Two consequences:
// the reading may be older than the previous holder's, so the store
// timestamp is clamped by storeTimeLocked (store times never decrease along
// the log); and lockedSince includes the time the holder waited for the
// lock, so after a stall longer than OSPageCacheBusyTimeout the puts that
// waited through it still read as busy while they drain (RocketMQ reads
// the clock after locking; the difference only shows in that stall).
func (l *Log) lock() time.Time {
	now := l.cfg.Now()
	var since int64
	if l.cfg.realClock {
		since = now.UnixNano()
	}
	l.mu.Lock()
	if !l.cfg.realClock {
		since = time.Now().UnixNano()
	}
	l.lockedSince.Store(since)
	return now
}

// storeTimeLocked is the store timestamp (ms) of what the holder appends:
// the holder's clock reading, but never below the previous put's.
// REQUIRES: mu held (via lock).
func (l *Log) storeTimeLocked(now time.Time) int64 {
	return max(now.UnixMilli(), l.lastPutTime.Load())
}

func (l *Log) unlock() {
	l.lockedSince.Store(0)
	l.mu.Unlock()
}

// reserveLocked makes room for n contiguous bytes at the write position:
// rolls to a new segment (after a BLANK filler) when they do not fit with
// BlankLen to spare, and makes room in the ring. It returns the offset the
// bytes go to.
// REQUIRES: mu held (via lock).
func (l *Log) reserveLocked(n int) (offset int64, st PutStatus) {
	if l.closed.Load() || l.stickyErr() != nil {
		return 0, ServiceNotAvailable
	}
	cur := l.cur.Load()
	head := l.head.Load()
	switch {
	case cur == nil || head >= cur.End():
		st = l.rollLocked(false)
	case int64(n)+message.BlankLen > cur.End()-head:
		st = l.rollLocked(true)
	}
	if st != PutOK {
		return 0, st
	}
	if st = l.ensureRingLocked(n); st != PutOK {
		return 0, st
	}
	return l.head.Load(), PutOK
}

// ensureRingLocked commits inline while the ring lacks n free bytes (the
// committer fell behind: back-pressure on the put path).
// REQUIRES: mu held.
func (l *Log) ensureRingLocked(n int) PutStatus {
	for int64(len(l.ring))-(l.head.Load()-l.committed.Load()) < int64(n) {
		l.commitMu.Lock()
		err := l.commitLocked()
		l.commitMu.Unlock()
		if err != nil {
			return ServiceNotAvailable
		}
	}
	return PutOK
}

// encodeRingLocked encodes r (size bytes, every field final) straight into
// the ring at the write position and advances it: the record's bytes are
// copied once on their way to the ring, where encoding outside the lock
// and copying in would copy them twice. The header is ~90 bytes of stores,
// so the hold time stays that of the copy. A record that would wrap around
// the ring's end is encoded into a pooled buffer and copied in two parts.
// REQUIRES: mu held; room reserved by reserveLocked.
func (l *Log) encodeRingLocked(r *message.Record, size int) {
	i := int(l.head.Load() % int64(len(l.ring)))
	if len(l.ring)-i >= size {
		// Appending to an empty slice with enough capacity writes in place.
		l.advanceLocked(len(message.AppendRecord(l.ring[i:i:i+size], r)))
		return
	}
	bufp := encodePool.Get().(*[]byte)
	rec := message.AppendRecord((*bufp)[:0], r)
	l.writeRingLocked(rec)
	putEncodeBuf(bufp, rec)
}

// writeRingLocked copies b into the ring at the write position and advances it.
// REQUIRES: mu held; room reserved by reserveLocked/ensureRingLocked.
func (l *Log) writeRingLocked(b []byte) {
	head := l.head.Load()
	i := head % int64(len(l.ring))
	if n := copy(l.ring[i:], b); n < len(b) {
		copy(l.ring, b[n:])
	}
	l.advanceLocked(len(b))
}

// advanceLocked moves the write position past n bytes just placed in the ring.
// REQUIRES: mu held.
func (l *Log) advanceLocked(n int) {
	head := l.head.Load() + int64(n)
	l.head.Store(head)
	if cur := l.cur.Load(); cur != nil {
		cur.SetWrote(head - cur.Start())
	}
}

// rollLocked finishes the current segment (writing the BLANK filler when
// blank is set), commits the ring into it and switches to the next segment.
// The ring is empty afterwards, so it never spans two segments.
// REQUIRES: mu held.
func (l *Log) rollLocked(blank bool) PutStatus {
	cur := l.cur.Load()
	if blank && cur != nil {
		if st := l.ensureRingLocked(message.BlankLen); st != PutOK {
			return st
		}
		left := cur.End() - l.head.Load()
		l.mu.scratch = message.AppendBlank(l.mu.scratch[:0], int32(left))
		l.writeRingLocked(l.mu.scratch)
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if err := l.commitLocked(); err != nil {
		return ServiceNotAvailable
	}
	start := l.head.Load()
	if cur != nil {
		start = cur.End()
		cur.SetWrote(cur.Size())
		// The filler stands for the rest of the segment: the log's end is
		// the segment's end even if the next segment cannot be created.
		l.head.Store(start)
		l.committed.Store(start)
	}
	next, err := l.segs.Roll(start)
	if err != nil {
		l.cfg.Logger.Error("commitlog: roll", "at", start, "err", err)
		return CreateMappedFileFailed
	}
	pos := start - next.Start() // 0 except for the first segment of a log starting mid-file (HA)
	next.SetWrote(pos)
	next.SetCommitted(pos)
	next.SetFlushed(pos)
	l.cur.Store(next)
	l.head.Store(start)
	l.committed.Store(start)
	if l.cfg.OnCommit != nil {
		l.cfg.OnCommit(start)
	}
	return PutOK
}
