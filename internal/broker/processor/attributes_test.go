package processor_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// createTopicAttrs sends UPDATE_AND_CREATE_TOPIC with an attributes text.
func (e *env) createTopicAttrs(topic, attrs string) *remoting.Command {
	e.t.Helper()
	h := protocol.CreateTopicRequestHeader{Topic: topic, ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6,
		TopicFilterType: protocol.SingleTag, Attributes: attrs}
	return e.call(protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil)
}

// getTopicConfig answers GET_TOPIC_CONFIG for topic as the 5.x client
// asks it (lo=true).
func (e *env) getTopicConfig(topic string) (protocol.TopicConfig, *remoting.Command) {
	e.t.Helper()
	h := protocol.GetTopicConfigRequestHeader{Topic: topic, Lo: protocol.Some(true)}
	r := e.call(protocol.GetTopicConfig, protocol.Ext(&h), nil)
	var tc protocol.TopicConfig
	if r.Code == protocol.Success {
		must(e.t, protocol.UnmarshalFastJSON(r.Body, &tc))
	}
	return tc, r
}

// TestTopicAttributes: a FIFO topic is created, read back with
// GET_TOPIC_CONFIG and GET_ALL_TOPIC_CONFIG, updated and its attribute
// deleted with Java's +/- syntax.
func TestTopicAttributes(t *testing.T) {
	e := newEnv(t, nil)
	if r := e.createTopicAttrs("F", "+message.type=FIFO"); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	tc, r := e.getTopicConfig("F")
	if r.Code != protocol.Success || tc.Attributes["message.type"] != "FIFO" || tc.WriteQueueNums != 2 || tc.MessageType() != "FIFO" {
		t.Fatalf("GET_TOPIC_CONFIG: %d %s %+v", r.Code, r.Remark, tc)
	}
	if !strings.Contains(string(r.Body), `"attributes":{"message.type":"FIFO"}`) {
		t.Fatalf("body %s", r.Body)
	}
	r = e.call(protocol.GetAllTopicConfig, nil, nil)
	var all protocol.TopicConfigSerializeWrapper
	must(t, protocol.UnmarshalFastJSON(r.Body, &all))
	if all.TopicConfigTable["F"].Attributes["message.type"] != "FIFO" {
		t.Fatalf("GET_ALL_TOPIC_CONFIG: %+v", all.TopicConfigTable["F"])
	}

	// The same request again changes nothing, not even the version.
	v := e.topics.DataVersion()
	h := protocol.CreateTopicRequestHeader{Topic: "F", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6, TopicFilterType: protocol.SingleTag}
	if r := e.call(protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil); r.Code != protocol.Success || e.topics.DataVersion() != v {
		t.Fatalf("idempotent update: %d %s, version %+v -> %+v", r.Code, r.Remark, v, e.topics.DataVersion())
	}
	// An update without attributes keeps them; +, then - change them.
	if tc, _ := e.getTopicConfig("F"); tc.Attributes["message.type"] != "FIFO" {
		t.Fatalf("attributes lost by an update: %+v", tc)
	}
	if r := e.createTopicAttrs("F", "+message.type=TRANSACTION,+reserve.time=60"); r.Code != protocol.Success {
		t.Fatalf("update: %d %s", r.Code, r.Remark)
	}
	if tc, _ := e.getTopicConfig("F"); !maps.Equal(tc.Attributes, map[string]string{"message.type": "TRANSACTION", "reserve.time": "60"}) {
		t.Fatalf("after update: %+v", tc.Attributes)
	}
	if r := e.createTopicAttrs("F", "-message.type,-reserve.time"); r.Code != protocol.Success {
		t.Fatalf("delete: %d %s", r.Code, r.Remark)
	}
	if tc, _ := e.getTopicConfig("F"); tc.Attributes != nil || tc.MessageType() != "NORMAL" {
		t.Fatalf("after delete: %+v", tc.Attributes)
	}
	// A send to a FIFO topic without a sharding key is stored: Java's
	// broker does not check the message type (its proxy does).
	if r := e.createTopicAttrs("F2", "+message.type=FIFO"); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	if r := e.send(sendHeader("F2", 0, ""), "x"); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
}

