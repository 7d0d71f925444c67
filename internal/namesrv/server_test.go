package namesrv

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// testServer is a NameServer on 127.0.0.1:0 plus a client to call it.
type testServer struct {
	t      *testing.T
	srv    *Server
	client *remoting.Client
	addr   string
}

func startTestServer(t *testing.T, mutate func(*Config)) *testServer {
	t.Helper()
	cfg := Config{Addr: "127.0.0.1:0"}
	dir := t.TempDir()
	cfg.Namesrv.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	cfg.Namesrv.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, srv: srv, client: remoting.NewClient(remoting.ClientConfig{}), addr: srv.Addr()}
	t.Cleanup(func() {
		ts.client.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ts
}

// call sends one request and returns the response (failing on transport errors).
func (ts *testServer) call(code int32, ext map[string]string, body []byte) *remoting.Command {
	ts.t.Helper()
	return ts.callWith(ts.client, remoting.NewRequest(code, ext, body))
}

func (ts *testServer) callWith(c *remoting.Client, req *remoting.Command) *remoting.Command {
	ts.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, ts.addr, req)
	if err != nil {
		ts.t.Fatalf("invoke code %d: %v", req.Code, err)
	}
	return resp
}

func expectCode(t *testing.T, resp *remoting.Command, code int32, remarkContains string) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("response code %d (%q), want %d", resp.Code, resp.Remark, code)
	}
	if !strings.Contains(resp.Remark, remarkContains) {
		t.Fatalf("remark %q does not contain %q", resp.Remark, remarkContains)
	}
}

type brokerSpec struct {
	cluster, name, addr, ha string
	id                      int64
	dv                      int64
	topics                  []protocol.TopicConfig
	mappings                map[string]*protocol.TopicQueueMappingInfo
}

func topic(name string, read, write int32) protocol.TopicConfig {
	tc := protocol.NewTopicConfig(name)
	tc.ReadQueueNums, tc.WriteQueueNums = read, write
	return tc
}

