package pop

import (
	"math/rand/v2"

	"github.com/rocketd/rocketd/internal/store"
)

// Looking without taking: NOTIFICATION asks whether a pop would find a
// message (HasMessage), PEEK_MESSAGE reads what a pop would read (Peek).
// Neither commits an offset nor writes a check point.

// HasMessage is NotificationProcessor's check: whether a pop of group on
// topic (queueID < 0: any of its readQueues) would find a message now, in
// the topic or, for a pop that is not orderly, in the group's pop retry
// topic. An orderly queue whose popped messages are still in flight counts
// as empty, as it does for an orderly pop. Offsets are read as Pop reads
// them (the committed offset, else where a pop with the default init mode
// would start) without committing anything, so true means a pop would get
// a message (before filters: a notification carries no expression).
//
// It also registers topic and its retry topic with the arrival listener,
// as a pop does, so that a notification held on them is woken by arrivals.
func (s *Service) HasMessage(group, topic string, queueID, readQueues int32, order bool, attemptID string) bool {
	s.popped.LoadOrStore(topic, topic)
	retry := RetryTopic(topic, group, s.cfg.RetryV2)
	s.popped.LoadOrStore(retry, topic)
	if !order {
		if tc, ok := s.cfg.Topics.Get(retry); ok && s.queuesHaveMessage(group, retry, -1, tc.ReadQueueNums, false, "") {
			return true
		}
	}
	return s.queuesHaveMessage(group, topic, queueID, readQueues, order, attemptID)
}

func (s *Service) queuesHaveMessage(group, topic string, queueID, readQueues int32, order bool, attemptID string) bool {
	if queueID >= 0 {
		return s.queueHasMessage(group, topic, queueID, order, attemptID)
	}
	for q := range max(readQueues, 0) {
		if s.queueHasMessage(group, topic, q, order, attemptID) {
			return true
		}
	}
	return false
}

func (s *Service) queueHasMessage(group, topic string, qid int32, order bool, attemptID string) bool {
	if order && s.order.blocked(topic, group, qid, attemptID, s.cfg.Now().UnixMilli()) {
		return false
	}
	return s.cfg.Store.MaxOffset(topic, qid) > s.popOffset(group, topic, qid, 0, false)
}

// Peek is PeekMessageProcessor: up to maxMsgNums messages of the group's
// pop retry topic and of topic (queueID < 0: its readQueues, from a random
// one), read from the group's offset (the committed one, else the queue's
// minimum) without taking them. Header.RestNum counts the messages left
// after the group's offsets in the queues looked at. Release the Result.
func (s *Service) Peek(group, topic string, queueID, readQueues int32, maxMsgNums int) *Result {
	res := &Result{}
	randomQ := rand.IntN(100)
	needRetry := randomQ%5 == 0
	var rest int64
	retry := RetryTopic(topic, group, s.cfg.RetryV2)
	peekRetry := func() {
		if tc, ok := s.cfg.Topics.Get(retry); ok {
			for i := range max(tc.ReadQueueNums, 0) {
				rest += s.peekQueue(group, retry, (int32(randomQ)+i)%tc.ReadQueueNums, maxMsgNums, res)
			}
		}
	}
	if needRetry {
		peekRetry()
	}
	if queueID < 0 {
		for i := range max(readQueues, 0) {
			rest += s.peekQueue(group, topic, (int32(randomQ)+i)%readQueues, maxMsgNums, res)
		}
	} else {
		rest += s.peekQueue(group, topic, queueID, maxMsgNums, res)
	}
	if !needRetry && len(res.Parts) < maxMsgNums {
		peekRetry()
	}
	res.Header.RestNum = rest
	return res
}

// peekQueue adds what one queue holds from the group's offset, up to
// maxMsgNums in all, and returns the messages after that offset.
func (s *Service) peekQueue(group, topic string, qid int32, maxMsgNums int, res *Result) int64 {
	st := s.cfg.Store
	offset, ok := s.cfg.Offsets.Query(group, topic, qid)
	if !ok || offset < 0 {
		offset = st.MinOffset(topic, qid)
	}
	rest := max(0, st.MaxOffset(topic, qid)-offset)
	need := maxMsgNums - len(res.Parts)
	if need <= 0 {
		return rest
	}
	g, err := st.GetMessage(group, topic, qid, offset, need, nil)
	if err != nil {
		s.log.Warn("peek: read failed", "topic", topic, "queue", qid, "err", err)
		return rest
	}
	if g.Status == store.OffsetTooSmall || g.Status == store.OffsetOverflowBadly {
		next := g.NextBeginOffset
		g.Release()
		if g, err = st.GetMessage(group, topic, qid, next, need, nil); err != nil {
			s.log.Warn("peek: read failed", "topic", topic, "queue", qid, "err", err)
			return rest
		}
	}
	for _, m := range g.Messages {
		res.Parts = append(res.Parts, m.Bytes)
	}
	res.gets = append(res.gets, g)
	return rest
}
