package protocol

// Client-management headers (rocketmq-spec.md §3.4).

// ConsumerGroupRequestHeader names a consumer group: GET_CONSUMER_LIST_BY_GROUP
// (38), NOTIFY_CONSUMER_IDS_CHANGED (40, broker to client),
// GET_CONSUMER_CONNECTION_LIST (203).
type ConsumerGroupRequestHeader struct {
	ConsumerGroup string `ext:"consumerGroup"`
}

type (
	GetConsumerListByGroupRequestHeader    = ConsumerGroupRequestHeader
	NotifyConsumerIdsChangedRequestHeader  = ConsumerGroupRequestHeader
	GetConsumerConnectionListRequestHeader = ConsumerGroupRequestHeader
)

// GetProducerConnectionListRequestHeader is GET_PRODUCER_CONNECTION_LIST (204).
type GetProducerConnectionListRequestHeader struct {
	ProducerGroup string `ext:"producerGroup"`
}

// UnregisterClientRequestHeader is UNREGISTER_CLIENT (35).
type UnregisterClientRequestHeader struct {
	ClientID      string `ext:"clientID"`
	ProducerGroup string `ext:"producerGroup,opt"`
	ConsumerGroup string `ext:"consumerGroup,opt"`
}
