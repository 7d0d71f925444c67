package processor_test

import (
	"bytes"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

func TestTopicAdmin(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 3)
	// System topics and bad names are refused.
	for _, name := range []string{"TBW102", "SCHEDULE_TOPIC_XXXX", "bad name"} {
		h := protocol.CreateTopicRequestHeader{Topic: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}
		if r := e.call(protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil); r.Code != protocol.SystemError {
			t.Fatalf("create %q: %d %s", name, r.Code, r.Remark)
		}
	}
	r := e.call(protocol.GetAllTopicConfig, nil, nil)
	var all protocol.TopicConfigSerializeWrapper
	must(t, protocol.UnmarshalFastJSON(r.Body, &all))
	if tc, ok := all.TopicConfigTable["T"]; !ok || tc.WriteQueueNums != 3 {
		t.Fatalf("GET_ALL_TOPIC_CONFIG: %+v", all.TopicConfigTable["T"])
	}
	e.send(sendHeader("T", 2, ""), "x")
	e.waitMaxOffset("T", 2, 1)
	r = e.call(protocol.GetTopicStatsInfo, protocol.Ext(&protocol.TopicRequestHeader{Topic: "T"}), nil)
	var stats protocol.TopicStatsTable
	must(t, protocol.UnmarshalFastJSON(r.Body, &stats))
	if to := stats.OffsetTable[protocol.MessageQueue{Topic: "T", BrokerName: e.cfg.BrokerName, QueueID: 2}]; to.MaxOffset != 1 || to.LastUpdateTimestamp == 0 {
		t.Fatalf("topic stats: %+v", stats)
	}
	e.offsets.Commit("g", "T", 2, 1)
	if r := e.call(protocol.DeleteTopicInBroker, protocol.Ext(&protocol.TopicRequestHeader{Topic: "T"}), nil); r.Code != protocol.Success {
		t.Fatalf("delete: %d %s", r.Code, r.Remark)
	}
	if e.topics.Contains("T") || e.store.MaxOffset("T", 2) != 0 {
		t.Fatal("topic or its queue still there")
	}
	if _, ok := e.offsets.Query("g", "T", 2); ok {
		t.Fatal("offsets of the deleted topic kept")
	}
}

func TestBrokerConfigAndRuntimeInfo(t *testing.T) {
	e := newEnv(t, nil)
	r := e.call(protocol.GetBrokerConfig, nil, nil)
	if r.Code != protocol.Success || r.ExtFields["version"] == "" {
		t.Fatalf("broker config: %d %v", r.Code, r.ExtFields)
	}
	props, err := config.ParseProperties(bytes.NewReader(r.Body))
	must(t, err)
	if props["brokerClusterName"] != "DefaultCluster" || props["flushConsumerOffsetInterval"] != "5000" || props["autoCreateTopicEnable"] != "true" {
		t.Fatalf("config body: %v", props)
	}
	r = e.call(protocol.GetBrokerRuntimeInfo, nil, nil)
	var kv protocol.KVTable
	must(t, protocol.UnmarshalFastJSON(r.Body, &kv))
	if kv.Table["commitLogMaxOffset"] != "0" || kv.Table["brokerVersionDesc"] == "" {
		t.Fatalf("runtime info: %v", kv.Table)
	}
}
