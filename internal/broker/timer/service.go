package timer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Defaults of Config.
const (
	DefaultBucketWidth        = 10 * time.Minute
	DefaultCheckpointInterval = time.Second
	DefaultCopyAfter          = time.Hour
	// poll is the longest sleep: how soon newly held messages are read
	// from the timer queue when no Notify wakes the service (and so the
	// extra lateness of a message whose time is less than this away when
	// it is sent).
	poll = 100 * time.Millisecond
	// loadAhead loads a bucket this long before it starts, so that its
	// first entries are in memory when due.
	loadAhead = time.Second
	// enqueueBatch bounds the entries read from the timer queue per round.
	enqueueBatch = 4096
	retryWait    = 100 * time.Millisecond
	// maxDeliverPerStep bounds one delivery round (a backlog after a
	// restart is delivered in rounds, with enqueue and Close in between).
	maxDeliverPerStep = 8192
)

// Store is what the service needs of the message store.
type Store interface {
	GetMessage(group, topic string, queueID int32, offset int64, maxMsgNums int, filter store.MessageFilter) (*store.GetResult, error)
	PutMessage(ctx context.Context, r *message.Record, opts store.PutOptions) store.PutResult
	ReadMessage(offset int64, size int32) (store.Buffer, error)
	CommitLogMinOffset() int64
}

// Config describes a Service.
type Config struct {
	Store Store
	// Dir holds the bucket files and the checkpoint (<root>/timerbuckets).
	Dir string
	FS  vfs.FS
	// BucketWidth is the time span of one bucket file (default 10 min).
	BucketWidth time.Duration
	// CheckpointInterval is how often the progress is saved (default 1 s):
	// the re-delivery bound after a crash (doc.go).
	CheckpointInterval time.Duration
	// CopyAfter: a message due later than this when it is filed is copied
	// into its bucket file, so that its delivery does not depend on the
	// CommitLog keeping it (retention: fileReservedTime, 72 h by default).
	// Default 1 h; keep it well below the CommitLog retention.
	CopyAfter time.Duration
	// Takeover, when set, is the progress of another master a promoted
	// broker goes on from (its slave copied it). It applies only to a
	// directory without a checkpoint (the broker clears its own stale
	// state first): the timer queue is read again from its start, and a
	// message below Takeover.EnqueueOffset due before Takeover.WatermarkMs
	// is skipped, since that master delivered it; every other one is
	// filed, so a message that master held and had not delivered yet is
	// delivered here, once.
	Takeover *Checkpoint
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Stats are counters for tests, benchmarks and monitoring.
type Stats struct {
	Enqueued  int64 // entries read from the timer queue since start
	Delivered int64 // messages re-put to their real topic since start
	Recalled  int64 // messages recalled (dropped when due) since start
	InMemory  int64 // entries in the in-memory heap now
	// EnqueueOffset is the next timer queue offset to read, WatermarkMs
	// the time up to which every held message was delivered (the
	// progress, as of the goroutine's last round).
	EnqueueOffset, WatermarkMs int64
}

// Service moves held timer messages to their real topic when due. One
// goroutine does everything (enqueue, load, deliver, checkpoint): the
// on-disk and in-memory state need no lock.
type Service struct {
	cfg  Config
	log  *slog.Logger
	b    *buckets
	loop lifecycle.Loop // the goroutine; Notify kicks it (a message was held)
	skip takeover       // what Config.Takeover says was delivered already

	// goroutine state
	prog       progress // in memory, ahead of the saved one
	saved      progress
	loadedUpTo int64 // every bucket with start < loadedUpTo is in heap
	heap       minHeap
	scratch    []entry // bucket load buffer
	copyBuf    []byte  // read buffer of copied records
	lastSave   time.Time
	dirty      bool // entries filed or delivered since the last save
	enqueued   atomic.Int64
	delivered  atomic.Int64
	// recalledCount counts held messages dropped because recalled.
	recalledCount atomic.Int64
	// published is the progress as of the last round, for Stats (prog
	// is the goroutine's): one pointer, stored once by a round that
	// advanced it, so a reader gets the offset and the watermark of the
	// same round. publications counts the stores (tests).
	published    atomic.Pointer[progress]
	publications atomic.Int64
	// checkpoint is the saved progress as Checkpoint reports it,
	// published by the goroutine after each save.
	checkpoint atomic.Pointer[Checkpoint]
	metrics    metrics // pending messages per real topic
	dist       *dist   // pending messages per second, next 24 h (snapshot.go)
	recalls    recalls // recalled messages not yet due (recall.go)
	inMemory   atomic.Int64
	closeOnce  sync.Once
	closeErr   error

	// The goroutine's failures repeat every round while their cause
	// lasts (a full disk, a store closing): one line per interval each.
	enqueueLog, loadLog, deliverLog, saveLog lograte.Limiter
}

// New opens the timer directory and its checkpoint. The service is stopped
// until Start.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Dir == "" {
		return nil, errors.New("timer: Store and Dir are required")
	}
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	if cfg.BucketWidth <= 0 {
		cfg.BucketWidth = DefaultBucketWidth
	}
	if cfg.BucketWidth < time.Second {
		return nil, fmt.Errorf("timer: bucket width %v below 1s", cfg.BucketWidth)
	}
	if cfg.CheckpointInterval <= 0 {
		cfg.CheckpointInterval = DefaultCheckpointInterval
	}
	if cfg.CopyAfter <= 0 {
		cfg.CopyAfter = DefaultCopyAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b, err := openBuckets(cfg.FS, cfg.Dir, cfg.BucketWidth.Milliseconds())
	if err != nil {
		return nil, err
	}
	p, found, err := b.readProgress()
	if err != nil {
		return nil, err
	}
	var skip takeover
	switch {
	case !found && cfg.Takeover != nil:
		p = progress{watermarkMs: cfg.Takeover.WatermarkMs}
		skip = takeover{belowOffset: cfg.Takeover.EnqueueOffset, dueBeforeMs: cfg.Takeover.WatermarkMs}
	case !found:
		p = progress{watermarkMs: cfg.Now().UnixMilli()}
		if len(b.order) > 0 {
			p.watermarkMs = b.order[0] // lost checkpoint: replay every bucket
		}
	}
	s := &Service{cfg: cfg, log: log, b: b, prog: p, saved: p, skip: skip}
	s.loadedUpTo = b.start(p.watermarkMs)
	nowMs := cfg.Now().UnixMilli()
	s.dist = newDist(b.width, nowMs)
	s.dist.scannedUpTo = b.start(nowMs)
	s.published.Store(&p)
	s.checkpoint.Store(&Checkpoint{WatermarkMs: p.watermarkMs, EnqueueOffset: p.enqueueOffset, SavedAtMs: cfg.Now().UnixMilli()})
	counts, err := readMetrics(cfg.FS, cfg.Dir)
	if errors.Is(err, errBadMetrics) {
		log.Warn("timer: pending counts lost, starting from zero", "err", err)
	} else if err != nil {
		return nil, err
	}
	s.metrics.load(counts)
	if err := s.loadRecalls(p.watermarkMs); err != nil {
		return nil, err
	}
	return s, nil
}

