package txn

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// readBatch is how many queue entries one read of the half or op queue
// takes (Java pulls 32 at a time).
const readBatch = 32

// checkRound runs one round of the check-back (doc.go, "Check-back").
func (s *Service) checkRound() {
	now := s.cfg.Now()
	s.pruneSettled(now)
	st := s.cfg.Store
	halfMax := st.MaxOffset(meta.TransHalfTopic, 0)
	if halfMax <= 0 {
		return
	}
	halfProgress := s.progress(meta.TransHalfTopic)
	opProgress := s.progress(meta.TransOpHalfTopic)
	opMax := st.MaxOffset(meta.TransOpHalfTopic, 0)
	if s.ops.base != opProgress || s.ops.next() > opMax {
		s.ops.reset(opProgress)
	}
	s.ops.trimDone(halfProgress)
	s.readOps(opMax, halfProgress, now)

	newHalf := s.walk(now, halfProgress, halfMax)
	s.halfProgress.Store(newHalf)
	newOp := s.ops.advance(newHalf)
	s.ops.trimDone(newHalf)
	if newHalf == halfProgress && newOp == opProgress {
		return
	}
	s.cfg.Offsets.Commit(meta.TransCheckGroup, meta.TransHalfTopic, 0, newHalf)
	s.cfg.Offsets.Commit(meta.TransCheckGroup, meta.TransOpHalfTopic, 0, newOp)
	// Persist now rather than at the next periodic flush: after a crash a
	// stale progress makes the next process check (and re-append) the
	// same half messages again.
	if err := s.cfg.Offsets.Persist(); err != nil {
		s.log.Warn("txn: persist check progress", "err", err)
	}
	s.log.Debug("txn: check round", "halfProgress", newHalf, "opProgress", newOp)
}

// progress returns the stored check progress on topic, or the queue's min
// offset (also when the stored one fell below it).
func (s *Service) progress(topic string) int64 {
	minOff := s.cfg.Store.MinOffset(topic, 0)
	if off, ok := s.cfg.Offsets.Query(meta.TransCheckGroup, topic, 0); ok && off >= minOff {
		return off
	}
	return minOff
}

// readOps reads the op records from s.ops.next() up to opMax. An op
// record for a half message the walk already passed is a late END: it
// settled a message a check had re-appended, and the copy must not be
// checked (and committed) again, so the transaction's UNIQ_KEY joins the
// settled set.
func (s *Service) readOps(opMax, halfProgress int64, now time.Time) {
	for s.ops.next() < opMax && !s.stopping() {
		from := s.ops.next()
		res, err := s.cfg.Store.GetMessage(meta.TransCheckGroup, meta.TransOpHalfTopic, 0, from, readBatch, nil)
		if err != nil {
			return
		}
		if res.Status != store.Found {
			next := res.NextBeginOffset
			res.Release()
			if next <= from {
				return
			}
			// Entries the store skipped (files gone) settle nothing.
			for range next - from {
				s.ops.addOp(nil)
			}
			continue
		}
		for _, m := range res.Messages {
			for s.ops.next() < m.QueueOffset {
				s.ops.addOp(nil)
			}
			if m.QueueOffset < s.ops.next() {
				continue
			}
			r, _, err := message.DecodeRecordNoCopy(m.Bytes, false)
			var offs []int64
			if err == nil {
				offs = parseOp(r.Properties, r.Body)
			}
			s.ops.addOp(offs)
			for _, h := range offs {
				if h < halfProgress {
					s.settlePassed(h, now)
				}
			}
		}
		res.Release()
	}
}

// settlePassed marks the transaction of the half message at queue offset
// h as settled (see readOps).
func (s *Service) settlePassed(h int64, now time.Time) {
	res, err := s.cfg.Store.GetMessage(meta.TransCheckGroup, meta.TransHalfTopic, 0, h, 1, nil)
	if err != nil {
		return
	}
	defer res.Release()
	if res.Status != store.Found || res.Messages[0].QueueOffset != h {
		return
	}
	r, _, err := message.DecodeRecordNoCopy(res.Messages[0].Bytes, false)
	if err != nil {
		return
	}
	s.markSettled(strings.Clone(settleKey(&r)), now)
}

