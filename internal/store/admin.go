package store

import (
	"errors"

	"github.com/rocketd/rocketd/internal/store/consumequeue"
)

// Cleanups an admin asks for (mqadmin cleanExpiredCQ, cleanUnusedTopic;
// deleteExpiredCommitLog is DeleteExpiredManually in cleanup.go).

// CleanExpiredConsumeQueues destroys the ConsumeQueues whose last record
// ends below the CommitLog's min offset (CLEAN_EXPIRED_CONSUMEQUEUE, Java's
// cleanExpiredConsumerQueue): everything they index is gone. Queues with no
// unit and topics keep reports (system topics) stay. The CommitLog forgets
// the removed queues' next offsets, so a later message starts it at 0, as
// Java's removeTopicQueueTable does. It returns how many queues went.
func (s *Store) CleanExpiredConsumeQueues(keep func(topic string) bool) (int, error) {
	phyMin := s.log.MinOffset()
	var n int
	var errs []error
	for _, q := range s.cqs.Queues() {
		if keep(q.Topic()) || q.MaxOffset() == 0 || q.MaxPhysicOffset() >= phyMin {
			continue
		}
		// Under the put lock: the queue must still be expired and hold
		// every offset the CommitLog gave out (none awaits dispatch), or a
		// message could land in the queue being destroyed.
		var detached *consumequeue.Queue
		s.log.RemoveQueueOffsetIf(q.Topic(), q.QueueID(), func(next int64) bool {
			detached = s.cqs.DetachIf(q.Topic(), q.QueueID(), func(cur *consumequeue.Queue) bool {
				return cur == q && cur.MaxOffset() == next && cur.MaxPhysicOffset() < phyMin
			})
			return detached != nil
		})
		if detached == nil {
			continue
		}
		maxPhysic := q.MaxPhysicOffset()
		if err := s.cqs.DestroyDetached(q); err != nil {
			errs = append(errs, err)
		}
		s.cfg.Logger.Info("store: expired consume queue destroyed", "topic", q.Topic(), "queueId", q.QueueID(),
			"maxPhysicOffset", maxPhysic, "commitlogMin", phyMin)
		n++
	}
	return n, errors.Join(errs...)
}

// CleanUnusedTopics deletes the ConsumeQueues of every topic keep rejects
// (CLEAN_UNUSED_TOPIC, Java's cleanUnusedTopic: the caller keeps the
// topics in its topic config and the system ones). It returns how many
// topics were deleted.
func (s *Store) CleanUnusedTopics(keep func(topic string) bool) (int, error) {
	var n int
	var errs []error
	for topic := range s.cqs.Topics() {
		if keep(topic) {
			continue
		}
		if err := s.DeleteTopic(topic); err != nil {
			errs = append(errs, err)
			continue
		}
		s.cfg.Logger.Info("store: unused topic's consume queues deleted", "topic", topic)
		n++
	}
	return n, errors.Join(errs...)
}
