package processor_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

func commitOffset(t *testing.T, e *env, group, topic string, q int32, off int64) {
	t.Helper()
	h := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, CommitOffset: off}
	if r := e.call(protocol.UpdateConsumerOffset, protocol.Ext(&h), nil); r.Code != protocol.Success {
		t.Fatalf("commit offset: %d %s", r.Code, r.Remark)
	}
}

func TestAdminGroupQueries(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("AQ", 2)
	for i := range 4 {
		if r := e.send(sendHeader("AQ", int32(i%2), message.EncodeProperties(map[string]string{"k": "v"})), "m"); r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	e.waitMaxOffset("AQ", 0, 2)
	e.waitMaxOffset("AQ", 1, 2)
	commitOffset(t, e, "g1", "AQ", 0, 1)
	commitOffset(t, e, "g1", "AQ", 1, 2)
	commitOffset(t, e, "g2", "AQ", 0, 2)

	// QUERY_TOPICS_BY_CONSUMER
	var tl protocol.TopicList
	r := e.call(protocol.QueryTopicsByConsumer, protocol.Ext(&protocol.QueryTopicsByConsumerRequestHeader{Group: "g1"}), nil)
	must(t, protocol.UnmarshalFastJSON(r.Body, &tl))
	if r.Code != protocol.Success || !slices.Equal(tl.TopicList, []string{"AQ"}) || tl.BrokerAddr == "" {
		t.Errorf("topics by consumer: %d %+v", r.Code, tl)
	}

	// QUERY_CONSUME_TIME_SPAN: queue 0 has one message waiting, queue 1 none.
	r = e.call(protocol.QueryConsumeTimeSpan, protocol.Ext(&protocol.QueryConsumeTimeSpanRequestHeader{Topic: "AQ", Group: "g1"}), nil)
	var span protocol.QueryConsumeTimeSpanBody
	must(t, protocol.UnmarshalFastJSON(r.Body, &span))
	if r.Code != protocol.Success || len(span.ConsumeTimeSpanSet) != 2 {
		t.Fatalf("time span: %d %s", r.Code, r.Body)
	}
	for _, s := range span.ConsumeTimeSpanSet {
		if s.MinTimeStamp <= 0 || s.MaxTimeStamp < s.MinTimeStamp || s.ConsumeTimeStamp < s.MinTimeStamp {
			t.Errorf("queue %d span %+v", s.MessageQueue.QueueID, s)
		}
		// Queue 1 is fully consumed: nothing waits. Queue 0's next message
		// waits (its delay may be 0 ms when all ran within one millisecond).
		if s.MessageQueue.QueueID == 1 && (s.DelayTime != 0 || s.ConsumeTimeStamp != s.MaxTimeStamp) {
			t.Errorf("consumed queue 1: %+v", s)
		}
		if s.DelayTime < 0 {
			t.Errorf("queue %d delay %d", s.MessageQueue.QueueID, s.DelayTime)
		}
	}
	if r := e.call(protocol.QueryConsumeTimeSpan, protocol.Ext(&protocol.QueryConsumeTimeSpanRequestHeader{Topic: "Nope", Group: "g1"}), nil); r.Code != protocol.TopicNotExist {
		t.Errorf("time span of a missing topic: %d %s", r.Code, r.Remark)
	}

	// QUERY_CORRECTION_OFFSET: min over the groups not filtered out;
	// MaxInt64 where the compare group is behind it.
	r = e.call(protocol.QueryCorrectionOffset, protocol.Ext(&protocol.QueryCorrectionOffsetHeader{CompareGroup: "g1", Topic: "AQ"}), nil)
	var corr protocol.QueryCorrectionOffsetBody
	must(t, protocol.UnmarshalFastJSON(r.Body, &corr))
	if corr.CorrectionOffsets[0] != 1 || corr.CorrectionOffsets[1] != 2 {
		t.Errorf("correction over all groups: %v", corr.CorrectionOffsets)
	}
	r = e.call(protocol.QueryCorrectionOffset, protocol.Ext(&protocol.QueryCorrectionOffsetHeader{FilterGroups: "g1", CompareGroup: "g1", Topic: "AQ"}), nil)
	corr = protocol.QueryCorrectionOffsetBody{}
	must(t, protocol.UnmarshalFastJSON(r.Body, &corr))
	if corr.CorrectionOffsets[0] != 1<<63-1 || len(corr.CorrectionOffsets) != 1 {
		t.Errorf("correction without g1: %v", corr.CorrectionOffsets)
	}
	if _, ok := e.offsets.Query("g1", "AQ", 0); !ok {
		t.Error("QUERY_CORRECTION_OFFSET dropped the filtered group's offsets (Java's side effect)")
	}

	// CLONE_GROUP_OFFSET (offline: no online consumer needed).
	r = e.call(protocol.CloneGroupOffset, protocol.Ext(&protocol.CloneGroupOffsetRequestHeader{SrcGroup: "g1", DestGroup: "g3", Offline: true}), nil)
	if off, ok := e.offsets.Query("g3", "AQ", 1); r.Code != protocol.Success || !ok || off != 2 {
		t.Errorf("clone: %d %s, g3 offset %d %v", r.Code, r.Remark, off, ok)
	}

	// GET_SUBSCRIPTIONGROUP_CONFIG and DELETE_SUBSCRIPTIONGROUP.
	gc := protocol.NewSubscriptionGroupConfig("g3")
	b, err := protocol.MarshalFastJSON(&gc)
	must(t, err)
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, b); r.Code != protocol.Success {
		t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
	r = e.call(protocol.GetSubscriptionGroupConfig, protocol.Ext(&protocol.GetSubscriptionGroupConfigRequestHeader{Group: "g3"}), nil)
	var got protocol.SubscriptionGroupConfig
	must(t, protocol.UnmarshalFastJSON(r.Body, &got))
	if r.Code != protocol.Success || got.GroupName != "g3" {
		t.Errorf("get group config: %d %s", r.Code, r.Body)
	}
	del := protocol.Ext(&protocol.DeleteSubscriptionGroupRequestHeader{GroupName: "g3"})
	delete(del, "removeOffset")
	del["cleanOffset"] = "true" // the 5.x name
	if r := e.call(protocol.DeleteSubscriptionGroup, del, nil); r.Code != protocol.Success {
		t.Fatalf("delete group: %d %s", r.Code, r.Remark)
	}
	if _, found := e.groups.Get("g3"); found {
		t.Error("group still configured after DELETE_SUBSCRIPTIONGROUP")
	}
	if _, ok := e.offsets.Query("g3", "AQ", 1); ok {
		t.Error("cleanOffset=true left the group's offsets")
	}
	if r := e.call(protocol.GetSubscriptionGroupConfig, protocol.Ext(&protocol.GetSubscriptionGroupConfigRequestHeader{Group: "g3"}), nil); r.Code != protocol.SystemError || r.Remark != "No group in this broker" {
		t.Errorf("config of a deleted group: %d %q", r.Code, r.Remark)
	}

	// Half-built requests get Java's @CFNotNull answer.
	for _, code := range []int32{protocol.QueryTopicsByConsumer, protocol.QueryConsumeTimeSpan, protocol.QueryCorrectionOffset,
		protocol.CloneGroupOffset, protocol.DeleteSubscriptionGroup, protocol.GetSubscriptionGroupConfig, protocol.QuerySubscriptionByConsumer} {
		if r := e.call(code, map[string]string{}, nil); r.Code != protocol.SystemError || !strings.Contains(r.Remark, "is null") {
			t.Errorf("code %d without its header: %d %q", code, r.Code, r.Remark)
		}
	}
}

func TestAdminClientQueries(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")); r.Code != protocol.Success {
		t.Fatalf("heartbeat: %d %s", r.Code, r.Remark)
	}
	// QUERY_SUBSCRIPTION_BY_CONSUMER
	r := e.call(protocol.QuerySubscriptionByConsumer, protocol.Ext(&protocol.QuerySubscriptionByConsumerRequestHeader{Group: "cg", Topic: "T"}), nil)
	var sub protocol.QuerySubscriptionResponseBody
	must(t, protocol.UnmarshalFastJSON(r.Body, &sub))
	if r.Code != protocol.Success || sub.SubscriptionData == nil || sub.SubscriptionData.SubString != "*" || sub.Group != "cg" {
		t.Errorf("subscription by consumer: %d %s", r.Code, r.Body)
	}
	r = e.call(protocol.QuerySubscriptionByConsumer, protocol.Ext(&protocol.QuerySubscriptionByConsumerRequestHeader{Group: "cg", Topic: "Other"}), nil)
	sub = protocol.QuerySubscriptionResponseBody{}
	must(t, protocol.UnmarshalFastJSON(r.Body, &sub))
	if r.Code != protocol.Success || sub.SubscriptionData != nil {
		t.Errorf("subscription of an unsubscribed topic: %d %s", r.Code, r.Body)
	}
	// GET_ALL_PRODUCER_INFO: the heartbeat registered producer group pg.
	r = e.call(protocol.GetAllProducerInfo, nil, nil)
	var table protocol.ProducerTableInfo
	must(t, protocol.UnmarshalFastJSON(r.Body, &table))
	if ps := table.Data["pg"]; r.Code != protocol.Success || len(ps) != 1 || ps[0].ClientID != "c1" || ps[0].RemoteIP == "" || ps[0].LastUpdateTimestamp <= 0 {
		t.Errorf("producer table: %d %s", r.Code, r.Body)
	}
	// GET_SYSTEM_TOPIC_LIST_FROM_BROKER
	r = e.call(protocol.GetSystemTopicListFromBroker, nil, nil)
	var tl protocol.TopicList
	must(t, protocol.UnmarshalFastJSON(r.Body, &tl))
	if !slices.Contains(tl.TopicList, "SCHEDULE_TOPIC_XXXX") || !slices.Contains(tl.TopicList, "TBW102") {
		t.Errorf("system topics: %v", tl.TopicList)
	}
}

