package pop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
)

// reviveBatch is how many revive log records one read takes.
const reviveBatch = 32

// defaultRetryMaxTimes applies to a group without a config (Java's
// SubscriptionGroupConfig default).
const defaultRetryMaxTimes = 16

// reviver is PopReviveService: it reads each revive queue, matches acks
// to check points and, once a check point's invisibility is over, puts
// its unacked messages into the pop retry topic (or the DLQ). Only the
// Service's goroutine (or a test through Service.Revive) runs it.
type reviver struct {
	s      *Service
	queues []*reviveQueue
	warn   lograte.Limiter // revive failures: one line per 30 s
}

// reviveQueue is one revive queue's state: the next record to read and
// the check points read and not yet resolved.
type reviveQueue struct {
	id      int32
	loaded  bool
	next    int64
	pending map[string]*pendingCK
	// ack and key are apply's scratch space.
	ack ackView
	key []byte
	obs ReviveObserver // nil: not counted

	// What ReviveLags reads (scrapes run on other goroutines): next
	// (-1 until the queue's position is loaded), the check points due
	// whose revive failed (kept for the next round) and the earliest
	// revive time among them (ms).
	readTo        atomic.Int64
	overdue       atomic.Int64
	oldestOverdue atomic.Int64
}

type pendingCK struct {
	ck     CheckPoint
	at     int64 // the ck record's offset in the revive queue
	acked  uint64
	nAcked int
}

func newReviver(s *Service) *reviver {
	r := &reviver{s: s}
	r.warn.Every = 30 * time.Second
	for q := range s.cfg.ReviveQueueNum {
		rq := &reviveQueue{id: q, pending: make(map[string]*pendingCK), obs: s.cfg.ReviveLog}
		rq.readTo.Store(-1)
		r.queues = append(r.queues, rq)
	}
	return r
}

func (r *reviver) runOnce(now time.Time) {
	for _, q := range r.queues {
		r.runQueue(q, now.UnixMilli())
	}
}

// runQueue reads the queue's new records, revives the check points due
// and commits the queue's progress: the offset of the oldest unresolved
// check point, so that after a restart every check point still open, and
// every ack after it, is read again.
func (r *reviver) runQueue(q *reviveQueue, now int64) {
	s := r.s
	if !q.loaded {
		if off, ok := s.cfg.Offsets.Query(ReviveGroup, s.reviveTopic, q.id); ok && off >= 0 {
			q.next = off
		} else {
			q.next = s.cfg.Store.MinOffset(s.reviveTopic, q.id)
		}
		q.loaded = true
	}
	for {
		g, err := s.cfg.Store.GetMessage(ReviveGroup, s.reviveTopic, q.id, q.next, reviveBatch, nil)
		if err != nil {
			r.failed(fmt.Errorf("read revive queue %d: %w", q.id, err))
			return
		}
		n := len(g.Messages)
		for _, m := range g.Messages {
			q.apply(m.Bytes, m.QueueOffset)
		}
		if g.NextBeginOffset > q.next {
			q.next = g.NextBeginOffset
		}
		g.Release()
		if n == 0 {
			break
		}
	}
	q.readTo.Store(q.next)
	var overdue, oldest int64
	for key, p := range q.pending {
		if p.ck.Revive() > now {
			continue
		}
		if err := r.revive(&p.ck, p.acked); err != nil {
			r.failed(err)
			overdue++
			if oldest == 0 || p.ck.Revive() < oldest {
				oldest = p.ck.Revive()
			}
			continue // kept: tried again next round
		}
		delete(q.pending, key)
	}
	q.overdue.Store(overdue)
	q.oldestOverdue.Store(oldest)
	progress := q.next
	for _, p := range q.pending {
		progress = min(progress, p.at)
	}
	s.cfg.Offsets.Commit(ReviveGroup, s.reviveTopic, q.id, progress)
}

