package txn

import (
	"strings"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
)

// CountLive counts the half messages still open per real topic
// (REAL_TOPIC) as the check rounds see them: the transactions with a half
// record at or after the half progress that no op record from the op
// progress on settles, each once (a check's re-appended copy and, after a
// crash, its original may both be there). A transaction settled through
// an older copy, below the half progress, is settled (its UNIQ_KEY read
// from that copy, as the check rounds do after a restart). It reads the
// half and op queues from their progress to their end: the broker calls
// it at start after a crash, before any request is served, to rebuild
// rocketmq_half_messages. Call it before Start (it reads what the check
// goroutine owns).
func (s *Service) CountLive() (map[string]int64, error) {
	st := s.cfg.Store
	halfFrom, opFrom := s.progress(meta.TransHalfTopic), s.progress(meta.TransOpHalfTopic)
	halfEnd, opEnd := st.MaxOffset(meta.TransHalfTopic, 0), st.MaxOffset(meta.TransOpHalfTopic, 0)

	// The half offsets the op records settle.
	settledAt := map[int64]struct{}{}
	err := s.scan(meta.TransOpHalfTopic, opFrom, opEnd, func(r *message.Record) {
		for _, h := range parseOp(r.Properties, r.Body) {
			settledAt[h] = struct{}{}
		}
	})
	if err != nil {
		return nil, err
	}
	settled := map[string]struct{}{}
	for h := range settledAt {
		if h >= halfFrom || h < st.MinOffset(meta.TransHalfTopic, 0) {
			continue
		}
		// An older copy the walk passed: its transaction is settled.
		_ = s.scan(meta.TransHalfTopic, h, h+1, func(r *message.Record) {
			settled[strings.Clone(settleKey(r))] = struct{}{}
		})
	}
	live := map[string]string{} // UNIQ_KEY -> real topic
	err = s.scan(meta.TransHalfTopic, halfFrom, halfEnd, func(r *message.Record) {
		key := settleKey(r)
		if _, ok := settledAt[r.QueueOffset]; ok {
			settled[strings.Clone(key)] = struct{}{}
			return
		}
		if _, ok := live[key]; !ok {
			topic, _ := message.Property(r.Properties, message.PropertyRealTopic)
			live[strings.Clone(key)] = strings.Clone(topic)
		}
	})
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for key, topic := range live {
		if _, ok := settled[key]; !ok {
			counts[topic]++
		}
	}
	return counts, nil
}

// scan calls fn for each decodable record of queue 0 of topic in
// [from, end); fn must not keep r (it aliases a read buffer).
func (s *Service) scan(topic string, from, end int64, fn func(r *message.Record)) error {
	for i := from; i < end; {
		res, err := s.cfg.Store.GetMessage(meta.TransCheckGroup, topic, 0, i, readBatch, nil)
		if err != nil {
			return err
		}
		if res.Status != store.Found || len(res.Messages) == 0 {
			next := res.NextBeginOffset
			res.Release()
			if next <= i {
				return nil
			}
			i = next
			continue
		}
		for _, m := range res.Messages {
			if m.QueueOffset >= end {
				break
			}
			if r, _, err := message.DecodeRecordNoCopy(m.Bytes, false); err == nil {
				r.QueueOffset = m.QueueOffset
				fn(&r)
			}
			i = m.QueueOffset + 1
		}
		i = max(i, res.NextBeginOffset)
		res.Release()
	}
	return nil
}