func TestQueryConsumeQueue(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("CQ", 1)
	for range 3 {
		if r := e.send(sendHeader("CQ", 0, message.EncodeProperties(map[string]string{message.PropertyTags: "TagA"})), "m"); r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	e.waitMaxOffset("CQ", 0, 3)
	query := func(index int64, count int32, group string) (*protocol.QueryConsumeQueueResponseBody, string) {
		t.Helper()
		h := protocol.QueryConsumeQueueRequestHeader{Topic: "CQ", QueueID: 0, Index: index, Count: count, ConsumerGroup: group}
		r := e.call(protocol.QueryConsumeQueue, protocol.Ext(&h), nil)
		if r.Code != protocol.Success {
			t.Fatalf("query cq: %d %s", r.Code, r.Remark)
		}
		var b protocol.QueryConsumeQueueResponseBody
		must(t, protocol.UnmarshalFastJSON(r.Body, &b))
		return &b, r.Remark
	}
	b, _ := query(1, 5, "")
	if len(b.QueueData) != 2 || b.MaxQueueIndex != 3 || b.MinQueueIndex != 0 || b.QueueData[0].TagsCode != int64(message.JavaHash("TagA")) ||
		b.QueueData[1].PhysicOffset <= b.QueueData[0].PhysicOffset || b.QueueData[0].PhysicSize <= 0 {
		t.Errorf("units 1..: %+v", b)
	}
	if b, remark := query(3, 5, ""); len(b.QueueData) != 0 || !strings.Contains(remark, "Index 3 of 0@CQ is not exist!") {
		t.Errorf("beyond the end: %+v %q", b, remark)
	}
	if b, _ := query(0, 1, "nobody"); len(b.QueueData) != 1 || b.FilterData != "nobody@CQ is not online!" {
		t.Errorf("with an offline group: %+v", b)
	}
	h := protocol.QueryConsumeQueueRequestHeader{Topic: "Nope", QueueID: 0, Count: 1}
	if r := e.call(protocol.QueryConsumeQueue, protocol.Ext(&h), nil); r.Code != protocol.SystemError || r.Remark != "0@Nope is not exist!" {
		t.Errorf("missing queue: %d %q", r.Code, r.Remark)
	}
}

func TestGroupListAndRequestModes(t *testing.T) {
	e := newEnv(t, nil)
	list := protocol.SubscriptionGroupList{GroupConfigList: []protocol.SubscriptionGroupConfig{
		protocol.NewSubscriptionGroupConfig("gl1"), protocol.NewSubscriptionGroupConfig("gl2")}}
	list.GroupConfigList[1].RetryMaxTimes = 3
	b, err := protocol.MarshalFastJSON(&list)
	must(t, err)
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroupList, nil, b); r.Code != protocol.Success {
		t.Fatalf("group list: %d %s", r.Code, r.Remark)
	}
	if gc, ok := e.groups.Get("gl2"); !ok || gc.RetryMaxTimes != 3 {
		t.Errorf("gl2 after the list: %+v %v", gc, ok)
	}
	bad := protocol.SubscriptionGroupList{GroupConfigList: []protocol.SubscriptionGroupConfig{
		protocol.NewSubscriptionGroupConfig("gl3"), protocol.NewSubscriptionGroupConfig("bad group")}}
	b, err = protocol.MarshalFastJSON(&bad)
	must(t, err)
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroupList, nil, b); r.Code != protocol.SystemError {
		t.Errorf("a list with a bad name: %d %s", r.Code, r.Remark)
	}
	if _, ok := e.groups.Get("gl3"); ok {
		t.Error("a list with a bad name applied its good entries")
	}
	for _, body := range [][]byte{nil, []byte("{")} {
		if r := e.call(protocol.UpdateAndCreateSubscriptionGroupList, nil, body); r.Code != protocol.SystemError {
			t.Errorf("body %q: %d %s", body, r.Code, r.Remark)
		}
	}

	e.createTopic("RM", 1)
	mode := protocol.SetMessageRequestModeRequestBody{Topic: "RM", ConsumerGroup: "gl1", Mode: "POP", PopShareQueueNum: 1}
	b, err = protocol.MarshalFastJSON(&mode)
	must(t, err)
	if r := e.call(protocol.SetMessageRequestMode, nil, b); r.Code != protocol.Success {
		t.Fatalf("set mode: %d %s", r.Code, r.Remark)
	}
	r := e.call(protocol.GetAllMessageRequestMode, nil, nil)
	var table protocol.MessageRequestModeTable
	must(t, protocol.UnmarshalFastJSON(r.Body, &table))
	if got := table.MessageRequestModeMap["RM"]["gl1"]; r.Code != protocol.Success || got.Mode != "POP" {
		t.Errorf("all modes: %d %s", r.Code, r.Body)
	}
}