// TestTopicAttributeRefusals: every modification Java refuses is answered
// SYSTEM_ERROR with Java's message, and nothing changes.
func TestTopicAttributeRefusals(t *testing.T) {
	e := newEnv(t, nil)
	if r := e.createTopicAttrs("E", "+message.type=FIFO,+queue.type=SimpleCQ"); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	for _, c := range []struct{ topic, attrs, remark string }{
		{"N", "-message.type", "only add attribute is supported while creating topic. key: message.type"},
		{"N", "+foo=1", "unsupported key: foo"},
		{"N", "+message.type=BAD", "value is not in set: [UNSPECIFIED, MIXED, TRANSACTION, FIFO, DELAY, NORMAL]"},
		{"N", "+message.type=MIXED", "MIXED message type is not supported."},
		{"N", "+reserve.time=abc", `For input string: "abc"`},
		{"N", "+reserve.time=-2", "value is not in range(-1, 9223372036854775807)"},
		{"N", "message.type=FIFO", "add/alter attribute format is wrong: message.type"},
		{"N", "message.type", "delete attribute format is wrong: message.type"},
		{"N", "+message.type=FIFO,+message.type=NORMAL", "key duplication: +message.type"},
		{"N", "+message.type=FIFO,-message.type", "alter duplication key. key: message.type"},
		{"N", "+a+b=1", "kv string format wrong."},
		{"N", "+=1", "kv string format wrong."},
		{"N", ",+message.type=FIFO", "delete attribute format is wrong: "},
		{"N", "+message.type=", `add/alter attribute format is wrong: "+message.type=" has no value`},
		{"N", "+queue.type=BatchCQ", "queue.type BatchCQ is not supported by rocketd: only SimpleCQ"},
		{"N", "+cleanup.policy=COMPACTION", "cleanup.policy COMPACTION is not supported by rocketd: only DELETE"},
		{"E", "+queue.type=SimpleCQ", "attempt to update an unchangeable attribute. key: queue.type"},
		{"E", "-cleanup.policy", "attempt to delete a nonexistent key: cleanup.policy"},
		{"E", "-queue.type", "attempt to update an unchangeable attribute. key: queue.type"},
		{"E", "x+message.type=FIFO", "kv string format wrong."},
	} {
		v := e.topics.DataVersion()
		r := e.createTopicAttrs(c.topic, c.attrs)
		if r.Code != protocol.SystemError || r.Remark != c.remark {
			t.Errorf("%s %q: %d %q, want SYSTEM_ERROR %q", c.topic, c.attrs, r.Code, r.Remark, c.remark)
		}
		if e.topics.Contains("N") || e.topics.DataVersion() != v {
			t.Fatalf("%q changed the table", c.attrs)
		}
	}
	if tc, _ := e.getTopicConfig("E"); !maps.Equal(tc.Attributes, map[string]string{"message.type": "FIFO", "queue.type": "SimpleCQ"}) {
		t.Fatalf("E changed: %+v", tc.Attributes)
	}
}

// TestMixedMessageTypeEnabled: enableMixedMessageType lets MIXED through.
func TestMixedMessageTypeEnabled(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.EnableMixedMessageType = true })
	if r := e.createTopicAttrs("M", "+message.type=MIXED"); r.Code != protocol.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
}

// TestGetTopicConfigBadInput: no topic, an unknown topic and a garbage lo
// get clear answers; the server stays up.
func TestGetTopicConfigBadInput(t *testing.T) {
	e := newEnv(t, nil)
	if r := e.call(protocol.GetTopicConfig, nil, nil); r.Code != protocol.SystemError || r.Remark != "the custom field <topic> is null" {
		t.Fatalf("no topic: %d %s", r.Code, r.Remark)
	}
	if _, r := e.getTopicConfig("nope"); r.Code != protocol.TopicNotExist || r.Remark != "No topic in this broker. topic: nope" {
		t.Fatalf("unknown topic: %d %s", r.Code, r.Remark)
	}
	r := e.call(protocol.GetTopicConfig, map[string]string{"topic": "TBW102", "lo": "maybe"}, []byte("junk"))
	if r.Code != protocol.Success {
		t.Fatalf("garbage lo: %d %s", r.Code, r.Remark)
	}
	if _, r := e.getTopicConfig("TBW102"); r.Code != protocol.Success {
		t.Fatalf("server gone: %d %s", r.Code, r.Remark)
	}
}

