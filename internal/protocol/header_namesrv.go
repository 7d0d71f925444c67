package protocol

// Name-server request and response headers (rocketmq-spec.md §3.6).

// RegisterBrokerRequestHeader is REGISTER_BROKER (103).
type RegisterBrokerRequestHeader struct {
	BrokerName   string
	BrokerAddr   string // ip:port of the broker's main port
	ClusterName  string
	HAServerAddr string // key haServerAddr
	BrokerID     int64  // key brokerId; 0 = master
	Compressed   bool   // body is the zlib form of §4.4
	BodyCrc32    int32  // masked CRC32 of the body bytes as sent; 0 = unchecked
}

func (h *RegisterBrokerRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "brokerName", h.BrokerName)
	putStr(m, "brokerAddr", h.BrokerAddr)
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "haServerAddr", h.HAServerAddr)
	putInt64(m, "brokerId", h.BrokerID)
	putBool(m, "compressed", h.Compressed)
	putInt32(m, "bodyCrc32", h.BodyCrc32)
}

func (h *RegisterBrokerRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "RegisterBrokerRequestHeader", ext: ext}
	h.BrokerName = r.str("brokerName")
	h.BrokerAddr = r.str("brokerAddr")
	h.ClusterName = r.str("clusterName")
	h.HAServerAddr = r.str("haServerAddr")
	h.BrokerID = r.int64("brokerId")
	h.Compressed = r.bool("compressed")
	h.BodyCrc32 = r.int32("bodyCrc32")
	return r.err
}

// RegisterBrokerResponseHeader answers REGISTER_BROKER; both fields are set
// only for a slave whose master is registered.
type RegisterBrokerResponseHeader struct {
	HAServerAddr string // key haServerAddr
	MasterAddr   string
}

func (h *RegisterBrokerResponseHeader) AppendExt(m map[string]string) {
	putOptStr(m, "haServerAddr", h.HAServerAddr)
	putOptStr(m, "masterAddr", h.MasterAddr)
}

func (h *RegisterBrokerResponseHeader) Decode(ext map[string]string) error {
	h.HAServerAddr = ext["haServerAddr"]
	h.MasterAddr = ext["masterAddr"]
	return nil
}

// BrokerIdentityHeader is the header shared by UNREGISTER_BROKER (104,
// UnRegisterBrokerRequestHeader) and QUERY_DATA_VERSION (322,
// QueryDataVersionRequestHeader): same four keys.
type BrokerIdentityHeader struct {
	BrokerName  string
	BrokerAddr  string
	ClusterName string
	BrokerID    int64 // key brokerId
}

// UnregisterBrokerRequestHeader is UNREGISTER_BROKER (104).
type UnregisterBrokerRequestHeader = BrokerIdentityHeader

// QueryDataVersionRequestHeader is QUERY_DATA_VERSION (322); the body is the
// broker's DataVersion JSON.
type QueryDataVersionRequestHeader = BrokerIdentityHeader

func (h *BrokerIdentityHeader) AppendExt(m map[string]string) {
	putStr(m, "brokerName", h.BrokerName)
	putStr(m, "brokerAddr", h.BrokerAddr)
	putStr(m, "clusterName", h.ClusterName)
	putInt64(m, "brokerId", h.BrokerID)
}

func (h *BrokerIdentityHeader) Decode(ext map[string]string) error {
	r := extReader{header: "BrokerIdentityHeader", ext: ext}
	h.BrokerName = r.str("brokerName")
	h.BrokerAddr = r.str("brokerAddr")
	h.ClusterName = r.str("clusterName")
	h.BrokerID = r.int64("brokerId")
	return r.err
}

// QueryDataVersionResponseHeader answers QUERY_DATA_VERSION; the body is the
// name server's DataVersion JSON.
type QueryDataVersionResponseHeader struct {
	Changed bool
}

func (h *QueryDataVersionResponseHeader) AppendExt(m map[string]string) {
	putBool(m, "changed", h.Changed)
}

func (h *QueryDataVersionResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "QueryDataVersionResponseHeader", ext: ext}
	h.Changed = r.bool("changed")
	return r.err
}

// GetRouteInfoRequestHeader is GET_ROUTEINFO_BY_TOPIC (105).
type GetRouteInfoRequestHeader struct {
	Topic string
	// AcceptStandardJSONOnly (key acceptStandardJsonOnly) asks for quoted
	// brokerAddrs keys whatever the request version (§4.2).
	AcceptStandardJSONOnly bool
}

func (h *GetRouteInfoRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	if h.AcceptStandardJSONOnly {
		putBool(m, "acceptStandardJsonOnly", true)
	}
}

func (h *GetRouteInfoRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "GetRouteInfoRequestHeader", ext: ext}
	h.Topic = r.str("topic")
	h.AcceptStandardJSONOnly = r.bool("acceptStandardJsonOnly")
	return r.err
}

// WantsStandardJSON reports whether a route answer to a request of the given
// version must use standard (quoted-key) JSON (§4.2).
func (h *GetRouteInfoRequestHeader) WantsStandardJSON(version int32) bool {
	return version >= VersionV4_9_4 || h.AcceptStandardJSONOnly
}