// walk checks the half messages in [from, end) and returns the new half
// progress: the first offset not dealt with.
func (s *Service) walk(now time.Time, from, end int64) int64 {
	i := from
	for i < end && !s.stopping() {
		res, err := s.cfg.Store.GetMessage(meta.TransCheckGroup, meta.TransHalfTopic, 0, i, readBatch, nil)
		if err != nil {
			return i
		}
		if res.Status != store.Found {
			next := res.NextBeginOffset
			res.Release()
			if next <= i {
				return i
			}
			i = min(next, end)
			continue
		}
		stop := false
		for _, m := range res.Messages {
			if m.QueueOffset >= end {
				stop = true
				break
			}
			if !s.visit(now, m) {
				stop = true
				break
			}
			i = m.QueueOffset + 1
		}
		if !stop && len(res.Messages) > 0 {
			i = max(i, res.NextBeginOffset)
		}
		res.Release()
		if stop {
			return min(i, end)
		}
	}
	return min(i, end)
}

// visit deals with the half message m; false stops the walk at m (too
// young, or a write failed: the next round retries it).
func (s *Service) visit(now time.Time, m store.Message) bool {
	if s.ops.isDone(m.QueueOffset) {
		return true
	}
	r, _, err := message.DecodeRecordNoCopy(m.Bytes, false)
	if err != nil {
		s.log.Warn("txn: undecodable half message skipped", "queueOffset", m.QueueOffset, "err", err)
		return true
	}
	if s.isSettled(settleKey(&r)) {
		return true
	}
	times := 0
	if v, ok := message.Property(r.Properties, message.PropertyTransactionCheckTimes); ok {
		times, _ = strconv.Atoi(v)
	}
	age := now.Sub(time.UnixMilli(r.BornTimestamp))
	if times >= s.cfg.CheckMax || age > s.cfg.FileReservedTime {
		return s.discard(&r)
	}
	if v, ok := message.Property(r.Properties, message.PropertyCheckImmunityTimeInSeconds); ok {
		// The producer asked for a longer first-check delay: the message
		// must not hold up the walk meanwhile, so it is re-appended (as
		// Java does) until its immunity ends.
		immunity := s.cfg.Timeout
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && time.Duration(secs)*time.Second > immunity {
			immunity = time.Duration(secs) * time.Second
		}
		if age < immunity {
			if v, ok := message.Property(r.Properties, message.PropertyTransactionPreparedQueueOff); ok {
				if first, err := strconv.ParseInt(v, 10, 64); err == nil {
					if s.ops.isDone(first) {
						return true
					}
				}
			}
			return s.reappendImmune(&r)
		}
	} else if age >= 0 && age < s.cfg.Timeout {
		// A negative age (the producer's clock is ahead) is checked, as
		// Java does: waiting for it could take forever.
		return false
	}
	return s.check(&r, times+1)
}

// reappendImmune stores r again in the half queue, unchecked, with
// TRAN_PREPARED_QUEUE_OFFSET naming its first half offset (where an END
// from the producer points).
func (s *Service) reappendImmune(r *message.Record) bool {
	props := r.Properties
	if _, ok := message.Property(props, message.PropertyTransactionPreparedQueueOff); !ok {
		props = message.SetProperty(props, message.PropertyTransactionPreparedQueueOff, strconv.FormatInt(r.QueueOffset, 10))
	}
	res := s.putCopy(r, meta.TransHalfTopic, r.SysFlag, props)
	if permanent(res.Status) {
		return s.discard(r)
	}
	if res.Status != store.PutOK {
		s.log.Warn("txn: re-append immune half message", "halfOffset", r.QueueOffset, "status", res.Status)
		return false
	}
	return true
}

// putCopy stores a copy of the half message r in queue 0 of topic with
// sysFlag and props, without waiting for flush and without the delay-level
// rewrite (the copy is stored as it is, not scheduled).
func (s *Service) putCopy(r *message.Record, topic string, sysFlag int32, props string) store.PutResult {
	c := message.Record{
		Topic: topic, QueueID: 0, Flag: r.Flag, SysFlag: sysFlag,
		BornTimestamp: r.BornTimestamp, BornHost: r.BornHost, ReconsumeTimes: r.ReconsumeTimes,
		Body: r.Body, Properties: props,
	}
	return s.cfg.Store.PutMessage(context.Background(), &c, store.PutOptions{NoWait: true, NoDelayRewrite: true})
}

