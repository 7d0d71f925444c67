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

// PullMessageRequestHeader is PULL_MESSAGE (11). It is an ExtEncoder: a
// puller sends it without building a map.
//
//ext:encoder
type PullMessageRequestHeader struct {
	ConsumerGroup        string          `ext:"consumerGroup"`
	Topic                string          `ext:"topic"`
	QueueID              int32           `ext:"queueId"`
	QueueOffset          int64           `ext:"queueOffset"`
	MaxMsgNums           int32           `ext:"maxMsgNums"`
	SysFlag              int32           `ext:"sysFlag"` // PullFlag* bits
	CommitOffset         int64           `ext:"commitOffset"`
	SuspendTimeoutMillis int64           `ext:"suspendTimeoutMillis"`
	Subscription         string          `ext:"subscription,opt"` // "" from push consumers
	SubVersion           int64           `ext:"subVersion"`
	ExpressionType       string          `ext:"expressionType,opt"` // TAG (default) or SQL92
	BrokerName           string          `ext:"bname,opt"`
	MaxMsgBytes          Optional[int32] `ext:"maxMsgBytes"` // 5.x
}

// PullMessageResponseHeader answers PULL_MESSAGE. All four fields are always
// written: the Go client reads a missing nextBeginOffset as 0 and rewinds.
// It is an ExtEncoder (the broker answers every pull without a map), and
// DecodeFrom reads it from a received command without one.
//
//ext:encoder
type PullMessageResponseHeader struct {
	SuggestWhichBrokerID int64 `ext:"suggestWhichBrokerId"` // 0 = master
	NextBeginOffset      int64 `ext:"nextBeginOffset"`
	MinOffset            int64 `ext:"minOffset"`
	MaxOffset            int64 `ext:"maxOffset"`
	// OffsetDelta is 5.x's offsetDelta, set by a pull through a static
	// topic's logic queue: what the client adds to the physical queue
	// offsets of the messages in the body to get their logic offsets.
	OffsetDelta Optional[int64] `ext:"offsetDelta"`
}

// pullResponseKeys are the keys DecodeFrom looks up, in field order.
var pullResponseKeys = [...]string{"suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset", "offsetDelta"}

// DecodeFrom decodes the header from src in one pass (a received
// remoting.Command, no map): the result, and any *FieldError, is the same
// as Decode's of the command's ExtFields map.
func (h *PullMessageResponseHeader) DecodeFrom(src ExtSource) error {
	v := src.LookupExt(pullResponseKeys[:])
	k := &pullResponseKeys
	r := extReader{header: "PullMessageResponseHeader"}
	h.SuggestWhichBrokerID = r.int64Of(k[0], v.Vals[0], v.Has(0))
	h.NextBeginOffset = r.int64Of(k[1], v.Vals[1], v.Has(1))
	h.MinOffset = r.int64Of(k[2], v.Vals[2], v.Has(2))
	h.MaxOffset = r.int64Of(k[3], v.Vals[3], v.Has(3))
	h.OffsetDelta = Optional[int64]{}
	if v.Has(4) {
		h.OffsetDelta = Some(r.int64Of(k[4], v.Vals[4], true))
	}
	return r.err
}

// pullRequestKeys are the keys PullMessageRequestHeader.DecodeFrom looks
// up, in field order.
var pullRequestKeys = [...]string{"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag",
	"commitOffset", "suspendTimeoutMillis", "subscription", "subVersion", "expressionType", "bname", "maxMsgBytes"}

// DecodeFrom decodes the header from src in one pass (a received
// remoting.Command, no map): the result, and any *FieldError, is the same
// as Decode's of the command's ExtFields map.
func (h *PullMessageRequestHeader) DecodeFrom(src ExtSource) error {
	v := src.LookupExt(pullRequestKeys[:])
	k := &pullRequestKeys
	r := extReader{header: "PullMessageRequestHeader"}
	h.ConsumerGroup = v.Vals[0]
	h.Topic = v.Vals[1]
	h.QueueID = r.int32Of(k[2], v.Vals[2], v.Has(2))
	h.QueueOffset = r.int64Of(k[3], v.Vals[3], v.Has(3))
	h.MaxMsgNums = r.int32Of(k[4], v.Vals[4], v.Has(4))
	h.SysFlag = r.int32Of(k[5], v.Vals[5], v.Has(5))
	h.CommitOffset = r.int64Of(k[6], v.Vals[6], v.Has(6))
	h.SuspendTimeoutMillis = r.int64Of(k[7], v.Vals[7], v.Has(7))
	h.Subscription = v.Vals[8]
	h.SubVersion = r.int64Of(k[9], v.Vals[9], v.Has(9))
	h.ExpressionType = v.Vals[10]
	h.BrokerName = v.Vals[11]
	h.MaxMsgBytes = r.optInt32Of(k[12], v.Vals[12], v.Has(12))
	return r.err
}