// Metrics returns the held messages not yet delivered per real topic
// (GET_TIMER_METRICS); safe from any goroutine.
func (s *Service) Metrics() map[string]TopicMetric { return s.metrics.snapshot() }

// Checkpoint is the timer's last saved progress (GET_TIMER_CHECK_POINT).
type Checkpoint struct {
	// WatermarkMs: every message due before it has been delivered.
	WatermarkMs int64
	// EnqueueOffset: the next offset of the timer queue to file.
	EnqueueOffset int64
	// Saves counts the checkpoint writes since start; SavedAtMs is the
	// time of the last one (or of the start).
	Saves     int64
	SavedAtMs int64
}

// Checkpoint returns the last saved progress; safe from any goroutine.
func (s *Service) Checkpoint() Checkpoint { return *s.checkpoint.Load() }

// Notify tells the service a message was put to Topic (a store arrival
// listener calls it): a message due within the poll interval is then read
// and delivered at once. Never blocks.
func (s *Service) Notify() {
	s.loop.Kick()
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	p := s.published.Load()
	return Stats{Enqueued: s.enqueued.Load(), Delivered: s.delivered.Load(), Recalled: s.recalledCount.Load(), InMemory: s.inMemory.Load(),
		EnqueueOffset: p.enqueueOffset, WatermarkMs: p.watermarkMs}
}

// Start starts the delivery goroutine. Held messages that were read into
// buckets before a crash are found again; the timer queue is read from the
// saved offset first (before any bucket is loaded, so a re-read entry only
// lands in its bucket file, where loading drops the duplicate).
func (s *Service) Start() error {
	s.loop.Start("timer", s.run)
	return nil
}

// Close stops the goroutine and saves the progress. Idempotent.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		s.loop.Close()
		s.closeErr = s.save()
		s.b.closeFiles()
	})
	return s.closeErr
}