func (b brokerSpec) body(t *testing.T, compressed bool) []byte {
	t.Helper()
	rb := protocol.RegisterBrokerBody{FilterServerList: []string{}}
	rb.TopicConfigSerializeWrapper.DataVersion = protocol.DataVersion{Timestamp: 1700000000000, Counter: b.dv}
	rb.TopicConfigSerializeWrapper.TopicConfigTable = map[string]protocol.TopicConfig{}
	for _, tc := range b.topics {
		rb.TopicConfigSerializeWrapper.TopicConfigTable[tc.TopicName] = tc
	}
	rb.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap = b.mappings
	if !compressed {
		return rb.MarshalFastJSON()
	}
	out, err := rb.EncodeCompressed()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (b brokerSpec) registerRequest(t *testing.T, compressed bool) *remoting.Command {
	body := b.body(t, compressed)
	h := protocol.RegisterBrokerRequestHeader{
		BrokerName: b.name, BrokerAddr: b.addr, ClusterName: b.cluster, HAServerAddr: b.ha,
		BrokerID: b.id, Compressed: compressed, BodyCrc32: bodyCRC(body),
	}
	req := remoting.NewRequest(protocol.RegisterBroker, protocol.Ext(&h), body)
	req.Version = protocol.VersionV4_9_8
	if b.mappings != nil {
		req.Version = protocol.VersionV5_3_3
	}
	return req
}

func (ts *testServer) register(b brokerSpec) *remoting.Command {
	ts.t.Helper()
	resp := ts.callWith(ts.client, b.registerRequest(ts.t, false))
	expectCode(ts.t, resp, protocol.Success, "")
	return resp
}

func (ts *testServer) route(topic string, version int32) *remoting.Command {
	ts.t.Helper()
	req := remoting.NewRequest(protocol.GetRouteinfoByTopic, protocol.Ext(&protocol.GetRouteInfoRequestHeader{Topic: topic}), nil)
	req.Version = version
	return ts.callWith(ts.client, req)
}

func decodeRoute(t *testing.T, body []byte) protocol.TopicRouteData {
	t.Helper()
	var r protocol.TopicRouteData
	if err := protocol.UnmarshalFastJSON(body, &r); err != nil {
		t.Fatalf("route body %s: %v", body, err)
	}
	return r
}

var brokerA = brokerSpec{cluster: "DefaultCluster", name: "broker-a", addr: "127.0.0.1:10911", ha: "127.0.0.1:10912",
	dv: 1, topics: []protocol.TopicConfig{topic("TopicA", 6, 8), topic("TopicB", 4, 4)}}

func TestRegisterAndRouteLegacyBytes(t *testing.T) {
	ts := startTestServer(t, nil)
	resp := ts.register(brokerA)
	if resp.ExtFields["masterAddr"] != "" || len(resp.Body) != 0 {
		t.Fatalf("master registration answered %v body %q", resp.ExtFields, resp.Body)
	}
	// rocketmq-client-go sends version 317: it must get fastjson's legacy
	// form with unquoted broker ids, compact, keys sorted.
	got := ts.route("TopicA", 317)
	expectCode(t, got, protocol.Success, "")
	want := `{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}],` +
		`"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":6,"topicSysFlag":0,"writeQueueNums":8}]}`
	if string(got.Body) != want {
		t.Fatalf("route body\n got %s\nwant %s", got.Body, want)
	}
	// Version >= V4_9_4 (or acceptStandardJsonOnly) gets quoted keys.
	std := ts.route("TopicA", protocol.VersionV4_9_8)
	if !bytes.Contains(std.Body, []byte(`"brokerAddrs":{"0":"127.0.0.1:10911"}`)) {
		t.Fatalf("standard route body %s", std.Body)
	}
	req := remoting.NewRequest(protocol.GetRouteinfoByTopic,
		protocol.Ext(&protocol.GetRouteInfoRequestHeader{Topic: "TopicA", AcceptStandardJSONOnly: true}), nil)
	req.Version = 317
	if b := ts.callWith(ts.client, req).Body; !bytes.Contains(b, []byte(`{"0":"127.0.0.1:10911"}`)) {
		t.Fatalf("acceptStandardJsonOnly route body %s", b)
	}
}

// TestRouteCarriesStaticTopicMapping: the mapping info brokers register
// (TopicConfigAndMappingSerializeWrapper.topicQueueMappingInfoMap, JSON
// or compressed) comes back in the topic's route as
// topicQueueMappingByBroker, keyed by broker name, Java's field names;
// a later registration without it removes it; other topics' routes have
// no such member.
func TestRouteCarriesStaticTopicMapping(t *testing.T) {
	ts := startTestServer(t, nil)
	info := func(bname string, ids map[int32]int32) *protocol.TopicQueueMappingInfo {
		return &protocol.TopicQueueMappingInfo{Topic: "ST", Scope: protocol.MetadataScopeGlobal, TotalQueues: 4, Bname: bname,
			Epoch: 1700000000000, CurrIDMap: ids}
	}
	a := brokerA
	a.topics = append(a.topics, topic("ST", 2, 2))
	a.mappings = map[string]*protocol.TopicQueueMappingInfo{"ST": info("broker-a", map[int32]int32{0: 0, 2: 1})}
	b := brokerSpec{cluster: "DefaultCluster", name: "broker-b", addr: "127.0.0.1:10921", dv: 1,
		topics:   []protocol.TopicConfig{topic("ST", 2, 2)},
		mappings: map[string]*protocol.TopicQueueMappingInfo{"ST": info("broker-b", map[int32]int32{1: 0, 3: 1})}}
	ts.register(a)
	expectCode(t, ts.callWith(ts.client, b.registerRequest(t, true)), protocol.Success, "")

	got := ts.route("ST", protocol.VersionV5_3_3)
	expectCode(t, got, protocol.Success, "")
	want := `"topicQueueMappingByBroker":{"broker-a":{"bname":"broker-a","currIdMap":{"0":0,"2":1},"dirty":false,"epoch":1700000000000,` +
		`"scope":"__global__","topic":"ST","totalQueues":4},"broker-b":{"bname":"broker-b","currIdMap":{"1":0,"3":1},"dirty":false,` +
		`"epoch":1700000000000,"scope":"__global__","topic":"ST","totalQueues":4}}`
	if !bytes.Contains(got.Body, []byte(want)) {
		t.Fatalf("route of a static topic:\n%s\nwant it to contain\n%s", got.Body, want)
	}
	r := decodeRoute(t, got.Body)
	if m := r.TopicQueueMappingByBroker; len(m) != 2 || m["broker-b"].CurrIDMap[3] != 1 {
		t.Fatalf("decoded mapping: %+v", m)
	}
	if plain := ts.route("TopicA", protocol.VersionV5_3_3); bytes.Contains(plain.Body, []byte("topicQueueMappingByBroker")) {
		t.Fatalf("a plain topic's route carries a mapping: %s", plain.Body)
	}
	// broker-b's next registration has no static topic any more.
	b.mappings = nil
	expectCode(t, ts.callWith(ts.client, b.registerRequest(t, false)), protocol.Success, "")
	if m := decodeRoute(t, ts.route("ST", protocol.VersionV5_3_3).Body).TopicQueueMappingByBroker; len(m) != 1 || m["broker-a"] == nil {
		t.Fatalf("after broker-b dropped it: %+v", m)
	}
}

func TestRouteMiss(t *testing.T) {
	ts := startTestServer(t, nil)
	resp := ts.route("nope", 317)
	expectCode(t, resp, protocol.TopicNotExist, "No topic route info in name server for the topic: nope")
	if len(resp.Body) != 0 {
		t.Fatalf("body %q", resp.Body)
	}
}

func TestRegisterCompressedBody(t *testing.T) {
	ts := startTestServer(t, nil)
	resp := ts.callWith(ts.client, brokerA.registerRequest(t, true))
	expectCode(t, resp, protocol.Success, "")
	r := decodeRoute(t, ts.route("TopicB", 317).Body)
	if len(r.QueueDatas) != 1 || r.QueueDatas[0].WriteQueueNums != 4 || r.QueueDatas[0].Perm != 6 {
		t.Fatalf("route %+v", r)
	}
}

func TestRegisterCRCMismatch(t *testing.T) {
	ts := startTestServer(t, nil)
	req := brokerA.registerRequest(t, false)
	req.ExtFields["bodyCrc32"] = fmt.Sprint(bodyCRC(req.Body) ^ 1)
	expectCode(t, ts.callWith(ts.client, req), protocol.SystemError, "crc32 not match")
	expectCode(t, ts.route("TopicA", 317), protocol.TopicNotExist, "")

	// bodyCrc32 = 0 means "not checked".
	req = brokerA.registerRequest(t, false)
	req.ExtFields["bodyCrc32"] = "0"
	expectCode(t, ts.callWith(ts.client, req), protocol.Success, "")
}

func TestRegisterSlaveLearnsMaster(t *testing.T) {
	ts := startTestServer(t, nil)
	ts.register(brokerA)
	slave := brokerA
	slave.id, slave.addr, slave.ha = 1, "127.0.0.2:10911", "127.0.0.2:10912"
	resp := ts.register(slave)
	if resp.ExtFields["masterAddr"] != "127.0.0.1:10911" || resp.ExtFields["haServerAddr"] != "127.0.0.1:10912" {
		t.Fatalf("slave answer %v", resp.ExtFields)
	}
	r := decodeRoute(t, ts.route("TopicA", 317).Body)
	if len(r.BrokerDatas) != 1 || r.BrokerDatas[0].BrokerAddrs[1] != "127.0.0.2:10911" {
		t.Fatalf("route %+v", r)
	}
}

func TestRegisterReturnsOrderTopicConfig(t *testing.T) {
	ts := startTestServer(t, func(c *Config) { c.Namesrv.OrderMessageEnable = true })
	resp := ts.register(brokerA)
	if len(resp.Body) != 0 {
		t.Fatalf("body without order config: %q", resp.Body)
	}
	put := ts.call(protocol.PutKVConfig, protocol.Ext(&protocol.PutKVConfigRequestHeader{
		Namespace: OrderTopicConfigNamespace, Key: "TopicA", Value: "broker-a:8"}), nil)
	expectCode(t, put, protocol.Success, "")
	resp = ts.register(brokerA)
	if string(resp.Body) != `{"table":{"TopicA":"broker-a:8"}}` {
		t.Fatalf("register body %s", resp.Body)
	}
	r := decodeRoute(t, ts.route("TopicA", 317).Body)
	if r.OrderTopicConf != "broker-a:8" {
		t.Fatalf("orderTopicConf %q", r.OrderTopicConf)
	}
}

func TestOrderTopicConfOffByDefault(t *testing.T) {
	ts := startTestServer(t, nil)
	ts.register(brokerA)
	ts.call(protocol.PutKVConfig, protocol.Ext(&protocol.PutKVConfigRequestHeader{
		Namespace: OrderTopicConfigNamespace, Key: "TopicA", Value: "broker-a:8"}), nil)
	if r := decodeRoute(t, ts.route("TopicA", 317).Body); r.OrderTopicConf != "" {
		t.Fatalf("orderTopicConf %q with orderMessageEnable=false", r.OrderTopicConf)
	}
}

func TestBadRequestsAnswerSystemError(t *testing.T) {
	ts := startTestServer(t, nil)
	cases := []struct {
		name   string
		code   int32
		ext    map[string]string
		body   []byte
		remark string
	}{
		{"register no header", protocol.RegisterBroker, nil, nil, "missing required field(s) brokerName, brokerAddr, clusterName, brokerId"},
		{"register bad id", protocol.RegisterBroker, map[string]string{"brokerName": "a", "brokerAddr": "x:1", "clusterName": "c", "brokerId": "zero"}, nil, "brokerId"},
		{"register bad json", protocol.RegisterBroker, map[string]string{"brokerName": "a", "brokerAddr": "x:1", "clusterName": "c", "brokerId": "0"}, []byte("{not json"), "bad body"},
		{"register bad zlib", protocol.RegisterBroker, map[string]string{"brokerName": "a", "brokerAddr": "x:1", "clusterName": "c", "brokerId": "0", "compressed": "true"}, []byte("garbage"), "bad body"},
		{"unregister no header", protocol.UnregisterBroker, map[string]string{"brokerName": "a"}, nil, "brokerAddr, clusterName, brokerId"},
		{"route no topic", protocol.GetRouteinfoByTopic, nil, nil, "topic"},
		{"topics by cluster no cluster", protocol.GetTopicsByCluster, nil, nil, "cluster"},
		{"delete topic no topic", protocol.DeleteTopicInNamesrv, nil, nil, "topic"},
		{"put kv no value", protocol.PutKVConfig, map[string]string{"namespace": "n", "key": "k"}, nil, "value"},
		{"get kv no key", protocol.GetKVConfig, map[string]string{"namespace": "n"}, nil, "key"},
		{"delete kv none", protocol.DeleteKVConfig, nil, nil, "namespace, key"},
		{"kv list no ns", protocol.GetKVListByNamespace, nil, nil, "namespace"},
		{"data version no body", protocol.QueryDataVersion, map[string]string{"brokerAddr": "x:1"}, nil, "missing DataVersion body"},
		{"data version bad body", protocol.QueryDataVersion, map[string]string{"brokerAddr": "x:1"}, []byte("[1"), "bad body"},
		{"wipe no name", protocol.WipeWritePermOfBroker, nil, nil, "brokerName"},
		{"add no name", protocol.AddWritePermOfBroker, nil, nil, "brokerName"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectCode(t, ts.call(tc.code, tc.ext, tc.body), protocol.SystemError, tc.remark)
		})
	}
	// Nothing above may have changed the table.
	if got := ts.srv.Table().LiveBrokers(); len(got) != 0 {
		t.Fatalf("live brokers after bad requests: %v", got)
	}
}

