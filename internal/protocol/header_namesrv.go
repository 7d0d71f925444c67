package protocol

// Name-server request and response headers (rocketmq-spec.md §3.6).

// RegisterBrokerRequestHeader is REGISTER_BROKER (103).
type RegisterBrokerRequestHeader struct {
	BrokerName   string `ext:"brokerName"`
	BrokerAddr   string `ext:"brokerAddr"` // ip:port of the broker's main port
	ClusterName  string `ext:"clusterName"`
	HAServerAddr string `ext:"haServerAddr"`
	BrokerID     int64  `ext:"brokerId"`   // 0 = master
	Compressed   bool   `ext:"compressed"` // body is the zlib form of §4.4
	BodyCrc32    int32  `ext:"bodyCrc32"`  // masked CRC32 of the body bytes as sent; 0 = unchecked
}

// RegisterBrokerResponseHeader answers REGISTER_BROKER; both fields are set
// only for a slave whose master is registered.
type RegisterBrokerResponseHeader struct {
	HAServerAddr string `ext:"haServerAddr,opt"`
	MasterAddr   string `ext:"masterAddr,opt"`
}

// BrokerIdentityHeader is the header shared by UNREGISTER_BROKER (104,
// UnRegisterBrokerRequestHeader) and QUERY_DATA_VERSION (322,
// QueryDataVersionRequestHeader): same four keys.
type BrokerIdentityHeader struct {
	BrokerName  string `ext:"brokerName"`
	BrokerAddr  string `ext:"brokerAddr"`
	ClusterName string `ext:"clusterName"`
	BrokerID    int64  `ext:"brokerId"`
}

// UnregisterBrokerRequestHeader is UNREGISTER_BROKER (104).
type UnregisterBrokerRequestHeader = BrokerIdentityHeader

// QueryDataVersionRequestHeader is QUERY_DATA_VERSION (322); the body is the
// broker's DataVersion JSON.
type QueryDataVersionRequestHeader = BrokerIdentityHeader

// QueryDataVersionResponseHeader answers QUERY_DATA_VERSION; the body is the
// name server's DataVersion JSON.
type QueryDataVersionResponseHeader struct {
	Changed bool `ext:"changed"`
}

// GetRouteInfoRequestHeader is GET_ROUTEINFO_BY_TOPIC (105).
type GetRouteInfoRequestHeader struct {
	Topic string `ext:"topic"`
	// AcceptStandardJSONOnly asks for quoted brokerAddrs keys whatever
	// the request version (§4.2); written only when true.
	AcceptStandardJSONOnly bool `ext:"acceptStandardJsonOnly,opt"`
}

// WantsStandardJSON reports whether a route answer to a request of the given
// version must use standard (quoted-key) JSON (§4.2).
func (h *GetRouteInfoRequestHeader) WantsStandardJSON(version int32) bool {
	return version >= VersionV4_9_4 || h.AcceptStandardJSONOnly
}

// KVConfigRequestHeader is the header of PUT_KV_CONFIG (100, with Value),
// GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102).
type KVConfigRequestHeader struct {
	Namespace string `ext:"namespace"`
	Key       string `ext:"key"`
	Value     string `ext:"value,opt"` // PUT_KV_CONFIG only
}

// PutKVConfigRequestHeader is PUT_KV_CONFIG (100).
type PutKVConfigRequestHeader = KVConfigRequestHeader

// GetKVConfigRequestHeader is GET_KV_CONFIG (101).
type GetKVConfigRequestHeader = KVConfigRequestHeader

// DeleteKVConfigRequestHeader is DELETE_KV_CONFIG (102).
type DeleteKVConfigRequestHeader = KVConfigRequestHeader

// GetKVConfigResponseHeader answers GET_KV_CONFIG; a missing key is answered
// with QUERY_NOT_FOUND instead.
type GetKVConfigResponseHeader struct {
	Value string `ext:"value,opt"`
}

// GetKVListByNamespaceRequestHeader is GET_KVLIST_BY_NAMESPACE (219).
type GetKVListByNamespaceRequestHeader struct {
	Namespace string `ext:"namespace"`
}

// DeleteTopicFromNamesrvRequestHeader is DELETE_TOPIC_IN_NAMESRV (216).
type DeleteTopicFromNamesrvRequestHeader struct {
	Topic       string `ext:"topic"`
	ClusterName string `ext:"clusterName,opt"` // limit the deletion to one cluster
}

// GetTopicsByClusterRequestHeader is GET_TOPICS_BY_CLUSTER (224).
type GetTopicsByClusterRequestHeader struct {
	Cluster string `ext:"cluster"`
}

// BrokerPermRequestHeader is the header of WIPE_WRITE_PERM_OF_BROKER (205)
// and ADD_WRITE_PERM_OF_BROKER (327).
type BrokerPermRequestHeader struct {
	BrokerName string `ext:"brokerName"`
}

// WipeWritePermOfBrokerRequestHeader is WIPE_WRITE_PERM_OF_BROKER (205).
type WipeWritePermOfBrokerRequestHeader = BrokerPermRequestHeader

// AddWritePermOfBrokerRequestHeader is ADD_WRITE_PERM_OF_BROKER (327).
type AddWritePermOfBrokerRequestHeader = BrokerPermRequestHeader

// WipeWritePermOfBrokerResponseHeader answers WIPE_WRITE_PERM_OF_BROKER.
type WipeWritePermOfBrokerResponseHeader struct {
	WipeTopicCount int32 `ext:"wipeTopicCount"`
}

// AddWritePermOfBrokerResponseHeader answers ADD_WRITE_PERM_OF_BROKER.
type AddWritePermOfBrokerResponseHeader struct {
	AddTopicCount int32 `ext:"addTopicCount"`
}

// RegisterTopicRequestHeader is REGISTER_TOPIC_IN_NAMESRV (217); the body
// is a TopicRouteData whose queueDatas are registered.
type RegisterTopicRequestHeader struct {
	Topic string `ext:"topic"`
}
