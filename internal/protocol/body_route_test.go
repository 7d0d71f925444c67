package protocol

import (
	"reflect"
	"strings"
	"testing"
)

func exampleRoute() *TopicRouteData {
	return &TopicRouteData{
		QueueDatas: []QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
		BrokerDatas: []BrokerData{{
			Cluster:     "DefaultCluster",
			BrokerName:  "broker-a",
			BrokerAddrs: map[int64]string{1: "192.168.0.11:10911", 0: "192.168.0.10:10911"},
		}},
	}
}

// The example of rocketmq-spec.md §4.2, byte for byte.
func TestTopicRouteDataLegacy(t *testing.T) {
	const want = `{"brokerDatas":[{"brokerAddrs":{0:"192.168.0.10:10911",1:"192.168.0.11:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	got := string(exampleRoute().MarshalFastJSON(JSONLegacy))
	if got != want {
		t.Fatalf("legacy route:\n got %s\nwant %s", got, want)
	}
}

func TestTopicRouteDataStandard(t *testing.T) {
	const want = `{"brokerDatas":[{"brokerAddrs":{"0":"192.168.0.10:10911","1":"192.168.0.11:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	got := string(exampleRoute().MarshalFastJSON(JSONStandard))
	if got != want {
		t.Fatalf("standard route:\n got %s\nwant %s", got, want)
	}
}

// go-client-wire.md §3.2: no whitespace, brokerAddrs present, queueDatas an
// array even when empty, numbers as numbers.
func TestTopicRouteDataEmptyShapes(t *testing.T) {
	r := &TopicRouteData{BrokerDatas: []BrokerData{{Cluster: "c", BrokerName: "b"}}}
	for _, style := range []JSONStyle{JSONLegacy, JSONStandard} {
		got := string(r.MarshalFastJSON(style))
		const want = `{"brokerDatas":[{"brokerAddrs":{},"brokerName":"b","cluster":"c"}],"filterServerTable":{},"queueDatas":[]}`
		if got != want {
			t.Fatalf("style %d:\n got %s\nwant %s", style, got, want)
		}
	}
	var empty TopicRouteData
	if got := string(empty.MarshalFastJSON(JSONLegacy)); got != `{"brokerDatas":[],"filterServerTable":{},"queueDatas":[]}` {
		t.Fatalf("empty route: %s", got)
	}
}

func TestTopicRouteDataRoundTrip(t *testing.T) {
	in := exampleRoute()
	in.OrderTopicConf = "broker-a:4"
	in.FilterServerTable = map[string][]string{"192.168.0.10:10911": {"f1"}}
	for _, style := range []JSONStyle{JSONLegacy, JSONStandard} {
		var out TopicRouteData
		if err := UnmarshalFastJSON(in.MarshalFastJSON(style), &out); err != nil {
			t.Fatalf("style %d: %v", style, err)
		}
		if !reflect.DeepEqual(*in, out) {
			t.Fatalf("style %d: round trip\n got %+v\nwant %+v", style, out, *in)
		}
	}
}

// §4.2: the standard form escapes chars >= 127 as UTF-16 \uXXXX and '/' as \/.
func TestTopicRouteDataStandardEscaping(t *testing.T) {
	r := &TopicRouteData{OrderTopicConf: "a/é😀"}
	got := string(r.MarshalFastJSON(JSONStandard))
	if !strings.Contains(got, `"orderTopicConf":"a\/\u00e9\ud83d\ude00"`) {
		t.Fatalf("standard escaping: %s", got)
	}
	got = string(r.MarshalFastJSON(JSONLegacy))
	if !strings.Contains(got, `"orderTopicConf":"a/é😀"`) {
		t.Fatalf("legacy escaping: %s", got)
	}
}

// The example of rocketmq-spec.md §4.3.
func TestClusterInfoLegacy(t *testing.T) {
	ci := &ClusterInfo{
		BrokerAddrTable: map[string]BrokerData{"broker-a": {
			Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911"},
		}},
		ClusterAddrTable: map[string][]string{"DefaultCluster": {"broker-a"}},
	}
	const want = `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
	got := string(ci.MarshalFastJSON())
	if got != want {
		t.Fatalf("cluster info:\n got %s\nwant %s", got, want)
	}
	var back ClusterInfo
	if err := UnmarshalFastJSON([]byte(want), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*ci, back) {
		t.Fatalf("round trip: %+v", back)
	}
}
