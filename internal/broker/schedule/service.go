package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
)

// Defaults of Config.
const (
	DefaultPersistInterval = 10 * time.Second
	// maxEmptyPoll bounds the wait on an empty (or caught-up) level
	// queue; the wait is half the level's delay, at least minEmptyPoll: a
	// new message is due one level delay after it is stored, so the loop
	// sees it before it is due and then sleeps exactly until then.
	maxEmptyPoll = time.Second
	minEmptyPoll = 20 * time.Millisecond
	// retryWait is the wait after a failed put or read (Java: 100 ms).
	retryWait = 100 * time.Millisecond
	// batch is how many units one read returns at most.
	batch = 32
)

// Store is what the service needs of the message store.
type Store interface {
	GetMessage(group, topic string, queueID int32, offset int64, maxMsgNums int, filter store.MessageFilter) (*store.GetResult, error)
	PutMessage(ctx context.Context, r *message.Record, opts store.PutOptions) store.PutResult
}

// Config describes a Service.
type Config struct {
	Store Store
	// Offsets is config/delayOffset.json. The service starts its
	// auto-persist and closes it on Close.
	Offsets *meta.DelayOffsets
	// Levels are the delay levels (messageDelayLevel); level n is Levels[n-1].
	Levels []time.Duration
	// PersistInterval is flushDelayOffsetInterval (default 10 s).
	PersistInterval time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Service runs one delivery loop per delay level. Start it once, Close it
// before the store.
type Service struct {
	cfg   Config
	log   *slog.Logger
	loops []lifecycle.Loop // one per level
	// A failing delivery is retried every retryWait while its cause lasts
	// (a full disk): one line per interval and level.
	deliverLog []lograte.Limiter

	startOnce, closeOnce sync.Once
	closeErr             error
}

// New checks cfg and returns a stopped Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Offsets == nil {
		return nil, errors.New("schedule: Store and Offsets are required")
	}
	if len(cfg.Levels) == 0 {
		return nil, errors.New("schedule: no delay levels")
	}
	for i, d := range cfg.Levels {
		if d <= 0 {
			return nil, fmt.Errorf("schedule: delay level %d is %v, must be positive", i+1, d)
		}
	}
	if cfg.PersistInterval <= 0 {
		cfg.PersistInterval = DefaultPersistInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, log: log, loops: make([]lifecycle.Loop, len(cfg.Levels)),
		deliverLog: make([]lograte.Limiter, len(cfg.Levels))}, nil
}

// Start starts the delivery loops and the offset auto-persist.
func (s *Service) Start() error {
	var err error
	s.startOnce.Do(func() {
		if err = s.cfg.Offsets.StartAutoPersist(s.cfg.PersistInterval); err != nil {
			err = fmt.Errorf("schedule: %w", err)
			return
		}
		for i := range s.loops {
			level := int32(i + 1)
			s.loops[i].Start(fmt.Sprintf("schedule-level-%d", level), func(ctx context.Context) { s.run(ctx, level) })
		}
	})
	return err
}

// Close stops the loops, waits for them, then saves delayOffset.json.
// Idempotent.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		for i := range s.loops {
			s.loops[i].Close()
		}
		s.closeErr = s.cfg.Offsets.Close()
	})
	return s.closeErr
}

// sleep waits d or until Close; false when closing.
func (s *Service) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// run is the delivery loop of one level.
func (s *Service) run(ctx context.Context, level int32) {
	delay := s.cfg.Levels[level-1]
	offset, _ := s.cfg.Offsets.Get(level)
	for {
		select {
		case <-ctx.Done():
			return
		default:
		}
		next, wait := s.deliverDue(level, delay, offset)
		if next != offset {
			offset = next
			s.cfg.Offsets.Set(level, offset)
		}
		if wait > 0 && !s.sleep(ctx, wait) {
			return
		}
	}
}