func (s *Service) run(ctx context.Context) {
	// Catch up first: entries re-read after a crash must reach their
	// bucket files before any bucket is loaded (see Start).
	for {
		n, err := s.enqueue()
		if err != nil {
			s.enqueueLog.Log(s.log, slog.LevelWarn, "timer: enqueue failed", "err", err)
			break
		}
		if n < enqueueBatch {
			break
		}
		select {
		case <-ctx.Done():
			return
		default:
		}
	}
	for {
		wait := s.round()
		select {
		case <-ctx.Done():
			return
		default:
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-s.loop.Kicked():
				t.Stop()
			case <-t.C:
			}
		}
	}
}

// round is one round of the loop: one enqueue round per step (during a
// burst of sends, due messages are still delivered between rounds), then
// the progress published once. It returns how long to sleep.
func (s *Service) round() time.Duration {
	n, err := s.enqueue()
	if err != nil {
		s.enqueueLog.Log(s.log, slog.LevelWarn, "timer: enqueue failed", "err", err)
	}
	wait := s.step()
	s.publish()
	nowMs := s.cfg.Now().UnixMilli()
	s.dist.advance(nowMs)
	if err := s.scanStep(nowMs); err != nil {
		s.loadLog.Log(s.log, slog.LevelError, "timer: scan bucket failed", "err", err)
	}
	if n == enqueueBatch {
		wait = 0 // more to read
	}
	return wait
}

// publish makes the round's progress visible to Stats: one store, and
// none when the round did not advance it (an idle timer).
func (s *Service) publish() {
	if *s.published.Load() == s.prog {
		return
	}
	p := s.prog
	s.published.Store(&p)
	s.publications.Add(1)
}

// step loads due buckets, delivers due entries, saves the progress when
// it is time, and returns how long to sleep.
func (s *Service) step() time.Duration {
	now := s.cfg.Now()
	nowMs := now.UnixMilli()
	if err := s.loadUpTo(nowMs + loadAhead.Milliseconds()); err != nil {
		s.loadLog.Log(s.log, slog.LevelError, "timer: load bucket failed", "err", err)
		return retryWait
	}
	wait := poll
	for n := 0; len(s.heap) > 0; n++ {
		e := s.heap[0]
		if e.deliverMs > nowMs {
			wait = min(wait, time.Duration(e.deliverMs-nowMs)*time.Millisecond)
			break
		}
		if n == maxDeliverPerStep {
			// A backlog: come back at once, after the queue was read
			// and Close had a chance; everything before e is delivered.
			wait = 0
			nowMs = e.deliverMs - 1
			break
		}
		if err := s.deliver(e); err != nil {
			s.deliverLog.Log(s.log, slog.LevelWarn, "timer: delivery failed, retrying", "phyOffset", e.phyOffset, "err", err)
			s.prog.watermarkMs = max(s.prog.watermarkMs, e.deliverMs)
			s.inMemory.Store(int64(len(s.heap)))
			return retryWait
		}
		s.heap.pop()
		if s.b.start(e.deliverMs) < s.dist.scannedUpTo {
			s.dist.add(e.deliverMs, -1)
		}
		s.dirty = true
	}
	s.inMemory.Store(int64(len(s.heap)))
	// Every loaded entry due at or before nowMs was delivered.
	// Unloaded buckets start at loadedUpTo or later.
	s.prog.watermarkMs = max(s.prog.watermarkMs, min(nowMs+1, s.loadedUpTo))
	if s.loadedUpTo <= nowMs {
		wait = 0 // a backlog bucket waits for loading
	}
	if now.Sub(s.lastSave) >= s.cfg.CheckpointInterval {
		if err := s.save(); err != nil {
			s.saveLog.Log(s.log, slog.LevelError, "timer: save progress failed", "err", err)
		}
		s.lastSave = now
	}
	return wait
}

// enqueue reads newly held messages from the timer queue into buckets (and
// the heap when their bucket is loaded). It returns how many it read.
func (s *Service) enqueue() (int, error) {
	n := 0
	for n < enqueueBatch {
		res, err := s.cfg.Store.GetMessage("", Topic, 0, s.prog.enqueueOffset, 32, nil)
		if err != nil {
			return n, fmt.Errorf("timer: read %s: %w", Topic, err)
		}
		switch res.Status {
		case store.Found:
		case store.OffsetTooSmall, store.OffsetOverflowBadly, store.OffsetFoundNull,
			store.NoMatchedMessage, store.MessageWasRemoving:
			next := res.NextBeginOffset
			if res.Status == store.OffsetOverflowBadly {
				next = res.MaxOffset // a lost queue tail: go on from the end, never from 0
			}
			res.Release()
			if next == s.prog.enqueueOffset {
				return n, s.b.writePending()
			}
			s.log.Warn("timer: queue offset corrected", "from", s.prog.enqueueOffset, "to", next)
			s.prog.enqueueOffset, s.dirty = next, true
			continue
		default:
			res.Release()
			return n, s.b.writePending()
		}
		for i := range res.Messages {
			m := &res.Messages[i]
			s.add(m.Bytes, m.QueueOffset)
			s.prog.enqueueOffset = m.QueueOffset + 1
			n++
		}
		res.Release()
	}
	return n, s.b.writePending()
}

