package protocol

// Client-management headers (rocketmq-spec.md §3.4).

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