func TestUnknownCodeNotSupported(t *testing.T) {
	ts := startTestServer(t, nil)
	expectCode(t, ts.call(protocol.SendMessage, nil, nil), protocol.RequestCodeNotSupported, " request type 10 not supported")
	expectCode(t, ts.call(9999, nil, nil), protocol.RequestCodeNotSupported, "9999")
}

func TestUnregister(t *testing.T) {
	ts := startTestServer(t, nil)
	ts.register(brokerA)
	h := protocol.UnregisterBrokerRequestHeader{BrokerName: brokerA.name, BrokerAddr: brokerA.addr, ClusterName: brokerA.cluster}
	expectCode(t, ts.call(protocol.UnregisterBroker, protocol.Ext(&h), nil), protocol.Success, "")
	expectCode(t, ts.route("TopicA", 317), protocol.TopicNotExist, "")
}

func TestClusterInfoAndTopicLists(t *testing.T) {
	ts := startTestServer(t, nil)
	ts.register(brokerA)
	other := brokerSpec{cluster: "Other", name: "broker-b", addr: "127.0.0.3:10911", dv: 1,
		topics: []protocol.TopicConfig{topic("TopicB", 2, 2), topic("TopicC", 1, 1)}}
	ts.register(other)

	ci := ts.call(protocol.GetBrokerClusterInfo, nil, nil)
	expectCode(t, ci, protocol.Success, "")
	want := `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"},` +
		`"broker-b":{"brokerAddrs":{0:"127.0.0.3:10911"},"brokerName":"broker-b","cluster":"Other"}},` +
		`"clusterAddrTable":{"DefaultCluster":["broker-a"],"Other":["broker-b"]}}`
	if string(ci.Body) != want {
		t.Fatalf("cluster info\n got %s\nwant %s", ci.Body, want)
	}

	all := ts.call(protocol.GetAllTopicListFromNameserver, nil, nil)
	if string(all.Body) != `{"topicList":["TopicA","TopicB","TopicC"]}` {
		t.Fatalf("all topics %s", all.Body)
	}
	byCluster := ts.call(protocol.GetTopicsByCluster, protocol.Ext(&protocol.GetTopicsByClusterRequestHeader{Cluster: "Other"}), nil)
	if string(byCluster.Body) != `{"topicList":["TopicB","TopicC"]}` {
		t.Fatalf("topics of Other %s", byCluster.Body)
	}
	none := ts.call(protocol.GetTopicsByCluster, protocol.Ext(&protocol.GetTopicsByClusterRequestHeader{Cluster: "nope"}), nil)
	if string(none.Body) != `{"topicList":[]}` {
		t.Fatalf("topics of unknown cluster %s", none.Body)
	}

	del := ts.call(protocol.DeleteTopicInNamesrv, protocol.Ext(&protocol.DeleteTopicFromNamesrvRequestHeader{Topic: "TopicB", ClusterName: "Other"}), nil)
	expectCode(t, del, protocol.Success, "")
	r := decodeRoute(t, ts.route("TopicB", 317).Body)
	if len(r.QueueDatas) != 1 || r.QueueDatas[0].BrokerName != "broker-a" {
		t.Fatalf("TopicB after cluster delete: %+v", r)
	}
	ts.call(protocol.DeleteTopicInNamesrv, protocol.Ext(&protocol.DeleteTopicFromNamesrvRequestHeader{Topic: "TopicB"}), nil)
	expectCode(t, ts.route("TopicB", 317), protocol.TopicNotExist, "")
}

