package protocol

// Route bodies served by the name server (rocketmq-spec.md §4.2, §4.3).

// TopicRouteData is the GET_ROUTEINFO_BY_TOPIC response body.
type TopicRouteData struct {
	// OrderTopicConf is "brokerA:4;brokerB:4" when the name server's
	// orderMessageEnable is on; omitted when empty.
	OrderTopicConf string       `json:"orderTopicConf,omitempty"`
	QueueDatas     []QueueData  `json:"queueDatas"` // always an array: the Go client rejects null
	BrokerDatas    []BrokerData `json:"brokerDatas"`
	// FilterServerTable maps a broker address to its filter servers; written
	// as {} when empty.
	FilterServerTable map[string][]string `json:"filterServerTable"`
	// TopicQueueMappingByBroker is a static topic's mapping info by broker
	// name (5.x RouteInfoManager); omitted for other topics.
	TopicQueueMappingByBroker map[string]*TopicQueueMappingInfo `json:"topicQueueMappingByBroker,omitempty"`
}

// MarshalFastJSON writes the route as the name server does: JSONLegacy
// ({0:"addr"}) for old clients, JSONStandard for requests with version >=
// V4_9_4 or acceptStandardJsonOnly (GetRouteInfoRequestHeader.WantsStandardJSON).
func (r *TopicRouteData) MarshalFastJSON(style JSONStyle) []byte {
	b, err := MarshalFastJSONStyle(r, style)
	if err != nil {
		// Only plain strings, ints and maps of them: the writer cannot fail.
		panic("protocol: encoding TopicRouteData: " + err.Error())
	}
	return b
}

// QueueData is one broker's queues of a topic.
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int32  `json:"readQueueNums"`
	WriteQueueNums int32  `json:"writeQueueNums"`
	Perm           int32  `json:"perm"`
	// TopicSysFlag was spelled topicSynFlag before 4.9.0; informational only.
	TopicSysFlag int32 `json:"topicSysFlag"`
}

// BrokerData is one broker group: its name, cluster and addresses by broker
// id (0 = master).
type BrokerData struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"` // always present ({} when empty): the Go client panics otherwise
	// EnableActingMaster is a 5.x property, read from 5.x peers, never
	// written when false.
	EnableActingMaster bool `json:"enableActingMaster,omitempty"`
}

// MasterAddr returns the address of broker id 0, or "".
func (b *BrokerData) MasterAddr() string { return b.BrokerAddrs[0] }

// ClusterInfo is the GET_BROKER_CLUSTER_INFO response body.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`  // brokerName -> broker group
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"` // cluster -> brokerNames
}

// MarshalFastJSON writes the cluster info as Java always does, in the
// legacy form with unquoted broker ids (§4.3).
func (c *ClusterInfo) MarshalFastJSON() []byte {
	b, err := MarshalFastJSON(c)
	if err != nil {
		panic("protocol: encoding ClusterInfo: " + err.Error())
	}
	return b
}
