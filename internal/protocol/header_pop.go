package protocol

// POP consumption headers and bodies (RocketMQ 5.x; rocketmq-spec.md §2.1:
// these codes only travel in JSON-serialized commands). Package
// broker/pop's doc.go describes the extra info strings they carry.

// PopMessageRequestHeader is POP_MESSAGE (200050).
type PopMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32 // key queueId; -1: every readable queue
	MaxMsgNums    int32
	InvisibleTime int64 // ms
	PollTime      int64 // ms the broker may hold the request
	BornTime      int64 // client clock, ms
	InitMode      int32 // 0 ConsumeInitMode.MAX (default), 1 MIN
	ExpType       string
	Exp           string
	Order         bool
	AttemptID     string // key attemptId
}

func (h *PopMessageRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putInt32(m, "maxMsgNums", h.MaxMsgNums)
	putInt64(m, "invisibleTime", h.InvisibleTime)
	putInt64(m, "pollTime", h.PollTime)
	putInt64(m, "bornTime", h.BornTime)
	putInt32(m, "initMode", h.InitMode)
	putOptStr(m, "expType", h.ExpType)
	putOptStr(m, "exp", h.Exp)
	putBool(m, "order", h.Order)
	putOptStr(m, "attemptId", h.AttemptID)
}

func (h *PopMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "PopMessageRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.MaxMsgNums = r.int32("maxMsgNums")
	h.InvisibleTime = r.int64("invisibleTime")
	h.PollTime = r.int64("pollTime")
	h.BornTime = r.int64("bornTime")
	h.InitMode = r.int32("initMode")
	h.ExpType = r.str("expType")
	h.Exp = r.str("exp")
	h.Order = r.bool("order")
	h.AttemptID = r.str("attemptId")
	return r.err
}

// PopMessageResponseHeader answers POP_MESSAGE.
type PopMessageResponseHeader struct {
	PopTime         int64
	InvisibleTime   int64
	ReviveQid       int32
	RestNum         int64
	StartOffsetInfo string // optional
	MsgOffsetInfo   string // optional
	OrderCountInfo  string // optional; order pops only
}

func (h *PopMessageResponseHeader) AppendExt(m map[string]string) {
	putInt64(m, "popTime", h.PopTime)
	putInt64(m, "invisibleTime", h.InvisibleTime)
	putInt32(m, "reviveQid", h.ReviveQid)
	putInt64(m, "restNum", h.RestNum)
	putOptStr(m, "startOffsetInfo", h.StartOffsetInfo)
	putOptStr(m, "msgOffsetInfo", h.MsgOffsetInfo)
	putOptStr(m, "orderCountInfo", h.OrderCountInfo)
}

func (h *PopMessageResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "PopMessageResponseHeader", ext: ext}
	h.PopTime = r.int64("popTime")
	h.InvisibleTime = r.int64("invisibleTime")
	h.ReviveQid = r.int32("reviveQid")
	h.RestNum = r.int64("restNum")
	h.StartOffsetInfo = r.str("startOffsetInfo")
	h.MsgOffsetInfo = r.str("msgOffsetInfo")
	h.OrderCountInfo = r.str("orderCountInfo")
	return r.err
}

// AckMessageRequestHeader is ACK_MESSAGE (200051).
type AckMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string // the real topic: the pop retry topic for a retried message
	QueueID       int32  // key queueId
	ExtraInfo     string // the message's POP_CK property
	Offset        int64  // the message's queue offset
}

func (h *AckMessageRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putStr(m, "extraInfo", h.ExtraInfo)
	putInt64(m, "offset", h.Offset)
}

func (h *AckMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "AckMessageRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.ExtraInfo = r.str("extraInfo")
	h.Offset = r.int64("offset")
	return r.err
}

// ChangeInvisibleTimeRequestHeader is CHANGE_MESSAGE_INVISIBLETIME (200053).
type ChangeInvisibleTimeRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32 // key queueId
	ExtraInfo     string
	Offset        int64
	InvisibleTime int64 // ms from now
}

func (h *ChangeInvisibleTimeRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putStr(m, "extraInfo", h.ExtraInfo)
	putInt64(m, "offset", h.Offset)
	putInt64(m, "invisibleTime", h.InvisibleTime)
}

func (h *ChangeInvisibleTimeRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ChangeInvisibleTimeRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.ExtraInfo = r.str("extraInfo")
	h.Offset = r.int64("offset")
	h.InvisibleTime = r.int64("invisibleTime")
	return r.err
}

// ChangeInvisibleTimeResponseHeader answers CHANGE_MESSAGE_INVISIBLETIME:
// the client builds the message's new extra info from it.
type ChangeInvisibleTimeResponseHeader struct {
	PopTime       int64
	InvisibleTime int64
	ReviveQid     int32
}

func (h *ChangeInvisibleTimeResponseHeader) AppendExt(m map[string]string) {
	putInt64(m, "popTime", h.PopTime)
	putInt64(m, "invisibleTime", h.InvisibleTime)
	putInt32(m, "reviveQid", h.ReviveQid)
}

func (h *ChangeInvisibleTimeResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ChangeInvisibleTimeResponseHeader", ext: ext}
	h.PopTime = r.int64("popTime")
	h.InvisibleTime = r.int64("invisibleTime")
	h.ReviveQid = r.int32("reviveQid")
	return r.err
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
	ConsumerGroup string
	Topic         string
	QueueID       int32 // key queueId; -1: every readable queue
	PollTime      int64 // ms the broker may hold the request
	BornTime      int64 // client clock, ms
	Order         bool
	AttemptID     string // key attemptId
}

func (h *NotificationRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putInt64(m, "pollTime", h.PollTime)
	putInt64(m, "bornTime", h.BornTime)
	putBool(m, "order", h.Order)
	putOptStr(m, "attemptId", h.AttemptID)
}

func (h *NotificationRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "NotificationRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.PollTime = r.int64("pollTime")
	h.BornTime = r.int64("bornTime")
	h.Order = r.bool("order")
	h.AttemptID = r.str("attemptId")
	return r.err
}

// NotificationResponseHeader answers NOTIFICATION.
type NotificationResponseHeader struct {
	HasMsg      bool
	PollingFull bool // the request could not be held: too many waiting
}

func (h *NotificationResponseHeader) AppendExt(m map[string]string) {
	putBool(m, "hasMsg", h.HasMsg)
	putBool(m, "pollingFull", h.PollingFull)
}

func (h *NotificationResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "NotificationResponseHeader", ext: ext}
	h.HasMsg = r.bool("hasMsg")
	h.PollingFull = r.bool("pollingFull")
	return r.err
}

// PollingInfoRequestHeader is POLLING_INFO (200055): how many pops and
// notifications of a group wait on a topic's queue.
type PollingInfoRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32 // key queueId; -1: the requests of every queue
}

func (h *PollingInfoRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
}

func (h *PollingInfoRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "PollingInfoRequestHeader", ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	return r.err
}

// PollingInfoResponseHeader answers POLLING_INFO.
type PollingInfoResponseHeader struct {
	PollingNum int32
}

func (h *PollingInfoResponseHeader) AppendExt(m map[string]string) {
	putInt32(m, "pollingNum", h.PollingNum)
}

func (h *PollingInfoResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "PollingInfoResponseHeader", ext: ext}
	h.PollingNum = r.int32("pollingNum")
	return r.err
}

// PeekMessageRequestHeader is PEEK_MESSAGE (200052): read what a pop of
// the group would read, without taking it.
type PeekMessageRequestHeader struct {
	Topic         string
	QueueID       int32 // key queueId; -1: every readable queue
	MaxMsgNums    int32
	ConsumerGroup string
}

func (h *PeekMessageRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putInt32(m, "maxMsgNums", h.MaxMsgNums)
	putStr(m, "consumerGroup", h.ConsumerGroup)
}

func (h *PeekMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "PeekMessageRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.MaxMsgNums = r.int32("maxMsgNums")
	h.ConsumerGroup = r.str("consumerGroup")
	return r.err
}
