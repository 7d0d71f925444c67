package protocol

// Client-management and admin headers that carry only names
// (rocketmq-spec.md §3.4).

// ConsumerGroupRequestHeader names a consumer group: GET_CONSUMER_LIST_BY_GROUP
// (38), NOTIFY_CONSUMER_IDS_CHANGED (40, broker to client),
// GET_CONSUMER_CONNECTION_LIST (203).
type ConsumerGroupRequestHeader struct {
	ConsumerGroup string
}

type (
	GetConsumerListByGroupRequestHeader    = ConsumerGroupRequestHeader
	NotifyConsumerIdsChangedRequestHeader  = ConsumerGroupRequestHeader
	GetConsumerConnectionListRequestHeader = ConsumerGroupRequestHeader
)

func (h *ConsumerGroupRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "consumerGroup", h.ConsumerGroup)
}

func (h *ConsumerGroupRequestHeader) Decode(ext map[string]string) error {
	h.ConsumerGroup = ext["consumerGroup"]
	return nil
}

// GetProducerConnectionListRequestHeader is GET_PRODUCER_CONNECTION_LIST (204).
type GetProducerConnectionListRequestHeader struct {
	ProducerGroup string
}

func (h *GetProducerConnectionListRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "producerGroup", h.ProducerGroup)
}

func (h *GetProducerConnectionListRequestHeader) Decode(ext map[string]string) error {
	h.ProducerGroup = ext["producerGroup"]
	return nil
}

// UnregisterClientRequestHeader is UNREGISTER_CLIENT (35).
type UnregisterClientRequestHeader struct {
	ClientID      string // key clientID
	ProducerGroup string // optional
	ConsumerGroup string // optional
}

func (h *UnregisterClientRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "clientID", h.ClientID)
	putOptStr(m, "producerGroup", h.ProducerGroup)
	putOptStr(m, "consumerGroup", h.ConsumerGroup)
}

func (h *UnregisterClientRequestHeader) Decode(ext map[string]string) error {
	h.ClientID = ext["clientID"]
	h.ProducerGroup = ext["producerGroup"]
	h.ConsumerGroup = ext["consumerGroup"]
	return nil
}

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
