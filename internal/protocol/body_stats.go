package protocol

// Offset tables and admin statistics bodies (rocketmq-spec.md §4.6, §6.5).

// ConsumerOffsetTable is consumerOffset.json and the GET_ALL_CONSUMER_OFFSET
// body: "topic@group" -> queueId -> offset. fastjson writes the queue ids
// unquoted; MarshalFastJSONPretty writes the file as Java does.
type ConsumerOffsetTable struct {
	OffsetTable map[string]map[int32]int64 `json:"offsetTable"`
	// DataVersion is a 5.x property; omitted when nil.
	DataVersion *DataVersion `json:"dataVersion,omitempty"`
}

// DelayOffsetTable is delayOffset.json and the GET_ALL_DELAY_OFFSET body:
// delay level (1-based) -> next offset of that schedule queue to deliver.
type DelayOffsetTable struct {
	OffsetTable map[int32]int64 `json:"offsetTable"`
	DataVersion *DataVersion    `json:"dataVersion,omitempty"` // 5.x
}

// SubscriptionGroupTable is subscriptionGroup.json and the
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG body.
type SubscriptionGroupTable struct {
	SubscriptionGroupTable map[string]SubscriptionGroupConfig `json:"subscriptionGroupTable"`
	// ForbiddenTable is 5.x's group -> topic -> forbidden bits (bit
	// 1<<PermIndexRead: the group may not pull the topic); omitted when
	// empty, as a 4.9.x broker has none.
	ForbiddenTable map[string]map[string]int32 `json:"forbiddenTable,omitempty"`
	DataVersion    DataVersion                 `json:"dataVersion"`
	// Unknown are properties of a decoded file this type does not model.
	Unknown UnknownMembers `json:"-"`
}

// UnmarshalJSON keeps the properties this type does not model.
func (w *SubscriptionGroupTable) UnmarshalJSON(data []byte) error {
	type plain SubscriptionGroupTable
	var v plain
	unknown, err := decodeWithUnknown(data, &v)
	if err != nil {
		return err
	}
	v.Unknown = unknown
	*w = SubscriptionGroupTable(v)
	return nil
}

// TopicOffset is one queue's range in TopicStatsTable.
type TopicOffset struct {
	MinOffset           int64 `json:"minOffset"`
	MaxOffset           int64 `json:"maxOffset"`
	LastUpdateTimestamp int64 `json:"lastUpdateTimestamp"`
}

// TopicStatsTable answers GET_TOPIC_STATS_INFO.
type TopicStatsTable struct {
	OffsetTable map[MessageQueue]TopicOffset `json:"offsetTable"`
}

// OffsetWrapper is one queue's progress in ConsumeStats.
type OffsetWrapper struct {
	BrokerOffset   int64 `json:"brokerOffset"`
	ConsumerOffset int64 `json:"consumerOffset"`
	LastTimestamp  int64 `json:"lastTimestamp"` // store time of the last consumed message
}

// ConsumeStats answers GET_CONSUME_STATS.
type ConsumeStats struct {
	OffsetTable map[MessageQueue]OffsetWrapper `json:"offsetTable"`
	ConsumeTps  float64                        `json:"consumeTps"`
}

// ConsumeStatsList answers GET_BROKER_CONSUME_STATS (317): per
// subscription group, one ConsumeStats per topic it has offsets for
// (Java's list holds one single-key map per group). TotalDiff sums
// brokerOffset-consumerOffset over every queue listed; TotalInflightDiff
// sums Java's inflight diff, pullOffset-consumerOffset, where the pull
// offset is max(consumer, pull) as GET_CONSUME_STATS reports it: rocketd
// keeps no pull offset apart from the committed one, so it is 0.
type ConsumeStatsList struct {
	ConsumeStatsList  []map[string][]ConsumeStats `json:"consumeStatsList"`
	BrokerAddr        string                      `json:"brokerAddr"`
	TotalDiff         int64                       `json:"totalDiff"`
	TotalInflightDiff int64                       `json:"totalInflightDiff"`
}

// BrokerStatsItem is one window of a statistics item (Java's
// BrokerStatsItem): the sum over the window, per second, and per call.
type BrokerStatsItem struct {
	Sum   int64   `json:"sum"`
	Tps   float64 `json:"tps"`
	Avgpt float64 `json:"avgpt"`
}

// BrokerStatsData answers VIEW_BROKER_STATS_DATA (315): an item's last
// minute, hour and day.
type BrokerStatsData struct {
	StatsMinute BrokerStatsItem `json:"statsMinute"`
	StatsHour   BrokerStatsItem `json:"statsHour"`
	StatsDay    BrokerStatsItem `json:"statsDay"`
}