func TestWriteperm(t *testing.T) {
	ts := startTestServer(t, nil)
	ts.register(brokerA)
	wipe := ts.call(protocol.WipeWritePermOfBroker, protocol.Ext(&protocol.WipeWritePermOfBrokerRequestHeader{BrokerName: "broker-a"}), nil)
	expectCode(t, wipe, protocol.Success, "")
	if wipe.ExtFields["wipeTopicCount"] != "2" {
		t.Fatalf("wipe answer %v", wipe.ExtFields)
	}
	if r := decodeRoute(t, ts.route("TopicA", 317).Body); r.QueueDatas[0].Perm != PermRead {
		t.Fatalf("perm after wipe %d", r.QueueDatas[0].Perm)
	}
	add := ts.call(protocol.AddWritePermOfBroker, protocol.Ext(&protocol.AddWritePermOfBrokerRequestHeader{BrokerName: "broker-a"}), nil)
	if add.ExtFields["addTopicCount"] != "2" {
		t.Fatalf("add answer %v", add.ExtFields)
	}
	if r := decodeRoute(t, ts.route("TopicA", 317).Body); r.QueueDatas[0].Perm != PermRead|PermWrite {
		t.Fatalf("perm after add %d", r.QueueDatas[0].Perm)
	}
}

func TestQueryDataVersion(t *testing.T) {
	ts := startTestServer(t, nil)
	query := func(counter int64) *remoting.Command {
		dv, _ := protocol.MarshalFastJSON(&protocol.DataVersion{Timestamp: 1700000000000, Counter: counter})
		h := protocol.QueryDataVersionRequestHeader{BrokerName: brokerA.name, BrokerAddr: brokerA.addr, ClusterName: brokerA.cluster}
		return ts.call(protocol.QueryDataVersion, protocol.Ext(&h), dv)
	}
	unknown := query(1)
	expectCode(t, unknown, protocol.Success, "")
	if unknown.ExtFields["changed"] != "true" || len(unknown.Body) != 0 {
		t.Fatalf("unknown broker: %v %q", unknown.ExtFields, unknown.Body)
	}
	ts.register(brokerA)
	same := query(1)
	if same.ExtFields["changed"] != "false" || string(same.Body) != `{"counter":1,"timestamp":1700000000000}` {
		t.Fatalf("same version: %v %s", same.ExtFields, same.Body)
	}
	if changed := query(2); changed.ExtFields["changed"] != "true" {
		t.Fatalf("new version: %v", changed.ExtFields)
	}
}

