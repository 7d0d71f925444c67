package protocol

// Bodies of admin requests mqadmin and the dashboard send (issue 14).

// QueueTimeSpan is one queue of QUERY_CONSUME_TIME_SPAN's answer: the store
// times of its first and last message, of the group's position, and how
// long the next unconsumed message has waited (0 when none waits).
type QueueTimeSpan struct {
	MessageQueue     MessageQueue `json:"messageQueue"`
	MinTimeStamp     int64        `json:"minTimeStamp"`
	MaxTimeStamp     int64        `json:"maxTimeStamp"`
	ConsumeTimeStamp int64        `json:"consumeTimeStamp"`
	DelayTime        int64        `json:"delayTime"`
}

// QueryConsumeTimeSpanBody answers QUERY_CONSUME_TIME_SPAN (303).
type QueryConsumeTimeSpanBody struct {
	ConsumeTimeSpanSet []QueueTimeSpan `json:"consumeTimeSpanSet"`
}

// QueryCorrectionOffsetBody answers QUERY_CORRECTION_OFFSET (308): per
// queue id, the lowest offset committed by the other groups (MaxInt64
// where the compare group is already past it).
type QueryCorrectionOffsetBody struct {
	CorrectionOffsets map[int32]int64 `json:"correctionOffsets"`
}

// ProducerInfo is one producer channel in GET_ALL_PRODUCER_INFO's answer.
type ProducerInfo struct {
	ClientID            string `json:"clientId"`
	RemoteIP            string `json:"remoteIP"`
	Language            string `json:"language"` // LanguageCode enum name
	Version             int32  `json:"version"`
	LastUpdateTimestamp int64  `json:"lastUpdateTimestamp"`
}

// ProducerTableInfo answers GET_ALL_PRODUCER_INFO (328): producer channels
// by group.
type ProducerTableInfo struct {
	Data map[string][]ProducerInfo `json:"data"`
}

// QuerySubscriptionResponseBody answers QUERY_SUBSCRIPTION_BY_CONSUMER
// (345); SubscriptionData is null when the group's online consumers do not
// subscribe the topic.
type QuerySubscriptionResponseBody struct {
	SubscriptionData *SubscriptionData `json:"subscriptionData"`
	Group            string            `json:"group"`
	Topic            string            `json:"topic"`
}

// GetConsumerStatusBody is both GET_CONSUMER_STATUS_FROM_CLIENT's answer
// (MessageQueueTable: the client's offset per queue) and
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS's (ConsumerTable: those tables by
// client id).
type GetConsumerStatusBody struct {
	MessageQueueTable map[MessageQueue]int64            `json:"messageQueueTable"`
	ConsumerTable     map[string]map[MessageQueue]int64 `json:"consumerTable"`
}

// ConsumeQueueData is one ConsumeQueue unit of QUERY_CONSUME_QUEUE's answer.
type ConsumeQueueData struct {
	PhysicOffset   int64  `json:"physicOffset"`
	PhysicSize     int32  `json:"physicSize"`
	TagsCode       int64  `json:"tagsCode"`
	ExtendDataJSON string `json:"extendDataJson,omitempty"`
	BitMap         string `json:"bitMap,omitempty"`
	Eval           bool   `json:"eval"`
	Msg            string `json:"msg,omitempty"`
}

// QueryConsumeQueueResponseBody answers QUERY_CONSUME_QUEUE (321, mqadmin
// queryCq).
type QueryConsumeQueueResponseBody struct {
	SubscriptionData *SubscriptionData  `json:"subscriptionData,omitempty"`
	FilterData       string             `json:"filterData,omitempty"`
	QueueData        []ConsumeQueueData `json:"queueData"`
	MaxQueueIndex    int64              `json:"maxQueueIndex"`
	MinQueueIndex    int64              `json:"minQueueIndex"`
}

// SubscriptionGroupList is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST's body.
type SubscriptionGroupList struct {
	GroupConfigList []SubscriptionGroupConfig `json:"groupConfigList"`
}
