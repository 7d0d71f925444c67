package message

// Property keys (spec §5.4, MessageConst). Values are RocketMQ's: do not change.
const (
	PropertyKeys                        = "KEYS"  // business keys separated by KeySeparator; indexed
	PropertyTags                        = "TAGS"  // the message tag (one)
	PropertyWaitStoreMsgOK              = "WAIT"  // "false": answer before flush/replication
	PropertyDelayTimeLevel              = "DELAY" // delay level 1..max
	PropertyRetryTopic                  = "RETRY_TOPIC"
	PropertyRealTopic                   = "REAL_TOPIC" // original topic while parked (schedule, half, timer)
	PropertyRealQueueID                 = "REAL_QID"   // original queue id, decimal
	PropertyTransactionPrepared         = "TRAN_MSG"   // "true" on a half message
	PropertyProducerGroup               = "PGROUP"
	PropertyMinOffset                   = "MIN_OFFSET" // set by consumers, not stored
	PropertyMaxOffset                   = "MAX_OFFSET" // set by consumers, not stored
	PropertyBuyerID                     = "BUYER_ID"
	PropertyOriginMessageID             = "ORIGIN_MESSAGE_ID"
	PropertyTransferFlag                = "TRANSFER_FLAG"
	PropertyCorrectionFlag              = "CORRECTION_FLAG"
	PropertyMQ2Flag                     = "MQ2_FLAG"
	PropertyReconsumeTime               = "RECONSUME_TIME"
	PropertyMsgRegion                   = "MSG_REGION"
	PropertyTraceSwitch                 = "TRACE_ON"
	PropertyUniqClientMessageIDKeyIdx   = "UNIQ_KEY" // client message id; indexed
	PropertyMaxReconsumeTimes           = "MAX_RECONSUME_TIMES"
	PropertyConsumeStartTimestamp       = "CONSUME_START_TIME"
	PropertyTransactionPreparedQueueOff = "TRAN_PREPARED_QUEUE_OFFSET"
	PropertyTransactionCheckTimes       = "TRANSACTION_CHECK_TIMES"
	PropertyCheckImmunityTimeInSeconds  = "CHECK_IMMUNITY_TIME_IN_SECONDS"
	PropertyInstanceID                  = "INSTANCE_ID"
	PropertyCorrelationID               = "CORRELATION_ID"
	PropertyMessageReplyToClient        = "REPLY_TO_CLIENT"
	PropertyMessageTTL                  = "TTL"
	PropertyReplyMessageArriveTime      = "ARRIVE_TIME"
	PropertyPushReplyTime               = "PUSH_REPLY_TIME"
	PropertyCluster                     = "CLUSTER" // cluster of the storing broker
	PropertyMessageType                 = "MSG_TYPE"
	PropertyInnerMultiDispatch          = "INNER_MULTI_DISPATCH"
	PropertyInnerMultiQueueOffset       = "INNER_MULTI_QUEUE_OFFSET"
	PropertyTransactionID               = "__transactionId__"
	PropertyStartDeliverTime            = "__STARTDELIVERTIME" // Aliyun ONS only; not handled by Apache brokers
	PropertyShardingKey                 = "__SHARDINGKEY"
	PropertyTimerDeliverMS              = "TIMER_DELIVER_MS" // 5.x timer
	PropertyTimerDelaySec               = "TIMER_DELAY_SEC"
	PropertyTimerDelayMS                = "TIMER_DELAY_MS"
	PropertyTimerOutMS                  = "TIMER_OUT_MS"
	PropertyTimerEnqueueMS              = "TIMER_ENQUEUE_MS"
	PropertyTimerDequeueMS              = "TIMER_DEQUEUE_MS"
	PropertyTimerRollTimes              = "TIMER_ROLL_TIMES"
	PropertyTimerDelUniqKey             = "TIMER_DEL_UNIQKEY"
	PropertyCRC32                       = "__CRC32#"
	PropertyDLQOriginTopic              = "DLQ_ORIGIN_TOPIC"
	PropertyDLQOriginMessageID          = "DLQ_ORIGIN_MESSAGE_ID"
	PropertyBornHost                    = "__BORNHOST"
	PropertyBornTimestamp               = "BORN_TIMESTAMP"
	PropertyExtendUniqInfo              = "EXTEND_UNIQ_INFO"
	PropertyDupInfo                     = "DUP_INFO"
	PropertyInnerNum                    = "INNER_NUM"
	PropertyInnerBase                   = "INNER_BASE"
	PropertyPopCK                       = "POP_CK"
	PropertyPopCKOffset                 = "POP_CK_OFFSET"
	PropertyFirstPopTime                = "1ST_POP_TIME"
	PropertyForwardQueueID              = "PROPERTY_FORWARD_QUEUE_ID"
	PropertyRedirect                    = "REDIRECT"
	PropertyTraceContext                = "TRACE_CONTEXT"
)

// KeySeparator separates the business keys in the KEYS property.
const KeySeparator = " "

// Topics and values the store itself knows by name.
const (
	// ScheduleTopic holds delay-level messages until delivery (queue = level - 1).
	ScheduleTopic = "SCHEDULE_TOPIC_XXXX"
	// MessageTypeReply is the MSG_TYPE value of a request/reply reply.
	MessageTypeReply = "reply"
)