func TestKVConfigRequests(t *testing.T) {
	ts := startTestServer(t, nil)
	put := func(ns, k, v string) {
		expectCode(t, ts.call(protocol.PutKVConfig, protocol.Ext(&protocol.PutKVConfigRequestHeader{Namespace: ns, Key: k, Value: v}), nil), protocol.Success, "")
	}
	get := func(ns, k string) *remoting.Command {
		return ts.call(protocol.GetKVConfig, protocol.Ext(&protocol.GetKVConfigRequestHeader{Namespace: ns, Key: k}), nil)
	}
	put("ns1", "k1", "v1")
	put("ns1", "k2", "v2")
	// An empty value is a value (the protocol package omits empty strings, so
	// the header is written by hand).
	expectCode(t, ts.call(protocol.PutKVConfig, map[string]string{"namespace": "ns2", "key": "k", "value": ""}, nil), protocol.Success, "")
	if r := get("ns1", "k1"); r.Code != protocol.Success || r.ExtFields["value"] != "v1" {
		t.Fatalf("get: %d %v", r.Code, r.ExtFields)
	}
	if r := get("ns2", "k"); r.Code != protocol.Success || r.ExtFields["value"] != "" {
		t.Fatalf("get empty value: %d %v", r.Code, r.ExtFields)
	}
	expectCode(t, get("ns1", "nope"), protocol.QueryNotFound, "No config item, Namespace: ns1 Key: nope")

	list := ts.call(protocol.GetKVListByNamespace, protocol.Ext(&protocol.GetKVListByNamespaceRequestHeader{Namespace: "ns1"}), nil)
	if string(list.Body) != `{"table":{"k1":"v1","k2":"v2"}}` {
		t.Fatalf("list %s", list.Body)
	}
	expectCode(t, ts.call(protocol.GetKVListByNamespace, protocol.Ext(&protocol.GetKVListByNamespaceRequestHeader{Namespace: "zz"}), nil),
		protocol.QueryNotFound, "No config item, Namespace: zz")

	del := ts.call(protocol.DeleteKVConfig, protocol.Ext(&protocol.DeleteKVConfigRequestHeader{Namespace: "ns1", Key: "k1"}), nil)
	expectCode(t, del, protocol.Success, "")
	expectCode(t, get("ns1", "k1"), protocol.QueryNotFound, "")
}