// KVConfigRequestHeader is the header of PUT_KV_CONFIG (100, with Value),
// GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102).
type KVConfigRequestHeader struct {
	Namespace string
	Key       string
	Value     string // PUT_KV_CONFIG only
}

// PutKVConfigRequestHeader is PUT_KV_CONFIG (100).
type PutKVConfigRequestHeader = KVConfigRequestHeader

// GetKVConfigRequestHeader is GET_KV_CONFIG (101).
type GetKVConfigRequestHeader = KVConfigRequestHeader

// DeleteKVConfigRequestHeader is DELETE_KV_CONFIG (102).
type DeleteKVConfigRequestHeader = KVConfigRequestHeader

func (h *KVConfigRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "namespace", h.Namespace)
	putStr(m, "key", h.Key)
	putOptStr(m, "value", h.Value)
}

func (h *KVConfigRequestHeader) Decode(ext map[string]string) error {
	h.Namespace = ext["namespace"]
	h.Key = ext["key"]
	h.Value = ext["value"]
	return nil
}

// GetKVConfigResponseHeader answers GET_KV_CONFIG; a missing key is answered
// with QUERY_NOT_FOUND instead.
type GetKVConfigResponseHeader struct {
	Value string
}

func (h *GetKVConfigResponseHeader) AppendExt(m map[string]string) { putOptStr(m, "value", h.Value) }

func (h *GetKVConfigResponseHeader) Decode(ext map[string]string) error {
	h.Value = ext["value"]
	return nil
}

// GetKVListByNamespaceRequestHeader is GET_KVLIST_BY_NAMESPACE (219).
type GetKVListByNamespaceRequestHeader struct {
	Namespace string
}

func (h *GetKVListByNamespaceRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "namespace", h.Namespace)
}

func (h *GetKVListByNamespaceRequestHeader) Decode(ext map[string]string) error {
	h.Namespace = ext["namespace"]
	return nil
}

// DeleteTopicFromNamesrvRequestHeader is DELETE_TOPIC_IN_NAMESRV (216).
type DeleteTopicFromNamesrvRequestHeader struct {
	Topic       string
	ClusterName string // optional: limit the deletion to one cluster
}

func (h *DeleteTopicFromNamesrvRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
	putOptStr(m, "clusterName", h.ClusterName)
}

func (h *DeleteTopicFromNamesrvRequestHeader) Decode(ext map[string]string) error {
	h.Topic = ext["topic"]
	h.ClusterName = ext["clusterName"]
	return nil
}

// GetTopicsByClusterRequestHeader is GET_TOPICS_BY_CLUSTER (224).
type GetTopicsByClusterRequestHeader struct {
	Cluster string
}

func (h *GetTopicsByClusterRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "cluster", h.Cluster)
}

func (h *GetTopicsByClusterRequestHeader) Decode(ext map[string]string) error {
	h.Cluster = ext["cluster"]
	return nil
}

// BrokerPermRequestHeader is the header of WIPE_WRITE_PERM_OF_BROKER (205)
// and ADD_WRITE_PERM_OF_BROKER (327).
type BrokerPermRequestHeader struct {
	BrokerName string
}

// WipeWritePermOfBrokerRequestHeader is WIPE_WRITE_PERM_OF_BROKER (205).
type WipeWritePermOfBrokerRequestHeader = BrokerPermRequestHeader

// AddWritePermOfBrokerRequestHeader is ADD_WRITE_PERM_OF_BROKER (327).
type AddWritePermOfBrokerRequestHeader = BrokerPermRequestHeader

func (h *BrokerPermRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "brokerName", h.BrokerName)
}

func (h *BrokerPermRequestHeader) Decode(ext map[string]string) error {
	h.BrokerName = ext["brokerName"]
	return nil
}

// WipeWritePermOfBrokerResponseHeader answers WIPE_WRITE_PERM_OF_BROKER.
type WipeWritePermOfBrokerResponseHeader struct {
	WipeTopicCount int32
}

func (h *WipeWritePermOfBrokerResponseHeader) AppendExt(m map[string]string) {
	putInt32(m, "wipeTopicCount", h.WipeTopicCount)
}

func (h *WipeWritePermOfBrokerResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "WipeWritePermOfBrokerResponseHeader", ext: ext}
	h.WipeTopicCount = r.int32("wipeTopicCount")
	return r.err
}

// AddWritePermOfBrokerResponseHeader answers ADD_WRITE_PERM_OF_BROKER.
type AddWritePermOfBrokerResponseHeader struct {
	AddTopicCount int32
}

func (h *AddWritePermOfBrokerResponseHeader) AppendExt(m map[string]string) {
	putInt32(m, "addTopicCount", h.AddTopicCount)
}

func (h *AddWritePermOfBrokerResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "AddWritePermOfBrokerResponseHeader", ext: ext}
	h.AddTopicCount = r.int32("addTopicCount")
	return r.err
}

// RegisterTopicRequestHeader is REGISTER_TOPIC_IN_NAMESRV (217); the body
// is a TopicRouteData whose queueDatas are registered.
type RegisterTopicRequestHeader struct {
	Topic string
}

func (h *RegisterTopicRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "topic", h.Topic)
}

func (h *RegisterTopicRequestHeader) Decode(ext map[string]string) error {
	h.Topic = ext["topic"]
	return nil
}
