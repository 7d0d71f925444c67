package protocol

// Topic, group and admin-tool headers (rocketmq-spec.md §3.4). mqadmin and
// the dashboard send these; clients do not.

// TopicRequestHeader names a topic: DELETE_TOPIC_IN_BROKER (215),
// GET_TOPIC_STATS_INFO (202), QUERY_TOPIC_CONSUME_BY_WHO (300).
type TopicRequestHeader struct {
	Topic string
}

type (
	DeleteTopicRequestHeader            = TopicRequestHeader
	GetTopicStatsInfoRequestHeader      = TopicRequestHeader
	QueryTopicConsumeByWhoRequestHeader = TopicRequestHeader
)

func (h *TopicRequestHeader) AppendExt(m map[string]string) { putStr(m, "topic", h.Topic) }

func (h *TopicRequestHeader) Decode(ext map[string]string) error {
	h.Topic = ext["topic"]
	return nil
}

// CreateTopicRequestHeader is UPDATE_AND_CREATE_TOPIC (17).
type CreateTopicRequestHeader struct {
	Topic           string
	DefaultTopic    string
	ReadQueueNums   int32
	WriteQueueNums  int32
	Perm            int32
	TopicFilterType TopicFilterType
	TopicSysFlag    Optional[int32]
	Order           bool
	Attributes      string         // 5.x; optional
	Force           Optional[bool] // 5.x
}

func (h *CreateTopicRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putStr(m, "defaultTopic", h.DefaultTopic)
	putInt32(m, "readQueueNums", h.ReadQueueNums)
	putInt32(m, "writeQueueNums", h.WriteQueueNums)
	putInt32(m, "perm", h.Perm)
	putStr(m, "topicFilterType", string(h.TopicFilterType))
	putOptInt32(m, "topicSysFlag", h.TopicSysFlag)
	putBool(m, "order", h.Order)
	putOptStr(m, "attributes", h.Attributes)
	putOptBool(m, "force", h.Force)
}

func (h *CreateTopicRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "CreateTopicRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.DefaultTopic = r.str("defaultTopic")
	h.ReadQueueNums = r.int32("readQueueNums")
	h.WriteQueueNums = r.int32("writeQueueNums")
	h.Perm = r.int32("perm")
	h.TopicFilterType = TopicFilterType(r.str("topicFilterType"))
	h.TopicSysFlag = r.optInt32("topicSysFlag")
	h.Order = r.bool("order")
	h.Attributes = r.str("attributes")
	h.Force = r.optBool("force")
	return r.err
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
	ConsumerGroup string
	Topic         string // optional: all subscribed topics when empty
}

func (h *GetConsumeStatsRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putOptStr(m, "topic", h.Topic)
}

func (h *GetConsumeStatsRequestHeader) Decode(ext map[string]string) error {
	h.ConsumerGroup = ext["consumerGroup"]
	h.Topic = ext["topic"]
	return nil
}

// ResetOffsetRequestHeader is INVOKE_BROKER_TO_RESET_OFFSET (222) and, from
// broker to client, RESET_CONSUMER_CLIENT_OFFSET (220).
type ResetOffsetRequestHeader struct {
	Topic     string
	Group     string
	Timestamp int64           // ms
	IsForce   bool            // key isForce
	QueueID   Optional[int32] // 5.x, key queueId; -1 = all queues
	Offset    Optional[int64] // 5.x
}

func (h *ResetOffsetRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putStr(m, "group", h.Group)
	putInt64(m, "timestamp", h.Timestamp)
	putBool(m, "isForce", h.IsForce)
	putOptInt32(m, "queueId", h.QueueID)
	putOptInt64(m, "offset", h.Offset)
}

func (h *ResetOffsetRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ResetOffsetRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.Group = r.str("group")
	h.Timestamp = r.int64("timestamp")
	h.IsForce = r.bool("isForce")
	h.QueueID = r.optInt32("queueId")
	h.Offset = r.optInt64("offset")
	return r.err
}

// GetConsumerStatusRequestHeader is GET_CONSUMER_STATUS_FROM_CLIENT (221)
// and INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223).
type GetConsumerStatusRequestHeader struct {
	Topic      string
	Group      string
	ClientAddr string // optional
}

func (h *GetConsumerStatusRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putStr(m, "group", h.Group)
	putOptStr(m, "clientAddr", h.ClientAddr)
}