// TestKVConfigSurvivesRestart stops a server and starts another on the same
// kvConfig file.
func TestKVConfigSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "kvConfig.json")
	first := startTestServer(t, func(c *Config) { c.Namesrv.KVConfigPath = path })
	expectCode(t, first.call(protocol.PutKVConfig, protocol.Ext(&protocol.PutKVConfigRequestHeader{
		Namespace: OrderTopicConfigNamespace, Key: "TopicA", Value: "broker-a:4"}), nil), protocol.Success, "")
	first.client.Close()
	if err := first.srv.Close(); err != nil {
		t.Fatal(err)
	}

	second := startTestServer(t, func(c *Config) { c.Namesrv.KVConfigPath = path })
	r := second.call(protocol.GetKVConfig, protocol.Ext(&protocol.GetKVConfigRequestHeader{Namespace: OrderTopicConfigNamespace, Key: "TopicA"}), nil)
	if r.Code != protocol.Success || r.ExtFields["value"] != "broker-a:4" {
		t.Fatalf("after restart: %d %q %v", r.Code, r.Remark, r.ExtFields)
	}
}

func TestClosedBrokerConnectionRemovesRoutes(t *testing.T) {
	ts := startTestServer(t, nil)
	brokerConn := remoting.NewClient(remoting.ClientConfig{})
	defer brokerConn.Close()
	expectCode(t, ts.callWith(brokerConn, brokerA.registerRequest(t, false)), protocol.Success, "")
	expectCode(t, ts.route("TopicA", 317), protocol.Success, "")

	// Another client's connection closing does not matter.
	ts.client.CloseConn(ts.addr)
	expectCode(t, ts.route("TopicA", 317), protocol.Success, "")

	brokerConn.CloseConn(ts.addr)
	wait.For(t, 10*time.Second, "routes of the closed broker to go", func() bool {
		return ts.route("TopicA", 317).Code == protocol.TopicNotExist
	})
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestExpiryScanRemovesSilentBrokers(t *testing.T) {
	clock := newFakeClock()
	ts := startTestServer(t, func(c *Config) {
		c.Now = clock.Now
		c.Namesrv.ScanNotActiveBrokerDelay = time.Millisecond
		c.Namesrv.ScanNotActiveBrokerInterval = 5 * time.Millisecond
		c.Namesrv.BrokerChannelExpiredTime = 120 * time.Second
	})
	brokerConn := remoting.NewClient(remoting.ClientConfig{})
	defer brokerConn.Close()
	expectCode(t, ts.callWith(brokerConn, brokerA.registerRequest(t, false)), protocol.Success, "")

	clock.Advance(119 * time.Second)
	// A scan within the expiry time keeps the broker: run one here rather
	// than hoping the loop's ran (the loop's own scans are checked below).
	ts.srv.scanNotActiveBrokers()
	expectCode(t, ts.route("TopicA", 317), protocol.Success, "")

	clock.Advance(2 * time.Second)
	wait.For(t, 10*time.Second, "expiry of the silent broker", func() bool {
		return ts.route("TopicA", 317).Code == protocol.TopicNotExist
	})
	// The expired broker's connection was closed by the name server: the
	// next call from the broker's client dials again and succeeds.
	wait.For(t, 10*time.Second, "re-registration after expiry", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := brokerConn.Invoke(ctx, ts.addr, brokerA.registerRequest(t, false))
		return err == nil && resp.Code == protocol.Success
	})
	expectCode(t, ts.route("TopicA", 317), protocol.Success, "")
}

func TestServerLifecycle(t *testing.T) {
	cfg := Config{Addr: "127.0.0.1:0"}
	cfg.Namesrv.KVConfigPath = filepath.Join(t.TempDir(), "kv.json")
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Addr() != "" {
		t.Fatalf("address before start: %s", srv.Addr())
	}
	// Closing a server that never started is fine, and idempotent.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	bad := Config{Addr: "127.0.0.1:0"}
	bad.Namesrv.KVConfigPath = filepath.Join(t.TempDir(), "kv.json")
	bad.Namesrv.ScanNotActiveBrokerInterval = -time.Second
	if _, err := New(bad); err == nil {
		t.Fatal("New accepted a negative scan interval")
	}

	// A listen failure is reported by Start and leaves nothing running.
	ts := startTestServer(t, nil)
	dup := Config{Addr: ts.addr}
	dup.Namesrv.KVConfigPath = filepath.Join(t.TempDir(), "kv.json")
	srv2, err := New(dup)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv2.Start(); err == nil {
		t.Fatal("second server on the same port started")
	}
	if err := srv2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ts.srv.Start(); err == nil {
		t.Fatal("a running server started twice")
	}
}
