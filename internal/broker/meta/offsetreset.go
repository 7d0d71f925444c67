package meta

// Server-side offset reset (Java 5.x's useServerSideResetOffset): an admin
// reset is recorded per queue until the queue's next pull takes it and
// tells the consumer (PULL_OFFSET_MOVED); meanwhile the consumer's own
// commits of older positions are ignored and queries answer the reset.

// AssignReset records that group's position on a queue of topic was reset
// to offset. As Java's assignResetOffset it also overwrites the committed
// offset when the group has offsets for the topic (it may be overwritten
// again by a consumer that has not pulled since; the pending reset makes
// UPDATE_CONSUMER_OFFSET ignore such commits until then).
func (o *Offsets) AssignReset(group, topic string, queueID int32, offset int64) {
	if group == "" || topic == "" || queueID < 0 || offset < 0 {
		return
	}
	k := topicGroup{topic, group}
	o.mu.Lock()
	defer o.mu.Unlock()
	pending := o.mu.resets[k]
	if pending == nil {
		pending = map[int32]int64{}
		o.mu.resets[k] = pending
	}
	if _, again := pending[queueID]; !again {
		o.pendingResets.Add(1)
	}
	pending[queueID] = offset
	if queues, ok := o.mu.table[k]; ok {
		queues[queueID] = offset
		o.mu.changedAt[k] = o.changes.Add(1)
	}
}

// PendingReset returns the reset offset of a queue not yet handed to its
// consumer.
func (o *Offsets) PendingReset(group, topic string, queueID int32) (int64, bool) {
	if o.pendingResets.Load() == 0 {
		return 0, false
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	off, ok := o.mu.resets[topicGroup{topic, group}][queueID]
	return off, ok
}

// TakeReset returns and forgets the pending reset offset of a queue (the
// pull that tells the consumer takes it).
func (o *Offsets) TakeReset(group, topic string, queueID int32) (int64, bool) {
	if o.pendingResets.Load() == 0 {
		return 0, false // every pull asks: no lock while no reset waits
	}
	k := topicGroup{topic, group}
	o.mu.Lock()
	defer o.mu.Unlock()
	pending := o.mu.resets[k]
	off, ok := pending[queueID]
	if ok {
		o.pendingResets.Add(-1)
		delete(pending, queueID)
		if len(pending) == 0 {
			delete(o.mu.resets, k)
		}
	}
	return off, ok
}
