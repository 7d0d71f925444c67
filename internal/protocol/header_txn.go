package protocol

// Retry and transaction headers (rocketmq-spec.md §3.5; go-client-wire.md §6.6, §8).

// ConsumerSendMsgBackRequestHeader is CONSUMER_SEND_MSG_BACK (36).
type ConsumerSendMsgBackRequestHeader struct {
	Offset int64  `ext:"offset"` // commit-log offset of the failed message
	Group  string `ext:"group"`
	// DelayLevel: 0 = broker chooses (3 + reconsumeTimes), < 0 = straight to
	// the DLQ, > 0 = that level.
	DelayLevel  int32  `ext:"delayLevel"`
	OriginMsgID string `ext:"originMsgId,opt"`
	OriginTopic string `ext:"originTopic,opt"`
	UnitMode    bool   `ext:"unitMode"`
	// MaxReconsumeTimes is honoured when the request version is >= V3_4_9.
	MaxReconsumeTimes Optional[int32] `ext:"maxReconsumeTimes"`
	BrokerName        string          `ext:"bname,opt"`
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
	ProducerGroup        string `ext:"producerGroup"`
	TranStateTableOffset int64  `ext:"tranStateTableOffset"` // consume-queue offset of the half message
	CommitLogOffset      int64  `ext:"commitLogOffset"`      // commit-log offset of the half message
	CommitOrRollback     int32  `ext:"commitOrRollback"`     // Transaction*Type
	FromTransactionCheck bool   `ext:"fromTransactionCheck"`
	MsgID                string `ext:"msgId"` // client (UNIQ_KEY) id
	TransactionID        string `ext:"transactionId,opt"`
	Topic                string `ext:"topic,opt"` // 5.x
	BrokerName           string `ext:"bname,opt"`
}

// CheckTransactionStateRequestHeader is CHECK_TRANSACTION_STATE (39), sent
// one-way by the broker to a producer of the half message's group.
type CheckTransactionStateRequestHeader struct {
	TranStateTableOffset int64  `ext:"tranStateTableOffset"`
	CommitLogOffset      int64  `ext:"commitLogOffset"`
	MsgID                string `ext:"msgId,opt"` // UNIQ_KEY
	TransactionID        string `ext:"transactionId,opt"`
	OffsetMsgID          string `ext:"offsetMsgId,opt"`
	Topic                string `ext:"topic,opt"` // 5.x
}

// RecallMessageRequestHeader is RECALL_MESSAGE (370, 5.3.x): recall a
// timer message before delivery by the handle its send answered.
type RecallMessageRequestHeader struct {
	ProducerGroup string `ext:"producerGroup,opt"`
	Topic         string `ext:"topic"`
	RecallHandle  string `ext:"recallHandle"`
	BrokerName    string `ext:"bname,opt"` // RpcRequestHeader
}

// RecallMessageResponseHeader answers RECALL_MESSAGE: the recalled
// message's id (UNIQ_KEY).
type RecallMessageResponseHeader struct {
	MsgID string `ext:"msgId"`
}
