package pop

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
