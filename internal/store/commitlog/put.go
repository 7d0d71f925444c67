package commitlog

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"

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
	// Gather says more puts are about to follow this one (the sender has
	// requests queued behind it: a pipelining producer; or many senders
	// each put one at a time: gRPC sends, POP ack records). Under
	// ASYNC_FLUSH the put then yields once before writing the ring
	// itself, so that the puts already runnable append their records
	// first and one write takes them all, instead of a write each.
	Gather bool
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
// Statuses: PutOK (written to the file, and flushed/replicated when
// asked); FlushDiskTimeout / FlushSlaveTimeout / SlaveNotAvailable (stored,
// not confirmed); MessageIllegal, PropertiesSizeExceeded, OSPageCacheBusy,
// ServiceNotAvailable (closed, sticky-failed, disk full, or the write of
// the record failed and it was taken back), CreateMappedFileFailed (not
// stored).
func (l *Log) Put(ctx context.Context, r *message.Record, opts PutOptions) PutResult {
	now := l.clock.read()
	if st := l.admit(now.mono); st != PutOK {
		return PutResult{Status: st}
	}
	if !opts.NoDelayRewrite {
		l.rewriteDelay(r)
	}
	r.StoreHost = l.cfg.StoreHost
	if st := l.checkRecord(r); st != PutOK {
		return PutResult{Status: st}
	}
	// Everything but the fields the lock assigns is encoded outside it, in
	// parallel with other writers: the body CRC, the header (queue offset,
	// physical offset and store timestamp patched in under the lock) and
	// the topic part. The body and the properties are copied from r
	// straight into the ring.
	r.BodyCRC = message.BodyCRC(r.Body)
	r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp = 0, 0, 0
	var hdrBuf [message.MaxRecordHeaderLen]byte
	hdr := message.AppendRecordHeader(hdrBuf[:0], r)
	var topicBuf [maxTopicPart]byte
	topic := message.AppendRecordTopic(topicBuf[:0], r)
	size := len(hdr) + len(r.Body) + len(topic) + len(r.Properties)
	// Prepared and rolled-back transaction records get queue offset 0 and
	// do not advance the queue (they never reach a consume queue).
	dispatched := message.Dispatched(r.SysFlag)
	key := queueKey{r.Topic, r.QueueID}
	var cell *queueCell
	if dispatched {
		cell = l.queues.lookup(key)
	}

	l.lockAt(now.mono)
	offset, st := l.reserveLocked(size)
	if st != PutOK {
		l.unlock()
		return PutResult{Status: st}
	}
	ts := l.storeTimeLocked(now.ms)
	var queueOffset int64
	if dispatched {
		cell = l.queues.cellLocked(key, cell)
		queueOffset = cell.next
		cell.next++
	}
	message.PatchQueueOffset(hdr, queueOffset)
	message.PatchPhysicalOffset(hdr, offset)
	message.PatchStoreTimestamp(hdr, ts)
	w := l.ringWriterLocked()
	w.write(hdr)
	w.write(r.Body)
	w.write(topic)
	w.writeString(r.Properties)
	l.advanceLocked(size)
	l.setLastPutTimeLocked(ts)
	epoch := l.epoch.Load()
	l.unlock()
	r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp = queueOffset, offset, ts

	res := PutResult{
		Status:         PutOK,
		WroteOffset:    offset,
		WroteBytes:     int32(size),
		MsgID:          l.msgIDs.format(offset),
		StoreTimestamp: ts,
		QueueOffset:    queueOffset,
		MsgNum:         1,
	}
	res.Status = l.afterAppend(ctx, offset+int64(size), epoch, opts)
	return res
}

