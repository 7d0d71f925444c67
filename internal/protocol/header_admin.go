package protocol

// Topic, group and admin-tool headers (rocketmq-spec.md §3.4). mqadmin and
// the dashboard send these; clients do not.

// TopicRequestHeader names a topic: DELETE_TOPIC_IN_BROKER (215),
// GET_TOPIC_STATS_INFO (202), QUERY_TOPIC_CONSUME_BY_WHO (300).
type TopicRequestHeader struct {
	Topic string `ext:"topic"`
}

type (
	DeleteTopicRequestHeader            = TopicRequestHeader
	GetTopicStatsInfoRequestHeader      = TopicRequestHeader
	QueryTopicConsumeByWhoRequestHeader = TopicRequestHeader
)

// CreateTopicRequestHeader is UPDATE_AND_CREATE_TOPIC (17).
type CreateTopicRequestHeader struct {
	Topic           string          `ext:"topic"`
	DefaultTopic    string          `ext:"defaultTopic"`
	ReadQueueNums   int32           `ext:"readQueueNums"`
	WriteQueueNums  int32           `ext:"writeQueueNums"`
	Perm            int32           `ext:"perm"`
	TopicFilterType TopicFilterType `ext:"topicFilterType"`
	TopicSysFlag    Optional[int32] `ext:"topicSysFlag"`
	Order           bool            `ext:"order"`
	Attributes      string          `ext:"attributes,opt"` // 5.x
	Force           Optional[bool]  `ext:"force"`          // 5.x
}

// TopicConfig returns the topic configuration the request describes.
func (h *CreateTopicRequestHeader) TopicConfig() TopicConfig {
	return TopicConfig{
		TopicName:       h.Topic,
		ReadQueueNums:   h.ReadQueueNums,
		WriteQueueNums:  h.WriteQueueNums,
		Perm:            h.Perm,
		TopicFilterType: h.TopicFilterType,
		TopicSysFlag:    h.TopicSysFlag.Value,
		Order:           h.Order,
	}
}

// DeleteSubscriptionGroupRequestHeader is DELETE_SUBSCRIPTIONGROUP (207).
// RemoveOffset is 4.9's removeOffset or 5.x's cleanOffset: both are
// written, either one set means remove.
type DeleteSubscriptionGroupRequestHeader struct {
	GroupName    string
	RemoveOffset bool
}

func (h *DeleteSubscriptionGroupRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "groupName", h.GroupName)
	putBool(m, "removeOffset", h.RemoveOffset)
	putBool(m, "cleanOffset", h.RemoveOffset)
}

func (h *DeleteSubscriptionGroupRequestHeader) Decode(ext map[string]string) error {
	h.GroupName = ext["groupName"]
	r := extReader{ext: ext}
	h.RemoveOffset = r.bool("removeOffset") || r.bool("cleanOffset")
	return nil
}

// GetConsumeStatsRequestHeader is GET_CONSUME_STATS (208).
type GetConsumeStatsRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	Topic         string `ext:"topic,opt"` // all subscribed topics when empty
}

// ResetOffsetRequestHeader is INVOKE_BROKER_TO_RESET_OFFSET (222) and, from
// broker to client, RESET_CONSUMER_CLIENT_OFFSET (220).
type ResetOffsetRequestHeader struct {
	Topic     string          `ext:"topic"`
	Group     string          `ext:"group"`
	Timestamp int64           `ext:"timestamp"` // ms
	IsForce   bool            `ext:"isForce"`
	QueueID   Optional[int32] `ext:"queueId"` // 5.x; -1 = all queues
	Offset    Optional[int64] `ext:"offset"`  // 5.x
}

// GetConsumerStatusRequestHeader is GET_CONSUMER_STATUS_FROM_CLIENT (221)
// and INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223).
type GetConsumerStatusRequestHeader struct {
	Topic      string `ext:"topic"`
	Group      string `ext:"group"`
	ClientAddr string `ext:"clientAddr,opt"`
}

