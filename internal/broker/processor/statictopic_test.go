package processor_test

import (
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// staticDetail is what mqadmin updateStaticTopic -qn n sends to a cluster
// of one broker, broker-a: logic queue i on physical queue i, gen 0.
func staticDetail(topic string, n int32, epoch int64) *protocol.TopicQueueMappingDetail {
	d := &protocol.TopicQueueMappingDetail{Topic: topic, Scope: protocol.MetadataScopeGlobal, TotalQueues: n, Bname: "broker-a",
		Epoch: epoch, CurrIDMap: map[int32]int32{}, HostedQueues: map[int32][]protocol.LogicQueueMappingItem{}}
	for i := range n {
		d.HostedQueues[i] = []protocol.LogicQueueMappingItem{{QueueID: i, Bname: "broker-a", EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1}}
	}
	return d
}

// createStatic sends UPDATE_AND_CREATE_STATIC_TOPIC as MQClientAPIImpl.createStaticTopic does.
func (e *env) createStatic(d *protocol.TopicQueueMappingDetail, queues int32, force bool) *remoting.Command {
	e.t.Helper()
	h := protocol.CreateTopicRequestHeader{Topic: d.Topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: 6, TopicFilterType: protocol.SingleTag, TopicSysFlag: protocol.Some(int32(0)), Force: protocol.Some(force)}
	body, err := protocol.MarshalFastJSON(d)
	must(e.t, err)
	return e.call(protocol.UpdateAndCreateStaticTopic, protocol.Ext(&h), body)
}

// topicConfigAndMapping answers GET_TOPIC_CONFIG with lo as given.
func (e *env) topicConfigAndMapping(topic string, lo bool) protocol.TopicConfigAndQueueMapping {
	e.t.Helper()
	h := protocol.GetTopicConfigRequestHeader{Topic: topic, Lo: protocol.Some(lo)}
	r := e.call(protocol.GetTopicConfig, protocol.Ext(&h), nil)
	if r.Code != protocol.Success {
		e.t.Fatalf("GET_TOPIC_CONFIG %s: %d %s", topic, r.Code, r.Remark)
	}
	var v protocol.TopicConfigAndQueueMapping
	must(e.t, protocol.UnmarshalFastJSON(r.Body, &v))
	return v
}

// TestCreateStaticTopic: UPDATE_AND_CREATE_STATIC_TOPIC creates the topic
// and stores the mapping (config/topicQueueMapping.json);
// GET_TOPIC_CONFIG returns it when asked (lo=true), which is how mqadmin
// reads the existing mapping before growing it; a newer epoch grows the
// topic; DELETE_TOPIC_IN_BROKER removes the mapping.
func TestCreateStaticTopic(t *testing.T) {
	e := newEnv(t, nil)
	if r := e.createStatic(staticDetail("ST", 2, 1000), 2, false); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	got := e.topicConfigAndMapping("ST", true)
	if got.ReadQueueNums != 2 || got.WriteQueueNums != 2 || got.Perm != 6 || got.MappingDetail == nil {
		t.Fatalf("GET_TOPIC_CONFIG lo=true: %+v", got)
	}
	if d := got.MappingDetail; d.Epoch != 1000 || d.TotalQueues != 2 || d.Bname != "broker-a" || len(d.HostedQueues) != 2 ||
		d.HostedQueues[1][0].QueueID != 1 || d.HostedQueues[1][0].EndOffset != -1 {
		t.Fatalf("mapping detail: %+v", d)
	}
	if plain := e.topicConfigAndMapping("ST", false); plain.MappingDetail != nil {
		t.Fatalf("lo=false carries the mapping: %+v", plain.MappingDetail)
	}
	if plain := e.topicConfigAndMapping("ST", false); plain.MappingDetail != nil || plain.ReadQueueNums != 2 {
		t.Fatalf("lo=false: %+v", plain)
	}
	// A plain topic has no mapping, lo or not.
	e.createTopic("Plain", 4)
	if got := e.topicConfigAndMapping("Plain", true); got.MappingDetail != nil {
		t.Fatalf("plain topic with a mapping: %+v", got.MappingDetail)
	}

	// Growing to 4 queues with a newer epoch (updateStaticTopic -qn 4).
	if r := e.createStatic(staticDetail("ST", 4, 3000), 4, false); r.Code != protocol.Success {
		t.Fatalf("grow: %d %s", r.Code, r.Remark)
	}
	if got := e.topicConfigAndMapping("ST", true); got.WriteQueueNums != 4 || got.MappingDetail.Epoch != 3000 || len(got.MappingDetail.HostedQueues) != 4 {
		t.Fatalf("after growing: %+v %+v", got, got.MappingDetail)
	}
	// The file is Java's and reopens.
	m, err := meta.OpenMappings(meta.Options{Dir: meta.ConfigDir(e.cfg.StorePathRootDir)}, "broker-a")
	must(t, err)
	if d := m.Get("ST"); d == nil || d.Epoch != 3000 || len(d.HostedQueues) != 4 {
		t.Fatalf("topicQueueMapping.json: %+v", d)
	}

	h := protocol.TopicRequestHeader{Topic: "ST"}
	if r := e.call(protocol.DeleteTopicInBroker, protocol.Ext(&h), nil); r.Code != protocol.Success {
		t.Fatalf("delete: %d %s", r.Code, r.Remark)
	}
	e.createTopic("ST", 4)
	if got := e.topicConfigAndMapping("ST", true); got.MappingDetail != nil {
		t.Fatalf("the mapping survived the topic's deletion: %+v", got.MappingDetail)
	}
}

// TestCreateStaticTopicBadInput: what Java refuses is SYSTEM_ERROR with
// the reason, and a refused request changes neither the topic nor the
// mapping.
func TestCreateStaticTopicBadInput(t *testing.T) {
	e := newEnv(t, nil)
	if r := e.createStatic(staticDetail("ST", 2, 2000), 2, false); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	h := protocol.CreateTopicRequestHeader{Topic: "ST", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: protocol.SingleTag}
	other := staticDetail("ST", 2, 3000)
	other.Bname = "broker-b"
	mismatch := staticDetail("OTHER", 2, 3000)
	negative := staticDetail("ST", 2, 3000)
	negative.HostedQueues[0][0].QueueID = -1
	changed := staticDetail("ST", 2, 2000)
	changed.HostedQueues[1][0].QueueID = 7
	enc := func(d *protocol.TopicQueueMappingDetail) []byte {
		b, err := protocol.MarshalFastJSON(d)
		must(t, err)
		return b
	}
	for _, c := range []struct {
		name   string
		ext    map[string]string
		body   []byte
		remark string
	}{
		{"no body", protocol.Ext(&h), nil, "without a TopicQueueMappingDetail body"},
		{"garbage body", protocol.Ext(&h), []byte("{not json"), "decode TopicQueueMappingDetail"},
		{"no topic", map[string]string{"readQueueNums": "1", "writeQueueNums": "1", "perm": "6"}, enc(staticDetail("ST", 2, 3000)), "topic"},
		{"another broker's mapping", protocol.Ext(&h), enc(other), `for broker "broker-b"`},
		{"the header names another topic", protocol.Ext(&h), enc(mismatch), `the mapping is of topic "OTHER"`},
		{"older epoch", protocol.Ext(&h), enc(staticDetail("ST", 2, 1000)), "Can't accept data with small epoch 1000 < 2000"},
		{"negative queue id", protocol.Ext(&h), enc(negative), "The field is illegal, should not be negative"},
		{"same epoch, an item changed", protocol.Ext(&h), enc(changed), "The item of gen 0 changed"},
	} {
		r := e.call(protocol.UpdateAndCreateStaticTopic, c.ext, c.body)
		if r.Code != protocol.SystemError || !strings.Contains(r.Remark, c.remark) {
			t.Errorf("%s: %d %q, want SYSTEM_ERROR with %q", c.name, r.Code, r.Remark, c.remark)
		}
	}
	sys := staticDetail("TBW102", 1, 3000)
	if r := e.createStatic(sys, 1, false); r.Code != protocol.SystemError {
		t.Errorf("system topic: %d %s", r.Code, r.Remark)
	}
	got := e.topicConfigAndMapping("ST", true)
	if got.WriteQueueNums != 2 || got.MappingDetail == nil || got.MappingDetail.Epoch != 2000 || got.MappingDetail.HostedQueues[1][0].QueueID != 1 {
		t.Fatalf("a refused request changed the topic: %+v %+v", got, got.MappingDetail)
	}
	// force takes an older epoch (remappingStaticTopic -fr true).
	if r := e.createStatic(staticDetail("ST", 2, 1000), 2, true); r.Code != protocol.Success {
		t.Fatalf("forced: %d %s", r.Code, r.Remark)
	}
	if got := e.topicConfigAndMapping("ST", true); got.MappingDetail.Epoch != 1000 {
		t.Fatalf("forced update not taken: %+v", got.MappingDetail)
	}
}

// TestStaticTopicSend: a send to a static topic names a logic queue
// (SendMessageProcessor with TopicQueueMappingManager): it is stored in
// the leader's physical queue and answered with the logic queue and the
// logic offset; a logic queue led by another broker is refused with
// NOT_LEADER_FOR_QUEUE and Java's remark.
func TestStaticTopicSend(t *testing.T) {
	e := newEnv(t, nil)
	d := staticDetail("ST", 3, 1000)
	// Logic queue 0 was here (physical 1) and moved to broker-b; logic
	// queue 1 moved here (physical 0) from broker-b, logic offsets from
	// 10000 on; logic queue 2 is here from the start (physical 2).
	d.HostedQueues[0] = []protocol.LogicQueueMappingItem{
		{Gen: 0, QueueID: 1, Bname: "broker-a", LogicOffset: 0, EndOffset: 5, TimeOfStart: -1, TimeOfEnd: -1},
		{Gen: 1, QueueID: 0, Bname: "broker-b", LogicOffset: 10000, EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1},
	}
	d.HostedQueues[1] = []protocol.LogicQueueMappingItem{
		{Gen: 0, QueueID: 3, Bname: "broker-b", LogicOffset: 0, EndOffset: 10, TimeOfStart: -1, TimeOfEnd: -1},
		{Gen: 1, QueueID: 0, Bname: "broker-a", LogicOffset: 10000, EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1},
	}
	if r := e.createStatic(d, 3, false); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	for i := range 2 {
		r := e.send(sendHeader("ST", 1, ""), "to logic queue 1")
		var h protocol.SendMessageResponseHeader
		must(t, h.Decode(r.ExtFields))
		if r.Code != protocol.Success || h.QueueID != 1 || h.QueueOffset != 10000+int64(i) {
			t.Fatalf("send %d to logic queue 1: %d %s queue %d offset %d, want queue 1 offset %d", i, r.Code, r.Remark, h.QueueID, h.QueueOffset, 10000+i)
		}
	}
	// Stored in physical queue 0.
	e.waitMaxOffset("ST", 0, 2)
	if got := e.store.MaxOffset("ST", 1); got != 0 {
		t.Fatalf("physical queue 1 holds %d messages", got)
	}
	r := e.send(sendHeader("ST", 2, ""), "to logic queue 2")
	var h protocol.SendMessageResponseHeader
	must(t, h.Decode(r.ExtFields))
	if r.Code != protocol.Success || h.QueueID != 2 || h.QueueOffset != 0 {
		t.Fatalf("send to logic queue 2: %d %s %+v", r.Code, r.Remark, h)
	}
	r = e.send(sendHeader("ST", 0, ""), "to logic queue 0")
	if r.Code != protocol.NotLeaderForQueue || r.Remark != "ST-0 does not exit in request process of current broker broker-a" {
		t.Fatalf("send to a logic queue led by broker-b: %d %q", r.Code, r.Remark)
	}
	r = e.send(sendHeader("ST", 7, ""), "to no logic queue")
	if r.Code != protocol.NotLeaderForQueue {
		t.Fatalf("send to an unknown logic queue: %d %q", r.Code, r.Remark)
	}
	// No queue chosen: Java takes the first hosted logic queue (0, led
	// elsewhere here).
	r = e.send(sendHeader("ST", -1, ""), "anywhere")
	if r.Code != protocol.NotLeaderForQueue || !strings.HasPrefix(r.Remark, "ST-0 ") {
		t.Fatalf("send without a queue: %d %q", r.Code, r.Remark)
	}
}