// permanent reports whether a put refused with st can never succeed for
// the same record (as opposed to a full disk or a busy store).
func permanent(st store.PutStatus) bool {
	return st == store.MessageIllegal || st == store.PropertiesSizeExceeded
}

// discard moves r to TRANS_CHECK_MAX_TIME_TOPIC: it is never checked again.
func (s *Service) discard(r *message.Record) bool {
	if _, _, err := s.cfg.Topics.EnsureTopic(meta.TransCheckMaxTopic, 1, meta.PermReadWrite, 0); err != nil {
		s.log.Warn("txn: create "+meta.TransCheckMaxTopic, "err", err)
		return false
	}
	res := s.putCopy(r, meta.TransCheckMaxTopic, message.WithTransactionType(r.SysFlag, message.TransactionNotType), r.Properties)
	if res.Status != store.PutOK {
		s.log.Warn("txn: discard half message", "halfOffset", r.QueueOffset, "status", res.Status)
		return false
	}
	s.log.Info("txn: half message discarded after too many checks", "halfOffset", r.QueueOffset,
		"uniqKey", settleKey(r), "to", meta.TransCheckMaxTopic)
	if s.cfg.Observer != nil {
		topic, _ := message.Property(r.Properties, message.PropertyRealTopic)
		s.cfg.Observer.HalfDone(topic)
	}
	return true
}

// check re-appends r to the half queue with TRANSACTION_CHECK_TIMES = times
// and asks a producer of its group about the new copy.
func (s *Service) check(r *message.Record, times int) bool {
	props := message.SetProperty(r.Properties, message.PropertyTransactionCheckTimes, strconv.Itoa(times))
	res := s.putCopy(r, meta.TransHalfTopic, r.SysFlag, props)
	if permanent(res.Status) {
		// The added property does not fit: the message can never be
		// checked, and retrying would hold up the walk for good.
		return s.discard(r)
	}
	if res.Status != store.PutOK {
		s.log.Warn("txn: re-append half message", "halfOffset", r.QueueOffset, "status", res.Status)
		return false
	}
	group, _ := message.Property(props, message.PropertyProducerGroup)
	if s.cfg.PickProducer == nil {
		return true
	}
	p, ok := s.cfg.PickProducer(group)
	if !ok {
		s.log.Debug("txn: no producer to check with", "group", group, "halfOffset", res.QueueOffset)
		return true
	}
	req := s.checkRequest(r, props, res)
	if err := p.InvokeOneway(req); err != nil {
		s.log.Debug("txn: send check", "group", group, "to", p.RemoteAddr(), "err", err)
	}
	return true
}

// checkRequest builds CHECK_TRANSACTION_STATE for the copy res stored: the
// record with the real topic and queue back (what the client's listener
// sees), and the copy's offsets (what its END_TRANSACTION echoes).
func (s *Service) checkRequest(r *message.Record, props string, res store.PutResult) *remoting.Command {
	topic, _ := message.Property(props, message.PropertyRealTopic)
	qid, _ := message.Property(props, message.PropertyRealQueueID)
	q, _ := strconv.ParseInt(qid, 10, 32)
	body := message.Record{
		Topic: topic, QueueID: int32(q), Flag: r.Flag, SysFlag: r.SysFlag,
		QueueOffset: res.QueueOffset, PhysicalOffset: res.WroteOffset,
		BornTimestamp: r.BornTimestamp, BornHost: r.BornHost,
		StoreTimestamp: res.StoreTimestamp, StoreHost: r.StoreHost,
		ReconsumeTimes: r.ReconsumeTimes, Body: r.Body, Properties: props,
	}
	if message.CheckLimits(len(body.Topic), len(body.Properties)) != nil {
		body.Topic = meta.TransHalfTopic // cannot happen for a stored record's REAL_TOPIC
	}
	uniq, _ := message.Property(props, message.PropertyUniqClientMessageIDKeyIdx)
	h := protocol.CheckTransactionStateRequestHeader{
		TranStateTableOffset: res.QueueOffset,
		CommitLogOffset:      res.WroteOffset,
		MsgID:                uniq,
		TransactionID:        uniq,
		OffsetMsgID:          res.MsgID,
	}
	return remoting.NewRequest(protocol.CheckTransactionState, protocol.Ext(&h), message.AppendRecord(nil, &body))
}
