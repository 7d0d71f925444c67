package protocol

// Consumer-offset and queue-info headers (rocketmq-spec.md §3.4).

// QueryConsumerOffsetRequestHeader is QUERY_CONSUMER_OFFSET (14). An unknown
// group must be answered with QUERY_NOT_FOUND (go-client-wire.md §6.5).
type QueryConsumerOffsetRequestHeader struct {
	ConsumerGroup     string
	Topic             string
	QueueID           int32          // key queueId
	BrokerName        string         // key bname; optional
	SetZeroIfNotFound Optional[bool] // 5.x
}

func (h *QueryConsumerOffsetRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putOptStr(m, "bname", h.BrokerName)
	putOptBool(m, "setZeroIfNotFound", h.SetZeroIfNotFound)
}

func (h *QueryConsumerOffsetRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "QueryConsumerOffsetRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.BrokerName = r.str("bname")
	h.SetZeroIfNotFound = r.optBool("setZeroIfNotFound")
	return r.err
}

// OffsetResponseHeader is the one-key answer {offset} of
// QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET and
// SEARCH_OFFSET_BY_TIMESTAMP.
type OffsetResponseHeader struct {
	Offset int64
}

type (
	QueryConsumerOffsetResponseHeader = OffsetResponseHeader
	GetMaxOffsetResponseHeader        = OffsetResponseHeader
	GetMinOffsetResponseHeader        = OffsetResponseHeader
	SearchOffsetResponseHeader        = OffsetResponseHeader
)

func (h *OffsetResponseHeader) AppendExt(m map[string]string) { putInt64(m, "offset", h.Offset) }

func (h *OffsetResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "OffsetResponseHeader", ext: ext}
	h.Offset = r.int64("offset")
	return r.err
}

// UpdateConsumerOffsetRequestHeader is UPDATE_CONSUMER_OFFSET (15).
type UpdateConsumerOffsetRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32 // key queueId
	CommitOffset  int64
	BrokerName    string // key bname; optional
}

func (h *UpdateConsumerOffsetRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putInt64(m, "commitOffset", h.CommitOffset)
	putOptStr(m, "bname", h.BrokerName)
}

func (h *UpdateConsumerOffsetRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "UpdateConsumerOffsetRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.CommitOffset = r.int64("commitOffset")
	h.BrokerName = r.str("bname")
	return r.err
}

// QueueRequestHeader names one queue of a topic: GET_MIN_OFFSET (31),
// GET_EARLIEST_MSG_STORETIME (32), and with Committed GET_MAX_OFFSET (30).
type QueueRequestHeader struct {
	Topic      string
	QueueID    int32  // key queueId
	BrokerName string // key bname; optional
	// Committed is GET_MAX_OFFSET's 5.x flag (default true when absent).
	Committed Optional[bool]
}

type (
	GetMaxOffsetRequestHeader            = QueueRequestHeader
	GetMinOffsetRequestHeader            = QueueRequestHeader
	GetEarliestMsgStoretimeRequestHeader = QueueRequestHeader
)

func (h *QueueRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putOptStr(m, "bname", h.BrokerName)
	putOptBool(m, "committed", h.Committed)
}

func (h *QueueRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "QueueRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.BrokerName = r.str("bname")
	h.Committed = r.optBool("committed")
	return r.err
}

// SearchOffsetRequestHeader is SEARCH_OFFSET_BY_TIMESTAMP (29).
type SearchOffsetRequestHeader struct {
	Topic        string
	QueueID      int32  // key queueId
	Timestamp    int64  // ms
	BrokerName   string // key bname; optional
	BoundaryType string // 5.x: LOWER (default) or UPPER; optional
}

func (h *SearchOffsetRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putInt64(m, "timestamp", h.Timestamp)
	putOptStr(m, "bname", h.BrokerName)
	putOptStr(m, "boundaryType", h.BoundaryType)
}

func (h *SearchOffsetRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "SearchOffsetRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.Timestamp = r.int64("timestamp")
	h.BrokerName = r.str("bname")
	h.BoundaryType = r.str("boundaryType")
	return r.err
}

// GetEarliestMsgStoretimeResponseHeader answers GET_EARLIEST_MSG_STORETIME.
type GetEarliestMsgStoretimeResponseHeader struct {
	Timestamp int64 // ms
}

func (h *GetEarliestMsgStoretimeResponseHeader) AppendExt(m map[string]string) {
	putInt64(m, "timestamp", h.Timestamp)
}

func (h *GetEarliestMsgStoretimeResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "GetEarliestMsgStoretimeResponseHeader", ext: ext}
	h.Timestamp = r.int64("timestamp")
	return r.err
}