func (h *GetConsumerStatusRequestHeader) Decode(ext map[string]string) error {
	h.Topic = ext["topic"]
	h.Group = ext["group"]
	h.ClientAddr = ext["clientAddr"]
	return nil
}

// QueryConsumeTimeSpanRequestHeader is QUERY_CONSUME_TIME_SPAN (303).
type QueryConsumeTimeSpanRequestHeader struct {
	Topic string
	Group string
}

func (h *QueryConsumeTimeSpanRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putStr(m, "group", h.Group)
}

func (h *QueryConsumeTimeSpanRequestHeader) Decode(ext map[string]string) error {
	h.Topic = ext["topic"]
	h.Group = ext["group"]
	return nil
}

// GetConsumerRunningInfoRequestHeader is GET_CONSUMER_RUNNING_INFO (307).
type GetConsumerRunningInfoRequestHeader struct {
	ConsumerGroup string
	ClientID      string // key clientId
	JstackEnable  bool
}

func (h *GetConsumerRunningInfoRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putStr(m, "clientId", h.ClientID)
	putBool(m, "jstackEnable", h.JstackEnable)
}

func (h *GetConsumerRunningInfoRequestHeader) Decode(ext map[string]string) error {
	h.ConsumerGroup = ext["consumerGroup"]
	h.ClientID = ext["clientId"]
	h.JstackEnable = (&extReader{ext: ext}).bool("jstackEnable")
	return nil
}

// ConsumeMessageDirectlyResultRequestHeader is CONSUME_MESSAGE_DIRECTLY (309).
type ConsumeMessageDirectlyResultRequestHeader struct {
	ConsumerGroup string
	ClientID      string // key clientId; optional
	MsgID         string // key msgId: offset message id; optional
	BrokerName    string // optional; added by the broker when forwarding
}

func (h *ConsumeMessageDirectlyResultRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
	putOptStr(m, "clientId", h.ClientID)
	putOptStr(m, "msgId", h.MsgID)
	putOptStr(m, "brokerName", h.BrokerName)
}

func (h *ConsumeMessageDirectlyResultRequestHeader) Decode(ext map[string]string) error {
	h.ConsumerGroup = ext["consumerGroup"]
	h.ClientID = ext["clientId"]
	h.MsgID = ext["msgId"]
	h.BrokerName = ext["brokerName"]
	return nil
}

// CloneGroupOffsetRequestHeader is CLONE_GROUP_OFFSET (314).
type CloneGroupOffsetRequestHeader struct {
	SrcGroup  string
	DestGroup string
	Topic     string // optional
	Offline   bool
}

func (h *CloneGroupOffsetRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "srcGroup", h.SrcGroup)
	putStr(m, "destGroup", h.DestGroup)
	putOptStr(m, "topic", h.Topic)
	putBool(m, "offline", h.Offline)
}

func (h *CloneGroupOffsetRequestHeader) Decode(ext map[string]string) error {
	h.SrcGroup = ext["srcGroup"]
	h.DestGroup = ext["destGroup"]
	h.Topic = ext["topic"]
	h.Offline = (&extReader{ext: ext}).bool("offline")
	return nil
}

// GetConsumeStatsInBrokerHeader is GET_BROKER_CONSUME_STATS (317).
type GetConsumeStatsInBrokerHeader struct {
	IsOrder bool // key isOrder
}

func (h *GetConsumeStatsInBrokerHeader) AppendExt(m map[string]string) {
	putBool(m, "isOrder", h.IsOrder)
}

func (h *GetConsumeStatsInBrokerHeader) Decode(ext map[string]string) error {
	h.IsOrder = (&extReader{ext: ext}).bool("isOrder")
	return nil
}

// QueryConsumeQueueRequestHeader is QUERY_CONSUME_QUEUE (321).
type QueryConsumeQueueRequestHeader struct {
	Topic         string
	QueueID       int32 // key queueId
	Index         int64
	Count         int32
	ConsumerGroup string
}

func (h *QueryConsumeQueueRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putInt32(m, "queueId", h.QueueID)
	putInt64(m, "index", h.Index)
	putInt32(m, "count", h.Count)
	putStr(m, "consumerGroup", h.ConsumerGroup)
}

func (h *QueryConsumeQueueRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "QueryConsumeQueueRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.QueueID = r.int32("queueId")
	h.Index = r.int64("index")
	h.Count = r.int32("count")
	h.ConsumerGroup = r.str("consumerGroup")
	return r.err
}