// apply reads one revive log record: a check point joins pending, an ack
// marks its message; a fully acked check point is resolved.
func (q *reviveQueue) apply(rec []byte, at int64) {
	r, _, err := message.DecodeRecordNoCopy(rec, false)
	if err != nil {
		return
	}
	tag, _ := message.Property(r.Properties, message.PropertyTags)
	switch tag {
	case ckTag:
		var ck CheckPoint
		if json.Unmarshal(r.Body, &ck) != nil || ck.Num <= 0 {
			return
		}
		if q.obs != nil {
			q.obs.ReviveGot(ck.CID, ck.Topic, q.id, true)
		}
		key := ck.key()
		if _, dup := q.pending[key]; !dup {
			q.pending[key] = &pendingCK{ck: ck, at: at}
		}
	case ackTag, batchAckTag:
		// One ack record per acknowledged message: read without
		// reflection and looked up without building the key string.
		v := &q.ack
		if !parseAckJSON(r.Body, v) {
			var a AckMsg
			if json.Unmarshal(r.Body, &a) != nil {
				return
			}
			v.ackOffset, v.startOffset, v.popTime, v.queueID = a.AckOffset, a.StartOffset, a.PopTime, a.QueueID
			v.group, v.topic, v.broker = []byte(a.ConsumerGroup), []byte(a.Topic), []byte(a.BrokerName)
			v.offsets = a.AckOffsetList
		}
		q.key = v.appendKey(q.key[:0])
		p, ok := q.pending[string(q.key)]
		if q.obs != nil {
			if ok {
				q.obs.ReviveGot(p.ck.CID, p.ck.Topic, q.id, false) // the same group and topic
			} else {
				q.obs.ReviveGot(string(v.group), string(v.topic), q.id, false)
			}
		}
		if !ok {
			return // its check point is resolved already
		}
		if tag == ackTag {
			p.ack(v.ackOffset)
		} else {
			for _, off := range v.offsets {
				p.ack(off)
			}
		}
		if p.nAcked >= int(p.ck.Num) {
			delete(q.pending, string(q.key))
		}
	}
}

// ack marks the message at offset acked.
func (p *pendingCK) ack(off int64) {
	if i := p.ck.indexOf(off); i >= 0 && p.acked&(1<<i) == 0 {
		p.acked |= 1 << i
		p.nAcked++
	}
}

// revive puts each unacked message of ck into the retry topic, or the
// DLQ once it was delivered retryMaxTimes times already.
func (r *reviver) revive(ck *CheckPoint, acked uint64) error {
	for i := range int(ck.Num) {
		if acked&(1<<i) != 0 {
			continue
		}
		if err := r.reviveOne(ck, ck.offsetAt(i)); err != nil {
			return err
		}
	}
	return nil
}