// deliverDue delivers the due messages from offset on and returns the new
// offset and how long to wait before the next call (0: call again now).
func (s *Service) deliverDue(level int32, delay time.Duration, offset int64) (int64, time.Duration) {
	res, err := s.cfg.Store.GetMessage("", message.ScheduleTopic, level-1, offset, batch, nil)
	if err != nil { // closed store
		return offset, retryWait
	}
	defer res.Release()
	switch res.Status {
	case store.Found:
	case store.OffsetOverflowBadly:
		// Saved progress beyond the queue (its tail was lost in a crash
		// before the offsets file): go on from the end, never from 0.
		s.log.Warn("schedule: offset beyond the queue corrected", "level", level, "from", offset, "to", res.MaxOffset)
		return res.MaxOffset, 0
	case store.OffsetTooSmall, store.OffsetFoundNull,
		store.NoMatchedMessage, store.MessageWasRemoving:
		if res.NextBeginOffset != offset {
			s.log.Warn("schedule: offset corrected", "level", level, "from", offset, "to", res.NextBeginOffset,
				"status", res.Status.String())
			return res.NextBeginOffset, 0
		}
		return offset, emptyPoll(delay)
	default: // empty or caught up
		return offset, emptyPoll(delay)
	}
	for i := range res.Messages {
		m := &res.Messages[i]
		now := s.cfg.Now().UnixMilli()
		due := m.TagsCode
		if due > now+delay.Milliseconds() {
			// A delivery time beyond now + delay comes from a clock that
			// went back or a changed level table: deliver now (Java does).
			due = now
		}
		if due > now {
			return offset, time.Duration(due-now) * time.Millisecond
		}
		if err := s.deliver(m.Bytes); err != nil {
			s.deliverLog[level-1].Log(s.log, slog.LevelWarn, "schedule: delivery failed, retrying", "level", level, "queueOffset", m.QueueOffset, "err", err)
			return offset, retryWait
		}
		offset = m.QueueOffset + 1
	}
	return offset, 0
}

// emptyPoll is the wait on an empty level queue (see maxEmptyPoll).
func emptyPoll(delay time.Duration) time.Duration {
	return min(maxEmptyPoll, max(minEmptyPoll, delay/2))
}

// errUndecodable marks a unit whose record cannot be decoded: skipped.
var errUndecodable = errors.New("undecodable record")

// deliver re-puts one parked record to its real topic and queue. A record
// that cannot be decoded or has no real topic is logged and skipped
// (retrying cannot help); a refused put is an error (retried).
func (s *Service) deliver(raw []byte) error {
	rec, err := Restore(raw)
	if err != nil {
		s.log.Error("schedule: dropping unusable parked record", "err", err)
		return nil
	}
	if rec.Topic == meta.TransHalfTopic {
		return nil // Java discards these too
	}
	res := s.cfg.Store.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true, NoDelayRewrite: true})
	if !res.Status.Stored() {
		return fmt.Errorf("schedule: put to %s/%d: %s", rec.Topic, rec.QueueID, res.Status)
	}
	return nil
}

// Restore builds the message to deliver from a record parked in
// SCHEDULE_TOPIC_XXXX (spec §9.2): topic and queue from REAL_TOPIC and
// REAL_QID, DELAY removed, the other fields and properties kept.
func Restore(raw []byte) (message.Record, error) {
	parked, _, err := message.DecodeRecordNoCopy(raw, false)
	if err != nil {
		return message.Record{}, fmt.Errorf("%w: %w", errUndecodable, err)
	}
	topic, ok := message.Property(parked.Properties, message.PropertyRealTopic)
	if !ok || topic == "" {
		return message.Record{}, fmt.Errorf("%w: no %s", errUndecodable, message.PropertyRealTopic)
	}
	qid := int64(0)
	if v, ok := message.Property(parked.Properties, message.PropertyRealQueueID); ok {
		if qid, err = strconv.ParseInt(v, 10, 32); err != nil || qid < 0 {
			return message.Record{}, fmt.Errorf("%w: bad %s %q", errUndecodable, message.PropertyRealQueueID, v)
		}
	}
	return message.Record{
		Topic:          topic,
		QueueID:        int32(qid),
		Flag:           parked.Flag,
		SysFlag:        parked.SysFlag,
		BornTimestamp:  parked.BornTimestamp,
		BornHost:       parked.BornHost,
		StoreHost:      parked.StoreHost,
		ReconsumeTimes: parked.ReconsumeTimes,
		Body:           parked.Body,
		Properties:     message.DeleteProperty(parked.Properties, message.PropertyDelayTimeLevel),
	}, nil
}