// ViewBrokerStatsDataRequestHeader is VIEW_BROKER_STATS_DATA (315).
type ViewBrokerStatsDataRequestHeader struct {
	StatsName string
	StatsKey  string
}

func (h *ViewBrokerStatsDataRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "statsName", h.StatsName)
	putStr(m, "statsKey", h.StatsKey)
}

func (h *ViewBrokerStatsDataRequestHeader) Decode(ext map[string]string) error {
	h.StatsName = ext["statsName"]
	h.StatsKey = ext["statsKey"]
	return nil
}

// QueryCorrectionOffsetHeader is QUERY_CORRECTION_OFFSET (308).
type QueryCorrectionOffsetHeader struct {
	FilterGroups string // optional, comma-separated
	CompareGroup string
	Topic        string
}

func (h *QueryCorrectionOffsetHeader) AppendExt(m map[string]string) {
	putOptStr(m, "filterGroups", h.FilterGroups)
	putStr(m, "compareGroup", h.CompareGroup)
	putStr(m, "topic", h.Topic)
}

func (h *QueryCorrectionOffsetHeader) Decode(ext map[string]string) error {
	h.FilterGroups = ext["filterGroups"]
	h.CompareGroup = ext["compareGroup"]
	h.Topic = ext["topic"]
	return nil
}

// ResumeCheckHalfMessageRequestHeader is RESUME_CHECK_HALF_MESSAGE (323).
type ResumeCheckHalfMessageRequestHeader struct {
	MsgID string // key msgId
}

func (h *ResumeCheckHalfMessageRequestHeader) AppendExt(m map[string]string) {
	putOptStr(m, "msgId", h.MsgID)
}

func (h *ResumeCheckHalfMessageRequestHeader) Decode(ext map[string]string) error {
	h.MsgID = ext["msgId"]
	return nil
}

// GetBrokerConfigResponseHeader answers GET_BROKER_CONFIG; the body is the
// configuration as Java properties text.
type GetBrokerConfigResponseHeader struct {
	Version string // DataVersion JSON of the broker configuration
}

func (h *GetBrokerConfigResponseHeader) AppendExt(m map[string]string) {
	putStr(m, "version", h.Version)
}

func (h *GetBrokerConfigResponseHeader) Decode(ext map[string]string) error {
	h.Version = ext["version"]
	return nil
}

// QueryTopicsByConsumerRequestHeader is QUERY_TOPICS_BY_CONSUMER (343).
type QueryTopicsByConsumerRequestHeader struct {
	Group string
}

func (h *QueryTopicsByConsumerRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "group", h.Group)
}

func (h *QueryTopicsByConsumerRequestHeader) Decode(ext map[string]string) error {
	h.Group = ext["group"]
	return nil
}

// QuerySubscriptionByConsumerRequestHeader is QUERY_SUBSCRIPTION_BY_CONSUMER (345).
type QuerySubscriptionByConsumerRequestHeader struct {
	Group string
	Topic string
}

func (h *QuerySubscriptionByConsumerRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "group", h.Group)
	putOptStr(m, "topic", h.Topic)
}

func (h *QuerySubscriptionByConsumerRequestHeader) Decode(ext map[string]string) error {
	h.Group = ext["group"]
	h.Topic = ext["topic"]
	return nil
}

// GetTopicConfigRequestHeader is GET_TOPIC_CONFIG (351, 5.x).
type GetTopicConfigRequestHeader struct {
	Topic string // required
	// Lo asks for the static-topic queue mapping too (the 5.x client
	// sets it).
	Lo Optional[bool]
}

func (h *GetTopicConfigRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putOptBool(m, "lo", h.Lo)
}

func (h *GetTopicConfigRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "GetTopicConfigRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.Lo = r.optBool("lo")
	return r.err
}

// GetSubscriptionGroupConfigRequestHeader is GET_SUBSCRIPTIONGROUP_CONFIG
// (352, 5.x).
type GetSubscriptionGroupConfigRequestHeader struct {
	Group string // required
}

func (h *GetSubscriptionGroupConfigRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "group", h.Group)
}

func (h *GetSubscriptionGroupConfigRequestHeader) Decode(ext map[string]string) error {
	h.Group = ext["group"]
	return nil
}