// PutBatch appends the records of one batch (spec §5.5) contiguously, in
// one segment (the whole batch moves to a new segment if it does not fit),
// with consecutive queue offsets. All records must share topic and queue,
// and carry no transaction type or delay level (MessageIllegal otherwise);
// the bodies together may not exceed MaxMessageSize. The records are
// filled in like Put's. MsgID is the comma-separated offset ids.
func (l *Log) PutBatch(ctx context.Context, recs []message.Record, opts PutOptions) PutResult {
	now := l.clock.read()
	if st := l.admit(now.mono); st != PutOK {
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
	var endsBuf [64]int // where each record ends in buf; a larger batch allocates
	ends := endsBuf[:0]
	for i := range recs {
		r := &recs[i]
		r.BodyCRC = message.BodyCRC(r.Body)
		r.QueueOffset, r.PhysicalOffset, r.StoreTimestamp = 0, 0, 0
		buf = message.AppendRecord(buf, r)
		ends = append(ends, len(buf))
	}
	defer func() { putEncodeBuf(bufp, buf) }()
	if int64(len(buf))+message.BlankLen > l.cfg.SegmentSize {
		return PutResult{Status: MessageIllegal}
	}

	key := queueKey{topic, queueID}
	cell := l.queues.lookup(key)
	l.lockAt(now.mono)
	offset, st := l.reserveLocked(len(buf))
	if st != PutOK {
		l.unlock()
		return PutResult{Status: st}
	}
	ts := l.storeTimeLocked(now.ms)
	cell = l.queues.cellLocked(key, cell)
	first := cell.next
	cell.next += int64(len(recs))
	start := 0
	for i, end := range ends {
		rec := buf[start:end]
		message.PatchQueueOffset(rec, first+int64(i))
		message.PatchPhysicalOffset(rec, offset+int64(start))
		message.PatchStoreTimestamp(rec, ts)
		start = end
	}
	l.writeRingLocked(buf)
	l.setLastPutTimeLocked(ts)
	epoch := l.epoch.Load()
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
	res.Status = l.afterAppend(ctx, offset+int64(len(buf)), epoch, opts)
	return res
}

// admit is the cheap refusal check before any work; now is the put's
// clock reading (mono).
func (l *Log) admit(now int64) PutStatus {
	if l.closed.Load() || !l.recovered.Load() || l.writeErr() != nil || !l.space.admit(now) {
		return ServiceNotAvailable
	}
	if l.busyAt(now) {
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

// afterAppend waits, outside the put lock, until the record is written to
// the file (every put: a record still in the ring may yet be taken back by
// a failed write, and is never acknowledged), and for what the put asked
// for: the sync flush (group commit) and the slave; the slave's status wins
// (§8). epoch is the log's rollback epoch at the append.
func (l *Log) afterAppend(ctx context.Context, end, epoch int64, opts PutOptions) PutStatus {
	switch {
	case !l.cfg.FlushSync:
		// An idle committer means light traffic: write the ring here
		// rather than pay two goroutine switches for a one-record run.
		// A busy one gathers the records that arrive meanwhile into its
		// next run.
		if opts.Gather && l.committerIdle.Load() {
			runtime.Gosched()
		}
		if !l.committerIdle.Load() || !l.commitIfIdle() {
			l.kickCommitter()
		}
	case opts.NoWait:
		// The group-commit flusher commits only between fdatasyncs: a put
		// that does not wait for the flush writes the ring itself rather
		// than wait behind one, and wakes the flusher for the sync.
		_ = l.commit()
		l.flusher.Kick()
	default:
		l.flusher.Kick()
	}
	st := l.wait(ctx, end, epoch, l.cfg.FlushSync && !opts.NoWait)
	if opts.NoWait || !st.Stored() || l.cfg.Replica == nil {
		return st
	}
	if rs := l.cfg.Replica.Wait(ctx, end); rs != PutOK {
		st = rs
	}
	return st
}

// lock takes the put lock and records when (OS_PAGECACHE_BUSY).
func (l *Log) lock() { l.lockAt(l.clock.mono()) }

// lockAt is lock with the caller's clock reading (mono), taken before
// waiting for the lock: a put reads the clock once, outside the lock. So
// lockedSince includes the time the holder waited for the lock, and after
// a stall longer than OSPageCacheBusyTimeout the puts that waited through
// it still read as busy while they drain (RocketMQ reads the clock after
// locking; the difference only shows in that stall).
func (l *Log) lockAt(now int64) {
	l.mu.Lock()
	l.lockedSince.Store(now)
}

// storeTimeLocked is the store timestamp (ms) of what the holder appends:
// the holder's clock reading (taken before the lock, so possibly older than
// the previous holder's), but never below the previous put's.
// REQUIRES: mu held (via lock).
func (l *Log) storeTimeLocked(nowMs int64) int64 {
	return max(nowMs, l.mu.lastPutTime)
}

// setLastPutTimeLocked records the store timestamp of the latest put. The
// atomic copy (read by the flusher) is stored only when the millisecond
// changes: an atomic store is a locked instruction on the put lock's
// critical path.
// REQUIRES: mu held.
func (l *Log) setLastPutTimeLocked(ts int64) {
	if ts != l.mu.lastPutTime {
		l.mu.lastPutTime = ts
		l.lastPutTime.Store(ts)
	}
}

// unlock releases the put lock. lockedSince keeps the holder's time: Busy
// tells a free lock from a held one by trying it (only when that time is
// older than the busy timeout), which keeps a second atomic store off
// every put's critical path.
func (l *Log) unlock() { l.mu.Unlock() }

// reserveLocked makes room for n contiguous bytes at the write position:
// rolls to a new segment (after a BLANK filler) when they do not fit with
// BlankLen to spare, and makes room in the ring. It returns the offset the
// bytes go to.
// REQUIRES: mu held (via lock).
func (l *Log) reserveLocked(n int) (offset int64, st PutStatus) {
	if l.closed.Load() || l.writeErr() != nil {
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
		if err := l.commitPutLocked(); err != nil {
			return ServiceNotAvailable
		}
	}
	return PutOK
}

// maxTopicPart is the longest AppendRecordTopic of a record the log
// accepts: 1-byte length, a topic of at most MaxTopicLenV1, 2-byte length.
const maxTopicPart = 1 + message.MaxTopicLenV1 + 2

// ringWriter copies parts of a record into the ring from the write
// position on, wrapping around the ring's end.
type ringWriter struct {
	ring []byte
	i    int
}

// ringWriterLocked starts writing at the write position; the caller
// advances it (advanceLocked) after the last part.
// REQUIRES: mu held; room reserved by reserveLocked.
func (l *Log) ringWriterLocked() ringWriter {
	return ringWriter{ring: l.ring, i: int(l.head.Load() % int64(len(l.ring)))}
}

func (w *ringWriter) write(b []byte) {
	n := copy(w.ring[w.i:], b)
	if n < len(b) {
		w.i = copy(w.ring, b[n:])
		return
	}
	w.i += n
}

func (w *ringWriter) writeString(s string) {
	n := copy(w.ring[w.i:], s)
	if n < len(s) {
		w.i = copy(w.ring, s[n:])
		return
	}
	w.i += n
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
	// The current segment's Wrote is set when the ring is committed
	// (commitLocked), not here: one atomic store less per put.
	l.head.Store(l.head.Load() + int64(n))
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
	if err := l.commitPutLocked(); err != nil {
		return ServiceNotAvailable
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
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
		l.logRollFailure(start, err)
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
