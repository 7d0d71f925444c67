package protocol

// Retry and transaction headers (rocketmq-spec.md §3.5; go-client-wire.md §6.6, §8).

// ConsumerSendMsgBackRequestHeader is CONSUMER_SEND_MSG_BACK (36).
type ConsumerSendMsgBackRequestHeader struct {
	Offset int64 // commit-log offset of the failed message
	Group  string
	// DelayLevel: 0 = broker chooses (3 + reconsumeTimes), < 0 = straight to
	// the DLQ, > 0 = that level.
	DelayLevel  int32
	OriginMsgID string // key originMsgId; optional
	OriginTopic string // optional
	UnitMode    bool
	// MaxReconsumeTimes is honoured when the request version is >= V3_4_9.
	MaxReconsumeTimes Optional[int32]
	BrokerName        string // key bname; optional
}

func (h *ConsumerSendMsgBackRequestHeader) AppendExt(m map[string]string) {
	putInt64(m, "offset", h.Offset)
	putStr(m, "group", h.Group)
	putInt32(m, "delayLevel", h.DelayLevel)
	putOptStr(m, "originMsgId", h.OriginMsgID)
	putOptStr(m, "originTopic", h.OriginTopic)
	putBool(m, "unitMode", h.UnitMode)
	putOptInt32(m, "maxReconsumeTimes", h.MaxReconsumeTimes)
	putOptStr(m, "bname", h.BrokerName)
}

func (h *ConsumerSendMsgBackRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ConsumerSendMsgBackRequestHeader", ext: ext}
	h.Offset = r.int64("offset")
	h.Group = r.str("group")
	h.DelayLevel = r.int32("delayLevel")
	h.OriginMsgID = r.str("originMsgId")
	h.OriginTopic = r.str("originTopic")
	h.UnitMode = r.bool("unitMode")
	h.MaxReconsumeTimes = r.optInt32("maxReconsumeTimes")
	h.BrokerName = r.str("bname")
	return r.err
}

// Values of EndTransactionRequestHeader.CommitOrRollback (MessageSysFlag
// transaction bits).
const (
	TransactionNotType      int32 = 0  // unknown: ignored by the broker
	TransactionCommitType   int32 = 8  // commit
	TransactionRollbackType int32 = 12 // rollback
)

// EndTransactionRequestHeader is END_TRANSACTION (37). Clients send it as a
// fire-and-forget request; remark may carry a local-exception description.
type EndTransactionRequestHeader struct {
	ProducerGroup        string
	TranStateTableOffset int64 // consume-queue offset of the half message
	CommitLogOffset      int64 // commit-log offset of the half message
	CommitOrRollback     int32 // Transaction*Type
	FromTransactionCheck bool
	MsgID                string // key msgId: client (UNIQ_KEY) id
	TransactionID        string // key transactionId; optional
	Topic                string // 5.x; optional
	BrokerName           string // key bname; optional
}

func (h *EndTransactionRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "producerGroup", h.ProducerGroup)
	putInt64(m, "tranStateTableOffset", h.TranStateTableOffset)
	putInt64(m, "commitLogOffset", h.CommitLogOffset)
	putInt32(m, "commitOrRollback", h.CommitOrRollback)
	putBool(m, "fromTransactionCheck", h.FromTransactionCheck)
	putStr(m, "msgId", h.MsgID)
	putOptStr(m, "transactionId", h.TransactionID)
	putOptStr(m, "topic", h.Topic)
	putOptStr(m, "bname", h.BrokerName)
}

func (h *EndTransactionRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "EndTransactionRequestHeader", ext: ext}
	h.ProducerGroup = r.str("producerGroup")
	h.TranStateTableOffset = r.int64("tranStateTableOffset")
	h.CommitLogOffset = r.int64("commitLogOffset")
	h.CommitOrRollback = r.int32("commitOrRollback")
	h.FromTransactionCheck = r.bool("fromTransactionCheck")
	h.MsgID = r.str("msgId")
	h.TransactionID = r.str("transactionId")
	h.Topic = r.str("topic")
	h.BrokerName = r.str("bname")
	return r.err
}

// CheckTransactionStateRequestHeader is CHECK_TRANSACTION_STATE (39), sent
// one-way by the broker to a producer of the half message's group.
type CheckTransactionStateRequestHeader struct {
	TranStateTableOffset int64
	CommitLogOffset      int64
	MsgID                string // key msgId: UNIQ_KEY
	TransactionID        string // key transactionId
	OffsetMsgID          string // key offsetMsgId
	Topic                string // 5.x; optional
}

func (h *CheckTransactionStateRequestHeader) AppendExt(m map[string]string) {
	putInt64(m, "tranStateTableOffset", h.TranStateTableOffset)
	putInt64(m, "commitLogOffset", h.CommitLogOffset)
	putOptStr(m, "msgId", h.MsgID)
	putOptStr(m, "transactionId", h.TransactionID)
	putOptStr(m, "offsetMsgId", h.OffsetMsgID)
	putOptStr(m, "topic", h.Topic)
}

func (h *CheckTransactionStateRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "CheckTransactionStateRequestHeader", ext: ext}
	h.TranStateTableOffset = r.int64("tranStateTableOffset")
	h.CommitLogOffset = r.int64("commitLogOffset")
	h.MsgID = r.str("msgId")
	h.TransactionID = r.str("transactionId")
	h.OffsetMsgID = r.str("offsetMsgId")
	h.Topic = r.str("topic")
	return r.err
}

// RecallMessageRequestHeader is RECALL_MESSAGE (370, 5.3.x): recall a
// timer message before delivery by the handle its send answered.
type RecallMessageRequestHeader struct {
	ProducerGroup string // optional
	Topic         string
	RecallHandle  string
	BrokerName    string // key bname; optional (RpcRequestHeader)
}

func (h *RecallMessageRequestHeader) AppendExt(m map[string]string) {
	putOptStr(m, "producerGroup", h.ProducerGroup)
	putStr(m, "topic", h.Topic)
	putStr(m, "recallHandle", h.RecallHandle)
	putOptStr(m, "bname", h.BrokerName)
}

func (h *RecallMessageRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "RecallMessageRequestHeader", ext: ext}
	h.ProducerGroup = r.str("producerGroup")
	h.Topic = r.str("topic")
	h.RecallHandle = r.str("recallHandle")
	h.BrokerName = r.str("bname")
	return r.err
}

// RecallMessageResponseHeader answers RECALL_MESSAGE: the recalled
// message's id (UNIQ_KEY).
type RecallMessageResponseHeader struct {
	MsgID string // key msgId
}

func (h *RecallMessageResponseHeader) AppendExt(m map[string]string) {
	putStr(m, "msgId", h.MsgID)
}

func (h *RecallMessageResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "RecallMessageResponseHeader", ext: ext}
	h.MsgID = r.str("msgId")
	return r.err
}