func (r *reviver) reviveOne(ck *CheckPoint, offset int64) error {
	s := r.s
	g, err := s.cfg.Store.GetMessage(ReviveGroup, ck.Topic, ck.QueueID, offset, 1, nil)
	if err != nil {
		return fmt.Errorf("revive %s@%d offset %d: %w", ck.Topic, ck.QueueID, offset, err)
	}
	defer g.Release()
	if len(g.Messages) == 0 || g.Messages[0].QueueOffset != offset {
		// Deleted by retention meanwhile: nothing left to revive.
		s.log.Warn("pop: revive: message gone", "topic", ck.Topic, "queue", ck.QueueID, "offset", offset, "status", g.Status)
		return nil
	}
	orig, _, err := message.DecodeRecord(g.Messages[0].Bytes, false)
	if err != nil {
		return fmt.Errorf("revive %s@%d offset %d: %w", ck.Topic, ck.QueueID, offset, err)
	}
	maxTimes := int32(defaultRetryMaxTimes)
	if gc, ok := s.cfg.Groups.Get(ck.CID); ok {
		maxTimes = gc.RetryMaxTimes
	}
	rec := message.Record{
		Flag: orig.Flag, SysFlag: orig.SysFlag, BornTimestamp: orig.BornTimestamp, BornHost: s.cfg.StoreHost,
		ReconsumeTimes: orig.ReconsumeTimes + 1, Body: orig.Body,
	}
	props := orig.Properties
	if orig.ReconsumeTimes >= maxTimes {
		dlq, _, err := s.cfg.Topics.EnsureDLQTopic(ck.CID)
		if err != nil {
			return fmt.Errorf("revive: DLQ topic of %s: %w", ck.CID, err)
		}
		rec.Topic, rec.QueueID = dlq.TopicName, 0
		if _, set := message.Property(props, message.PropertyRetryTopic); !set {
			props = message.SetProperty(props, message.PropertyRetryTopic, ck.Topic)
		}
		if id, _ := message.Property(props, message.PropertyOriginMessageID); id == "" {
			props = message.SetProperty(props, message.PropertyOriginMessageID, message.OffsetMsgID(orig.StoreHost, orig.PhysicalOffset))
		}
	} else {
		target := ck.Topic
		if !strings.HasPrefix(target, retryPrefix) {
			target = RetryTopic(ck.Topic, ck.CID, s.cfg.RetryV2)
		}
		if _, _, err := s.cfg.Topics.EnsureTopic(target, 1, meta.PermReadWrite, 0); err != nil {
			return fmt.Errorf("revive: retry topic %s: %w", target, err)
		}
		rec.Topic, rec.QueueID = target, 0
		if _, set := message.Property(props, message.PropertyFirstPopTime); orig.ReconsumeTimes == 0 || !set {
			props = message.SetProperty(props, message.PropertyFirstPopTime, fmt.Sprint(ck.PopTime))
		}
	}
	rec.Properties = props
	res := s.cfg.Store.PutMessage(context.Background(), &rec, store.PutOptions{NoDelayRewrite: true})
	if s.cfg.RevivedToRetry != nil && !meta.IsDLQTopic(rec.Topic) {
		// PopReviveService.reviveRetry counts every put, stored or not.
		s.cfg.RevivedToRetry(ck.CID, ck.Topic, res.Status.String())
	}
	if !res.Status.Stored() {
		return fmt.Errorf("revive %s@%d offset %d into %s: %s", ck.Topic, ck.QueueID, offset, rec.Topic, res.Status)
	}
	if s.cfg.SentToDLQ != nil && meta.IsDLQTopic(rec.Topic) {
		s.cfg.SentToDLQ(ck.CID, ck.Topic)
	}
	return nil
}

// failed logs a revive failure, at most once every 30 s.
func (r *reviver) failed(err error) {
	r.warn.Log(r.s.log, slog.LevelWarn, "pop: revive failed, retried next round", "err", err)
}

// ReviveLag is one revive queue's processing lag (PopReviveService's
// getReviveBehindMessages and getReviveBehindMillis).
type ReviveLag struct {
	QueueID int32
	// Messages: records of the queue the revive service has not read
	// yet, plus check points due whose revive failed (retried next
	// round).
	Messages int64
	// LatencyMs: how long the oldest of them has waited: now minus the
	// store time of the first unread record, or minus the revive time
	// of the earliest failed check point, whichever is longer; 0 when
	// nothing waits.
	LatencyMs int64
}

// ReviveLags returns each revive queue's lag at now; a queue the revive
// service has not read yet has none (Java: 0 before its first round).
// Safe for concurrent use.
func (s *Service) ReviveLags(now time.Time) []ReviveLag {
	out := make([]ReviveLag, 0, len(s.reviver.queues))
	nowMs := now.UnixMilli()
	for _, q := range s.reviver.queues {
		l := ReviveLag{QueueID: q.id}
		if next := q.readTo.Load(); next >= 0 {
			unread := max(s.cfg.Store.MaxOffset(s.reviveTopic, q.id)-next, 0)
			l.Messages = unread + q.overdue.Load()
			if unread > 0 {
				if at := s.cfg.Store.MessageStoreTimestamp(s.reviveTopic, q.id, next); at > 0 {
					l.LatencyMs = max(nowMs-at, 0)
				}
			}
			if oldest := q.oldestOverdue.Load(); q.overdue.Load() > 0 && oldest > 0 {
				l.LatencyMs = max(l.LatencyMs, nowMs-oldest)
			}
		}
		out = append(out, l)
	}
	return out
}
