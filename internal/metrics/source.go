package metrics

// Source is the broker state a scrape reads: the collector asks for it at
// scrape time and keeps nothing between scrapes, so no request path counts
// anything twice. Every method must be safe for concurrent use and cheap
// enough to run once per scrape (a few thousand queues).
type Source interface {
	// Topics lists the broker's topics.
	Topics() []Topic
	// MaxOffset is the queue's next logical offset (0: empty or unknown).
	MaxOffset(topic string, queueID int32) int64
	// StoreTimestamp is the store time, in ms since the epoch, of the
	// message at offset in the queue; 0 when there is none.
	StoreTimestamp(topic string, queueID int32, offset int64) int64
	// ConsumerOffsets calls fn for each group and topic with committed
	// offsets, by queue id. fn must not keep offsets.
	ConsumerOffsets(fn func(group, topic string, offsets map[int32]int64))
	// ConsumerGroups lists the groups with online consumers.
	ConsumerGroups() []ConsumerGroup
	// Producers lists the registered producer channels.
	Producers() []Client
	// SubscriptionGroups is the size of the subscription group table.
	SubscriptionGroups() int
	// Store describes the message store now.
	Store() StoreStats
	// Processors lists the request families and their queue lengths.
	Processors() []Processor
	// ReviveLags lists the POP revive queues' processing lags (none when
	// POP is off).
	ReviveLags() []ReviveLag
}

// ReviveLag is one POP revive queue's processing lag
// (rocketmq_pop_revive_lag and rocketmq_pop_revive_latency).
type ReviveLag struct {
	QueueID   int32
	Messages  int64 // records waiting for the revive service
	LatencyMs int64 // how long the oldest of them has waited
}

// Counts gives cumulative message and byte counts since the broker
// started (internal/broker/stats keeps them). Without it the count-based
// families (rocketmq_messages_in_total, rocketmq_producer_tps, ...) are
// not exported.
type Counts interface {
	// EachTopicPut calls fn for each topic with the messages and bytes
	// put into it.
	EachTopicPut(fn func(topic string, msgs, bytes uint64))
	// EachGroupGet calls fn for each group and topic with the messages and
	// bytes the group got from it.
	EachGroupGet(fn func(group, topic string, msgs, bytes uint64))
}

// Topic is one topic's configuration as the metrics label it.
type Topic struct {
	Name        string
	ReadQueues  int32
	WriteQueues int32
	Perm        int32
	// System marks a broker-internal topic (Java's TopicValidator
	// system topics, %RETRY%/%DLQ% excluded: they are labelled by group).
	System bool
	// MessageType is the topic's message.type attribute in lower case
	// (normal, fifo, delay, transaction, mixed); "" is normal.
	MessageType string
}

// Client is one registered client channel.
type Client struct {
	Group    string
	Addr     string // the client's remote address
	Language string // Java's LanguageCode name, e.g. JAVA, GO
	Version  int32  // MQVersion ordinal from the heartbeat
}

// ConsumerGroup is an online consumer group.
type ConsumerGroup struct {
	Name string
	// Topics are the topics subscribed to (including %RETRY%group).
	Topics  []string
	Clients []Client
	// ConsumeMode is Java's ConsumeType.getTypeCN: PULL, PUSH or POP.
	ConsumeMode string
	// MessageModel is CLUSTERING or BROADCASTING.
	MessageModel string
}

// StoreStats is the message store's state.
type StoreStats struct {
	CommitLogMinOffset int64
	CommitLogMaxOffset int64
	FlushBehindBytes   int64 // written but not yet flushed
	DispatchBehind     int64 // committed but not yet in the ConsumeQueues
	// DiskUsedBytes and DiskTotalBytes describe the disk of the store
	// root (rocketmq_storage_size is the used bytes, as Java's).
	DiskUsedBytes  int64
	DiskTotalBytes int64
	// CommitLogDiskRatio is the used fraction (0..1) of the CommitLog's
	// disk; ConsumeQueueDiskRatio the same for the ConsumeQueues'.
	CommitLogDiskRatio    float64
	ConsumeQueueDiskRatio float64
	// EarliestMessageTime is the store time (ms) of the oldest message
	// kept; 0 when the store is empty.
	EarliestMessageTime int64
	// Timer messages: held now, read from the timer queue since start,
	// delivered since start; TimerEnabled false leaves the timer families
	// out.
	TimerEnabled   bool
	TimerHeld      int64
	TimerEnqueued  int64
	TimerDelivered int64
	// TimerEnqueueBehind is the number of timer-topic messages not yet
	// read into the timer (rocketmq_timer_enqueue_lag);
	// TimerEnqueueLatencyMs is how long the first of them has waited
	// (rocketmq_timer_enqueue_latency, 0 when none waits).
	TimerEnqueueBehind    int64
	TimerEnqueueLatencyMs int64
	// TimerDequeueBehind is the number of held messages loaded for
	// delivery and not delivered yet (rocketmq_timer_dequeue_lag);
	// TimerDequeueLatencyS is now minus the time up to which every held
	// message was delivered, in seconds as Java's getDequeueBehind
	// (rocketmq_timer_dequeue_latency).
	TimerDequeueBehind   int64
	TimerDequeueLatencyS int64
	// TimingMessages is the number of held messages per real topic
	// (rocketmq_timing_messages).
	TimingMessages map[string]int64
	// TimerSnapshot is the held messages due within each of
	// TimerSnapshotBounds (rocketmq_timer_message_snapshot); nil leaves
	// the family out.
	TimerSnapshot []TimerBound
}

// TimerBound is the number of held messages due in (the previous
// bound, BoundS] seconds from now.
type TimerBound struct {
	BoundS int64
	Count  int64
}

// Processor is one request family's queue.
type Processor struct {
	Name   string // Java's processor label: send, pull, heartbeat, ...
	Queued int
}
