package protocol

// Consumer-offset and queue-info headers (rocketmq-spec.md §3.4).

// QueryConsumerOffsetRequestHeader is QUERY_CONSUMER_OFFSET (14). An unknown
// group must be answered with QUERY_NOT_FOUND (go-client-wire.md §6.5).
type QueryConsumerOffsetRequestHeader struct {
	ConsumerGroup     string         `ext:"consumerGroup"`
	Topic             string         `ext:"topic"`
	QueueID           int32          `ext:"queueId"`
	BrokerName        string         `ext:"bname,opt"`
	SetZeroIfNotFound Optional[bool] `ext:"setZeroIfNotFound"` // 5.x
}

// OffsetResponseHeader is the one-key answer {offset} of
// QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET and
// SEARCH_OFFSET_BY_TIMESTAMP.
type OffsetResponseHeader struct {
	Offset int64 `ext:"offset"`
}

type (
	QueryConsumerOffsetResponseHeader = OffsetResponseHeader
	GetMaxOffsetResponseHeader        = OffsetResponseHeader
	GetMinOffsetResponseHeader        = OffsetResponseHeader
	SearchOffsetResponseHeader        = OffsetResponseHeader
)

// UpdateConsumerOffsetRequestHeader is UPDATE_CONSUMER_OFFSET (15).
type UpdateConsumerOffsetRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	Topic         string `ext:"topic"`
	QueueID       int32  `ext:"queueId"`
	CommitOffset  int64  `ext:"commitOffset"`
	BrokerName    string `ext:"bname,opt"`
}

// QueueRequestHeader names one queue of a topic: GET_MIN_OFFSET (31),
// GET_EARLIEST_MSG_STORETIME (32), and with Committed GET_MAX_OFFSET (30).
type QueueRequestHeader struct {
	Topic      string `ext:"topic"`
	QueueID    int32  `ext:"queueId"`
	BrokerName string `ext:"bname,opt"`
	// Committed is GET_MAX_OFFSET's 5.x flag (default true when absent).
	Committed Optional[bool] `ext:"committed"`
}

type (
	GetMaxOffsetRequestHeader            = QueueRequestHeader
	GetMinOffsetRequestHeader            = QueueRequestHeader
	GetEarliestMsgStoretimeRequestHeader = QueueRequestHeader
)

// SearchOffsetRequestHeader is SEARCH_OFFSET_BY_TIMESTAMP (29).
type SearchOffsetRequestHeader struct {
	Topic        string `ext:"topic"`
	QueueID      int32  `ext:"queueId"`
	Timestamp    int64  `ext:"timestamp"` // ms
	BrokerName   string `ext:"bname,opt"`
	BoundaryType string `ext:"boundaryType,opt"` // 5.x: LOWER (default) or UPPER
}

// GetEarliestMsgStoretimeResponseHeader answers GET_EARLIEST_MSG_STORETIME.
type GetEarliestMsgStoretimeResponseHeader struct {
	Timestamp int64 `ext:"timestamp"` // ms
}