// takeover is the part of the timer queue another master delivered: the
// messages below belowOffset due before dueBeforeMs (Config.Takeover).
type takeover struct{ belowOffset, dueBeforeMs int64 }

// add files one held record (a raw timer-queue message at queueOffset).
func (s *Service) add(raw []byte, queueOffset int64) {
	rec, _, err := message.DecodeRecordNoCopy(raw, false)
	if err != nil {
		s.log.Error("timer: skipping undecodable held record", "err", err)
		return
	}
	deliverMs := int64(0)
	if v, ok := message.Property(rec.Properties, message.PropertyTimerOutMS); ok {
		deliverMs, _ = strconv.ParseInt(v, 10, 64)
	}
	if queueOffset < s.skip.belowOffset && deliverMs < s.skip.dueBeforeMs {
		return // delivered (or recalled) by the master this one took over from
	}
	if key, ok := message.Property(rec.Properties, message.PropertyTimerDelUniqKey); ok {
		// A recall marker: filed in the recalls file, never delivered.
		s.fileRecall(key, deliverMs)
		s.dirty = true
		return
	}
	// Past due (sent just before now, or read late after a restart):
	// deliver at the watermark, in a bucket that is not deleted yet.
	e := entry{deliverMs: max(deliverMs, s.prog.watermarkMs), phyOffset: rec.PhysicalOffset, fileOff: -1, size: int32(len(raw))}
	switch {
	case s.b.start(e.deliverMs) < s.loadedUpTo:
		s.b.add(e, nil)
		s.heap.push(e)
	case e.deliverMs-s.cfg.Now().UnixMilli() > s.cfg.CopyAfter.Milliseconds():
		s.b.add(e, raw) // far: keep a copy (never in the heap before its bucket loads)
	default:
		s.b.add(e, nil)
	}
	if s.b.start(e.deliverMs) < s.dist.scannedUpTo {
		s.dist.add(e.deliverMs, 1) // a bucket not scanned yet is counted by its scan
	}
	if topic, ok := message.Property(rec.Properties, message.PropertyRealTopic); ok {
		s.metrics.add(topic, 1, s.cfg.Now().UnixMilli())
	}
	s.enqueued.Add(1)
	s.dirty = true
}

// loadUpTo loads every bucket starting before limitMs into the heap.
func (s *Service) loadUpTo(limitMs int64) error {
	next := s.b.start(limitMs) + s.b.width
	if next <= s.loadedUpTo {
		return nil
	}
	if err := s.b.writePending(); err != nil {
		return err
	}
	for _, start := range s.b.order {
		if start < s.loadedUpTo {
			continue
		}
		if start >= next {
			break
		}
		if start < limitMs-loadAhead.Milliseconds() && len(s.heap) > 0 && s.heap[0].deliverMs < start {
			// A backlog (overdue buckets after an outage) is loaded one
			// bucket at a time: this one waits until the heap drained to
			// its start, so memory holds about one bucket, not every
			// overdue one. Buckets ahead of now load normally (on time).
			s.loadedUpTo = start
			s.inMemory.Store(int64(len(s.heap)))
			return nil
		}
		var err error
		s.scratch, err = s.b.load(start, s.prog.watermarkMs, s.scratch[:0])
		if err != nil {
			return err
		}
		for _, e := range s.scratch {
			s.heap.push(e)
		}
	}
	s.loadedUpTo = next
	s.inMemory.Store(int64(len(s.heap)))
	return nil
}

