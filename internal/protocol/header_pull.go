package protocol

// Pull headers (rocketmq-spec.md §3.3; go-client-wire.md §6.3).

// PullSysFlag bits of PullMessageRequestHeader.SysFlag.
const (
	PullFlagCommitOffset    int32 = 0x1  // persist CommitOffset for the group (master only)
	PullFlagSuspend         int32 = 0x2  // long polling allowed
	PullFlagSubscription    int32 = 0x4  // filter from this request, not the heartbeat
	PullFlagClassFilter     int32 = 0x8  // legacy class filter
	PullFlagLitePullMessage int32 = 0x10 // lite pull consumer
)

// PullMessageRequestHeader is PULL_MESSAGE (11).
type PullMessageRequestHeader struct {
	ConsumerGroup        string
	Topic                string
	QueueID              int32 // key queueId
	QueueOffset          int64
	MaxMsgNums           int32
	SysFlag              int32 // PullFlag* bits
	CommitOffset         int64
	SuspendTimeoutMillis int64
	Subscription         string // optional; "" from push consumers
	SubVersion           int64
	ExpressionType       string          // optional: TAG (default) or SQL92
	BrokerName           string          // key bname; optional
	MaxMsgBytes          Optional[int32] // 5.x
}

func (h *PullMessageRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putInt64(m, "queueOffset", h.QueueOffset)
	putInt32(m, "maxMsgNums", h.MaxMsgNums)
	putInt32(m, "sysFlag", h.SysFlag)
	putInt64(m, "commitOffset", h.CommitOffset)
	putInt64(m, "suspendTimeoutMillis", h.SuspendTimeoutMillis)
	putOptStr(m, "subscription", h.Subscription)
	putInt64(m, "subVersion", h.SubVersion)
	putOptStr(m, "expressionType", h.ExpressionType)
	putOptStr(m, "bname", h.BrokerName)
	putOptInt32(m, "maxMsgBytes", h.MaxMsgBytes)
}

func (h *PullMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "PullMessageRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.QueueOffset = r.int64("queueOffset")
	h.MaxMsgNums = r.int32("maxMsgNums")
	h.SysFlag = r.int32("sysFlag")
	h.CommitOffset = r.int64("commitOffset")
	h.SuspendTimeoutMillis = r.int64("suspendTimeoutMillis")
	h.Subscription = r.str("subscription")
	h.SubVersion = r.int64("subVersion")
	h.ExpressionType = r.str("expressionType")
	h.BrokerName = r.str("bname")
	h.MaxMsgBytes = r.optInt32("maxMsgBytes")
	return r.err
}

// PullMessageResponseHeader answers PULL_MESSAGE. All four fields are always
// written: the Go client reads a missing nextBeginOffset as 0 and rewinds.
type PullMessageResponseHeader struct {
	SuggestWhichBrokerID int64 // key suggestWhichBrokerId; 0 = master
	NextBeginOffset      int64
	MinOffset            int64
	MaxOffset            int64
}

func (h *PullMessageResponseHeader) AppendExt(m map[string]string) {
	putInt64(m, "suggestWhichBrokerId", h.SuggestWhichBrokerID)
	putInt64(m, "nextBeginOffset", h.NextBeginOffset)
	putInt64(m, "minOffset", h.MinOffset)
	putInt64(m, "maxOffset", h.MaxOffset)
}

func (h *PullMessageResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "PullMessageResponseHeader", ext: ext}
	h.SuggestWhichBrokerID = r.int64("suggestWhichBrokerId")
	h.NextBeginOffset = r.int64("nextBeginOffset")
	h.MinOffset = r.int64("minOffset")
	h.MaxOffset = r.int64("maxOffset")
	return r.err
}
