package protocol

// POP consumption headers and bodies (RocketMQ 5.x; rocketmq-spec.md §2.1:
// these codes only travel in JSON-serialized commands). Package
// broker/pop's doc.go describes the extra info strings they carry.

// PopMessageRequestHeader is POP_MESSAGE (200050).
type PopMessageRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	Topic         string `ext:"topic"`
	QueueID       int32  `ext:"queueId"` // -1: every readable queue
	MaxMsgNums    int32  `ext:"maxMsgNums"`
	InvisibleTime int64  `ext:"invisibleTime"` // ms
	PollTime      int64  `ext:"pollTime"`      // ms the broker may hold the request
	BornTime      int64  `ext:"bornTime"`      // client clock, ms
	InitMode      int32  `ext:"initMode"`      // 0 ConsumeInitMode.MAX (default), 1 MIN
	ExpType       string `ext:"expType,opt"`
	Exp           string `ext:"exp,opt"`
	Order         bool   `ext:"order"`
	AttemptID     string `ext:"attemptId,opt"`
}

// PopMessageResponseHeader answers POP_MESSAGE.
type PopMessageResponseHeader struct {
	PopTime         int64  `ext:"popTime"`
	InvisibleTime   int64  `ext:"invisibleTime"`
	ReviveQid       int32  `ext:"reviveQid"`
	RestNum         int64  `ext:"restNum"`
	StartOffsetInfo string `ext:"startOffsetInfo,opt"`
	MsgOffsetInfo   string `ext:"msgOffsetInfo,opt"`
	OrderCountInfo  string `ext:"orderCountInfo,opt"` // order pops only
}

// AckMessageRequestHeader is ACK_MESSAGE (200051).
type AckMessageRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	Topic         string `ext:"topic"` // the real topic: the pop retry topic for a retried message
	QueueID       int32  `ext:"queueId"`
	ExtraInfo     string `ext:"extraInfo"` // the message's POP_CK property
	Offset        int64  `ext:"offset"`    // the message's queue offset
}

// ChangeInvisibleTimeRequestHeader is CHANGE_MESSAGE_INVISIBLETIME (200053).
type ChangeInvisibleTimeRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	Topic         string `ext:"topic"`
	QueueID       int32  `ext:"queueId"`
	ExtraInfo     string `ext:"extraInfo"`
	Offset        int64  `ext:"offset"`
	InvisibleTime int64  `ext:"invisibleTime"` // ms from now
}

// ChangeInvisibleTimeResponseHeader answers CHANGE_MESSAGE_INVISIBLETIME:
// the client builds the message's new extra info from it.
type ChangeInvisibleTimeResponseHeader struct {
	PopTime       int64 `ext:"popTime"`
	InvisibleTime int64 `ext:"invisibleTime"`
	ReviveQid     int32 `ext:"reviveQid"`
}

// BatchAck is one entry of BATCH_ACK_MESSAGE's body: the acked messages of
// one pop of one queue. Java's fastjson names (alternate long names are
// not accepted: every Java client writes the short ones).
type BatchAck struct {
	ConsumerGroup string `json:"c"`
	Topic         string `json:"t"` // the requested topic; Retry says which real one
	Retry         string `json:"r"` // ExtraInfo topic mark: "0" normal, "1" retry v1, "2" retry v2
	StartOffset   int64  `json:"so"`
	QueueID       int32  `json:"q"`
	ReviveQueueID int32  `json:"rq"`
	PopTime       int64  `json:"pt"`
	InvisibleTime int64  `json:"it"`
	// BitSet is java.util.BitSet.toByteArray (little-endian bits, offset
	// StartOffset+i acked when bit i is set), base64 in the JSON.
	BitSet []byte `json:"b"`
}

// BatchAckMessageRequestBody is BATCH_ACK_MESSAGE's (200151) body.
type BatchAckMessageRequestBody struct {
	BrokerName string     `json:"brokerName"`
	Acks       []BatchAck `json:"acks"`
}

// NotificationRequestHeader is NOTIFICATION (200054): is there a message a
// pop of this group would get, waiting up to PollTime for one.
type NotificationRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	Topic         string `ext:"topic"`
	QueueID       int32  `ext:"queueId"`  // -1: every readable queue
	PollTime      int64  `ext:"pollTime"` // ms the broker may hold the request
	BornTime      int64  `ext:"bornTime"` // client clock, ms
	Order         bool   `ext:"order"`
	AttemptID     string `ext:"attemptId,opt"`
}

// NotificationResponseHeader answers NOTIFICATION.
type NotificationResponseHeader struct {
	HasMsg      bool `ext:"hasMsg"`
	PollingFull bool `ext:"pollingFull"` // the request could not be held: too many waiting
}

// PollingInfoRequestHeader is POLLING_INFO (200055): how many pops and
// notifications of a group wait on a topic's queue.
type PollingInfoRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	Topic         string `ext:"topic"`
	QueueID       int32  `ext:"queueId"` // -1: the requests of every queue
}

// PollingInfoResponseHeader answers POLLING_INFO.
type PollingInfoResponseHeader struct {
	PollingNum int32 `ext:"pollingNum"`
}

// PeekMessageRequestHeader is PEEK_MESSAGE (200052): read what a pop of
// the group would read, without taking it.
type PeekMessageRequestHeader struct {
	Topic         string `ext:"topic"`
	QueueID       int32  `ext:"queueId"` // -1: every readable queue
	MaxMsgNums    int32  `ext:"maxMsgNums"`
	ConsumerGroup string `ext:"consumerGroup"`
}