// deliver re-puts one held message to its real topic and queue.
func (s *Service) deliver(e entry) error {
	var raw []byte
	if e.fileOff >= 0 {
		var err error
		if s.copyBuf, err = s.b.readCopy(e, s.copyBuf); err != nil {
			return err
		}
		raw = s.copyBuf
	} else {
		buf, err := s.cfg.Store.ReadMessage(e.phyOffset, e.size)
		if err != nil {
			if e.phyOffset < s.cfg.Store.CommitLogMinOffset() {
				// Deleted by retention (or a forced clean): waiting cannot
				// bring it back, and it must not block the others.
				s.log.Error("timer: held record deleted from the CommitLog before delivery; dropped",
					"phyOffset", e.phyOffset, "deliverMs", e.deliverMs)
				return nil
			}
			return fmt.Errorf("timer: read held record at %d: %w", e.phyOffset, err)
		}
		defer buf.Release()
		raw = buf.Bytes
	}
	rec, err := Restore(raw)
	if err != nil {
		s.log.Error("timer: dropping unusable held record", "phyOffset", e.phyOffset, "err", err)
		return nil
	}
	if s.recalled(&rec, e.deliverMs) {
		s.metrics.add(rec.Topic, -1, s.cfg.Now().UnixMilli())
		s.recalledCount.Add(1)
		return nil
	}
	res := s.cfg.Store.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true, NoDelayRewrite: true})
	if !res.Status.Stored() {
		return fmt.Errorf("timer: put to %s/%d: %s", rec.Topic, rec.QueueID, res.Status)
	}
	s.metrics.add(rec.Topic, -1, s.cfg.Now().UnixMilli())
	s.delivered.Add(1)
	return nil
}

// bucketDeletable reports a bucket file entirely below the watermark.
func (s *Service) bucketDeletable() bool {
	return len(s.b.order) > 0 && s.b.order[0]+s.b.width <= s.prog.watermarkMs && s.b.order[0] < s.loadedUpTo
}

// save writes the bucket files, syncs them, saves the progress and then
// deletes the buckets entirely below the saved watermark.
func (s *Service) save() error {
	if err := s.b.writePending(); err != nil {
		return err
	}
	// An idle timer does not rewrite its checkpoint every second: with
	// nothing filed or delivered since the last save, no entry lies
	// between the saved and the current watermark.
	if s.prog == s.saved || (!s.dirty && !s.bucketDeletable()) {
		return nil
	}
	if err := s.b.sync(); err != nil {
		return err
	}
	if err := s.saveRecalls(s.prog.watermarkMs); err != nil {
		return err
	}
	if err := writeMetrics(s.cfg.FS, s.cfg.Dir, s.metrics.snapshot()); err != nil {
		return err
	}
	if err := s.b.writeProgress(s.prog); err != nil {
		return err
	}
	s.saved, s.dirty = s.prog, false
	prev := s.checkpoint.Load()
	s.checkpoint.Store(&Checkpoint{WatermarkMs: s.saved.watermarkMs, EnqueueOffset: s.saved.enqueueOffset,
		Saves: prev.Saves + 1, SavedAtMs: s.cfg.Now().UnixMilli()})
	for len(s.b.order) > 0 {
		start := s.b.order[0]
		if start+s.b.width > s.saved.watermarkMs || start >= s.loadedUpTo {
			break
		}
		if err := s.b.remove(start); err != nil {
			return err
		}
	}
	return nil
}

// Restore builds the message to deliver from a record held in Topic:
// topic and queue from REAL_TOPIC and REAL_QID (both removed), the other
// fields and properties kept (TIMER_OUT_MS tells the consumer when it was
// due).
func Restore(raw []byte) (message.Record, error) {
	held, _, err := message.DecodeRecordNoCopy(raw, false)
	if err != nil {
		return message.Record{}, fmt.Errorf("timer: decode held record: %w", err)
	}
	topic, ok := message.Property(held.Properties, message.PropertyRealTopic)
	if !ok || topic == "" {
		return message.Record{}, fmt.Errorf("timer: held record without %s", message.PropertyRealTopic)
	}
	qid := int64(0)
	if v, ok := message.Property(held.Properties, message.PropertyRealQueueID); ok {
		if qid, err = strconv.ParseInt(v, 10, 32); err != nil || qid < 0 {
			return message.Record{}, fmt.Errorf("timer: held record with bad %s %q", message.PropertyRealQueueID, v)
		}
	}
	props := message.DeleteProperty(held.Properties, message.PropertyRealTopic)
	props = message.DeleteProperty(props, message.PropertyRealQueueID)
	return message.Record{
		Topic:          topic,
		QueueID:        int32(qid),
		Flag:           held.Flag,
		SysFlag:        held.SysFlag,
		BornTimestamp:  held.BornTimestamp,
		BornHost:       held.BornHost,
		StoreHost:      held.StoreHost,
		ReconsumeTimes: held.ReconsumeTimes,
		Body:           held.Body,
		Properties:     props,
	}, nil
}