// QueryConsumeTimeSpanRequestHeader is QUERY_CONSUME_TIME_SPAN (303).
type QueryConsumeTimeSpanRequestHeader struct {
	Topic string `ext:"topic"`
	Group string `ext:"group"`
}

// GetConsumerRunningInfoRequestHeader is GET_CONSUMER_RUNNING_INFO (307).
type GetConsumerRunningInfoRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	ClientID      string `ext:"clientId"`
	JstackEnable  bool   `ext:"jstackEnable"`
}

// ConsumeMessageDirectlyResultRequestHeader is CONSUME_MESSAGE_DIRECTLY (309).
type ConsumeMessageDirectlyResultRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
	ClientID      string `ext:"clientId,opt"`
	MsgID         string `ext:"msgId,opt"`      // offset message id
	BrokerName    string `ext:"brokerName,opt"` // added by the broker when forwarding
}

// CloneGroupOffsetRequestHeader is CLONE_GROUP_OFFSET (314).
type CloneGroupOffsetRequestHeader struct {
	SrcGroup  string `ext:"srcGroup"`
	DestGroup string `ext:"destGroup"`
	Topic     string `ext:"topic,opt"`
	Offline   bool   `ext:"offline"`
}

// GetConsumeStatsInBrokerHeader is GET_BROKER_CONSUME_STATS (317).
type GetConsumeStatsInBrokerHeader struct {
	IsOrder bool `ext:"isOrder"`
}

// QueryConsumeQueueRequestHeader is QUERY_CONSUME_QUEUE (321).
type QueryConsumeQueueRequestHeader struct {
	Topic         string `ext:"topic"`
	QueueID       int32  `ext:"queueId"`
	Index         int64  `ext:"index"`
	Count         int32  `ext:"count"`
	ConsumerGroup string `ext:"consumerGroup"`
}

// ViewBrokerStatsDataRequestHeader is VIEW_BROKER_STATS_DATA (315).
type ViewBrokerStatsDataRequestHeader struct {
	StatsName string `ext:"statsName"`
	StatsKey  string `ext:"statsKey"`
}

// QueryCorrectionOffsetHeader is QUERY_CORRECTION_OFFSET (308).
type QueryCorrectionOffsetHeader struct {
	FilterGroups string `ext:"filterGroups,opt"` // comma-separated
	CompareGroup string `ext:"compareGroup"`
	Topic        string `ext:"topic"`
}

// ResumeCheckHalfMessageRequestHeader is RESUME_CHECK_HALF_MESSAGE (323).
type ResumeCheckHalfMessageRequestHeader struct {
	MsgID string `ext:"msgId,opt"`
}

// GetBrokerConfigResponseHeader answers GET_BROKER_CONFIG; the body is the
// configuration as Java properties text.
type GetBrokerConfigResponseHeader struct {
	Version string `ext:"version"` // DataVersion JSON of the broker configuration
}

// QueryTopicsByConsumerRequestHeader is QUERY_TOPICS_BY_CONSUMER (343).
type QueryTopicsByConsumerRequestHeader struct {
	Group string `ext:"group"`
}

// QuerySubscriptionByConsumerRequestHeader is QUERY_SUBSCRIPTION_BY_CONSUMER (345).
type QuerySubscriptionByConsumerRequestHeader struct {
	Group string `ext:"group"`
	Topic string `ext:"topic,opt"`
}

// GetTopicConfigRequestHeader is GET_TOPIC_CONFIG (351, 5.x).
type GetTopicConfigRequestHeader struct {
	Topic string `ext:"topic"` // required
	// Lo asks for the static-topic queue mapping too (the 5.x client
	// sets it).
	Lo Optional[bool] `ext:"lo"`
}

// GetSubscriptionGroupConfigRequestHeader is GET_SUBSCRIPTIONGROUP_CONFIG
// (352, 5.x).
type GetSubscriptionGroupConfigRequestHeader struct {
	Group string `ext:"group"` // required
}
