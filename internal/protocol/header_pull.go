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
type PullMessageResponseHeader struct {
	SuggestWhichBrokerID int64 `ext:"suggestWhichBrokerId"` // 0 = master
	NextBeginOffset      int64 `ext:"nextBeginOffset"`
	MinOffset            int64 `ext:"minOffset"`
	MaxOffset            int64 `ext:"maxOffset"`
}
