package protocol

import (
	"cmp"
	"slices"
)

// Small list and table bodies (rocketmq-spec.md §4.6).

// KVTable is a string table: GET_KVLIST_BY_NAMESPACE, the REGISTER_BROKER
// answer (ORDER_TOPIC_CONFIG namespace), GET_BROKER_RUNTIME_INFO.
type KVTable struct {
	Table map[string]string `json:"table"`
}

// TopicList is the answer of GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
// GET_TOPICS_BY_CLUSTER and similar calls.
type TopicList struct {
	TopicList  []string `json:"topicList"`
	BrokerAddr string   `json:"brokerAddr,omitempty"`
}

// GroupList is a list of consumer groups (QUERY_TOPIC_CONSUME_BY_WHO).
type GroupList struct {
	GroupList []string `json:"groupList"`
}

// KVConfigFile is the name server's kvConfig.json: namespace -> key -> value.
type KVConfigFile struct {
	ConfigTable map[string]map[string]string `json:"configTable"`
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