// TestGroupFullConfig: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP stores the 5.x
// config whole and GET_ALL_SUBSCRIPTIONGROUP_CONFIG returns it;
// retryMaxTimes decides when a retry goes to the DLQ.
func TestGroupFullConfig(t *testing.T) {
	e := newEnv(t, nil)
	body := `{"groupName":"og","consumeEnable":true,"consumeMessageOrderly":true,"consumeBroadcastEnable":false,` +
		`"retryMaxTimes":1,"retryQueueNums":1,"groupSysFlag":2,"consumeTimeoutMinute":5,` +
		`"groupRetryPolicy":{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":1000,"max":60000,"multiplier":3}},` +
		`"subscriptionDataSet":[{"topic":"T","expressionType":"TAG","expression":"*","version":0}],"attributes":{}}`
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, []byte(body)); r.Code != protocol.Success {
		t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
	r := e.call(protocol.GetAllSubscriptionGroupConfig, nil, nil)
	var all protocol.SubscriptionGroupTable
	must(t, protocol.UnmarshalFastJSON(r.Body, &all))
	g := all.SubscriptionGroupTable["og"]
	if !g.ConsumeMessageOrderly || g.ConsumeBroadcastEnable || g.RetryMaxTimes != 1 || g.GroupSysFlag != 2 ||
		g.ConsumeTimeoutMinute != 5 || g.GroupRetryPolicy.Type != "EXPONENTIAL" ||
		g.GroupRetryPolicy.ExponentialRetryPolicy == nil || g.GroupRetryPolicy.ExponentialRetryPolicy.Multiplier != 3 ||
		len(g.SubscriptionDataSet) != 1 || g.SubscriptionDataSet[0].Topic != "T" {
		t.Fatalf("read back %+v", g)
	}

	// retryMaxTimes=1: the first retry is stored in %RETRY%og, the second
	// goes to %DLQ%og.
	h := sendHeader("%RETRY%og", 0, "")
	h.ReconsumeTimes = protocol.Some[int32](0)
	if r := e.send(h, "retry"); r.Code != protocol.Success {
		t.Fatalf("retry send: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset("%RETRY%og", 0, 1)
	h.ReconsumeTimes = protocol.Some[int32](1)
	if r := e.send(h, "dead"); r.Code != protocol.Success {
		t.Fatalf("dlq send: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset("%DLQ%og", 0, 1)

	// A group attribute: 5.x knows none, so it is refused.
	bad := `{"groupName":"og","attributes":{"+x":"1"}}`
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, []byte(bad)); r.Code != protocol.SystemError || r.Remark != "unsupported key: x" {
		t.Fatalf("group attribute: %d %s", r.Code, r.Remark)
	}
	if g, _ := e.groups.Get("og"); !g.ConsumeMessageOrderly {
		t.Fatal("refused update changed the group")
	}
	for _, b := range []string{"", "{", "null", `{"groupName":"bad name"}`, `[1,2]`, `{"groupName":"og","retryMaxTimes":"x"}`} {
		if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, []byte(b)); r.Code != protocol.SystemError || r.Remark == "" {
			t.Fatalf("body %q: %d %s", b, r.Code, r.Remark)
		}
	}
}

// TestSendStoresRegionAndTraceOn: every stored message carries the
// broker's MSG_REGION and TRACE_ON (5.x), replacing a client's, in single
// and batch sends.
func TestSendStoresRegionAndTraceOn(t *testing.T) {
	e := newEnv(t, func(c *config.BrokerConfig, _ *processor.Deps) { c.RegionID, c.TraceOn = "R1", false })
	e.createTopic("T", 1)
	props := "TAGS\x01a\x02MSG_REGION\x01client\x02TRACE_ON\x01true\x02WAIT\x01true"
	if r := e.send(sendHeader("T", 0, props), "one"); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	var body []byte
	for i := range 2 {
		body = message.AppendBatchItem(body, int32(i), []byte{'b', byte('0' + i)}, "TAGS\x01b")
	}
	h := sendHeader("T", 0, "MSG_REGION\x01client")
	h.Batch = protocol.Some(true)
	ext := map[string]string{}
	h.AppendExtV2(ext)
	if r := e.call(protocol.SendBatchMessage, ext, body); r.Code != protocol.Success {
		t.Fatalf("batch: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset("T", 0, 3)
	res, err := e.store.GetMessage("x", "T", 0, 0, 3, nil)
	must(t, err)
	defer res.Release()
	for i, m := range res.Messages {
		rec, _, err := message.DecodeRecord(m.Bytes, false)
		must(t, err)
		got := message.ParseProperties(rec.Properties)
		if got["MSG_REGION"] != "R1" || got["TRACE_ON"] != "false" || got["CLUSTER"] != e.cfg.BrokerClusterName ||
			got["TAGS"] == "" || got["WAIT"] != "" {
			t.Errorf("message %d: %q", i, rec.Properties)
		}
		if strings.Count(rec.Properties, "MSG_REGION") != 1 {
			t.Errorf("message %d: MSG_REGION twice: %q", i, rec.Properties)
		}
	}
}

// TestCreateTopicList: UPDATE_AND_CREATE_TOPIC_LIST creates every topic of
// its body with its attributes; a refused config changes nothing; bad
// bodies get SYSTEM_ERROR.
func TestCreateTopicList(t *testing.T) {
	e := newEnv(t, nil)
	body := `{"topicConfigList":[` +
		`{"topicName":"L1","readQueueNums":2,"writeQueueNums":2,"perm":6,"attributes":{"+message.type":"FIFO"}},` +
		`{"topicName":"L2","readQueueNums":1,"writeQueueNums":1,"perm":6,"attributes":{}}]}`
	if r := e.call(protocol.UpdateAndCreateTopicList, nil, []byte(body)); r.Code != protocol.Success {
		t.Fatalf("list: %d %s", r.Code, r.Remark)
	}
	if tc, _ := e.getTopicConfig("L1"); tc.MessageType() != "FIFO" || tc.WriteQueueNums != 2 {
		t.Fatalf("L1 %+v", tc)
	}
	if tc, r := e.getTopicConfig("L2"); r.Code != protocol.Success || tc.Attributes != nil {
		t.Fatalf("L2 %d %+v", r.Code, tc)
	}
	for _, c := range []struct{ body, remark string }{
		{`{"topicConfigList":[{"topicName":"L3","perm":6},{"topicName":"L1","perm":6,"attributes":{"+queue.type":"SimpleCQ"}}]}`,
			"attempt to update an unchangeable attribute. key: queue.type"},
		{`{"topicConfigList":[{"topicName":"L3","perm":6},{"topicName":"L4","attributes":{"+message.type":"MIXED"}}]}`,
			"MIXED message type is not supported."},
		{`{"topicConfigList":[{"topicName":"L3","perm":6},{"topicName":"L3","perm":6}]}`, "topic L3 appears twice in the list"},
		{`{"topicConfigList":[{"topicName":"L3","perm":6},{"topicName":"TBW102"}]}`, "The topic[TBW102] is conflict with system topic."},
	} {
		r := e.call(protocol.UpdateAndCreateTopicList, nil, []byte(c.body))
		if r.Code != protocol.SystemError || r.Remark != c.remark {
			t.Errorf("%s: %d %q, want %q", c.body, r.Code, r.Remark, c.remark)
		}
		if e.topics.Contains("L3") {
			t.Fatalf("%s: L3 created by a refused list", c.body)
		}
	}
	for _, b := range []string{"", "{", `{"topicConfigList":{}}`, `{"topicConfigList":[{"topicName":""}]}`, `{"topicConfigList":[{"topicName":"bad name"}]}`} {
		if r := e.call(protocol.UpdateAndCreateTopicList, nil, []byte(b)); r.Code != protocol.SystemError || r.Remark == "" {
			t.Fatalf("body %q: %d %s", b, r.Code, r.Remark)
		}
	}
}

// TestGetGroupConfig: GET_SUBSCRIPTIONGROUP_CONFIG answers one group's
// whole config, never creates one, and refuses a missing group name.
func TestGetGroupConfig(t *testing.T) {
	e := newEnv(t, nil)
	body := `{"groupName":"og","consumeMessageOrderly":true,"retryMaxTimes":4}`
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, []byte(body)); r.Code != protocol.Success {
		t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
	get := func(group string) *remoting.Command {
		return e.call(protocol.GetSubscriptionGroupConfig, protocol.Ext(&protocol.GetSubscriptionGroupConfigRequestHeader{Group: group}), nil)
	}
	r := get("og")
	var g protocol.SubscriptionGroupConfig
	must(t, protocol.UnmarshalFastJSON(r.Body, &g))
	if r.Code != protocol.Success || !g.ConsumeMessageOrderly || g.RetryMaxTimes != 4 || g.GroupName != "og" {
		t.Fatalf("og: %d %s %+v", r.Code, r.Remark, g)
	}
	if r := get("unknown"); r.Code != protocol.SystemError || r.Remark != "No group in this broker" {
		t.Fatalf("unknown: %d %s", r.Code, r.Remark)
	}
	if _, ok := e.groups.Get("unknown"); ok {
		t.Fatal("GET_SUBSCRIPTIONGROUP_CONFIG created the group")
	}
	if r := e.call(protocol.GetSubscriptionGroupConfig, nil, nil); r.Code != protocol.SystemError || r.Remark != "the custom field <group> is null" {
		t.Fatalf("no group: %d %s", r.Code, r.Remark)
	}
}
