package processor_test

import (
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
)

func createGroup(t *testing.T, e *env, group string) {
	t.Helper()
	gc := protocol.NewSubscriptionGroupConfig(group)
	b, err := protocol.MarshalFastJSON(&gc)
	must(t, err)
	if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, b); r.Code != protocol.Success {
		t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
}

func TestBrokerConsumeStats(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("BCS", 2)
	for i := range 5 {
		if r := e.send(sendHeader("BCS", int32(i%2), ""), "m"); r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	e.waitMaxOffset("BCS", 0, 3)
	e.waitMaxOffset("BCS", 1, 2)
	createGroup(t, e, "bcs1")
	createGroup(t, e, "bcs2")
	commitOffset(t, e, "bcs1", "BCS", 0, 1)
	commitOffset(t, e, "bcs1", "BCS", 1, 2)
	// Offsets of a group without a subscription group config are not
	// listed (Java walks the subscription group table).
	commitOffset(t, e, "noconfig", "BCS", 0, 1)

	r := e.call(protocol.GetBrokerConsumeStats, protocol.Ext(&protocol.GetConsumeStatsInBrokerHeader{}), nil)
	if r.Code != protocol.Success {
		t.Fatalf("GET_BROKER_CONSUME_STATS: %d %s", r.Code, r.Remark)
	}
	for _, key := range []string{`"brokerAddr":`, `"totalDiff":`, `"totalInflightDiff":`, `"consumeStatsList":`} {
		if !strings.Contains(string(r.Body), key) {
			t.Errorf("body lacks %s: %s", key, r.Body)
		}
	}
	var list protocol.ConsumeStatsList
	must(t, protocol.UnmarshalFastJSON(r.Body, &list))
	if list.BrokerAddr != "127.0.0.1:10911" { // the env's StoreHost
		t.Errorf("brokerAddr %q", list.BrokerAddr)
	}
	// Queue 0: 3 stored, 1 consumed; queue 1: 2 stored, 2 consumed.
	if list.TotalDiff != 2 || list.TotalInflightDiff != 0 {
		t.Errorf("totalDiff %d inflight %d, want 2 and 0", list.TotalDiff, list.TotalInflightDiff)
	}
	byGroup := map[string][]protocol.ConsumeStats{}
	for _, m := range list.ConsumeStatsList {
		if len(m) != 1 {
			t.Errorf("entry with %d groups: %v", len(m), m)
		}
		for g, s := range m {
			byGroup[g] = s
		}
	}
	if _, found := byGroup["noconfig"]; found {
		t.Errorf("group without config listed: %s", r.Body)
	}
	if s, found := byGroup["bcs2"]; !found || len(s) != 0 {
		t.Errorf("group without offsets: %v %v", s, found)
	}
	s := byGroup["bcs1"]
	if len(s) != 1 || len(s[0].OffsetTable) != 2 {
		t.Fatalf("bcs1: %s", r.Body)
	}
	for mq, w := range s[0].OffsetTable {
		want := map[int32][2]int64{0: {3, 1}, 1: {2, 2}}[mq.QueueID]
		if mq.Topic != "BCS" || w.BrokerOffset != want[0] || w.ConsumerOffset != want[1] || w.LastTimestamp <= 0 {
			t.Errorf("%+v: %+v", mq, w)
		}
	}

	// isOrder: BCS is not an order topic, so no group lists it.
	r = e.call(protocol.GetBrokerConsumeStats, protocol.Ext(&protocol.GetConsumeStatsInBrokerHeader{IsOrder: true}), nil)
	list = protocol.ConsumeStatsList{}
	must(t, protocol.UnmarshalFastJSON(r.Body, &list))
	if r.Code != protocol.Success || list.TotalDiff != 0 || len(list.ConsumeStatsList) < 2 {
		t.Errorf("isOrder: %d %s", r.Code, r.Body)
	}
	for _, m := range list.ConsumeStatsList {
		for g, s := range m {
			if len(s) != 0 {
				t.Errorf("isOrder lists %s: %v", g, s)
			}
		}
	}

	// Once bcs1's online consumers subscribe to another topic only, BCS is
	// left out for it.
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "bcs1", "OtherTopic")); r.Code != protocol.Success {
		t.Fatalf("heartbeat: %d %s", r.Code, r.Remark)
	}
	r = e.call(protocol.GetBrokerConsumeStats, protocol.Ext(&protocol.GetConsumeStatsInBrokerHeader{}), nil)
	list = protocol.ConsumeStatsList{}
	must(t, protocol.UnmarshalFastJSON(r.Body, &list))
	for _, m := range list.ConsumeStatsList {
		if s, found := m["bcs1"]; found && len(s) != 0 {
			t.Errorf("bcs1 lists a topic its consumers do not subscribe to: %s", r.Body)
		}
	}
	if list.TotalDiff != 0 {
		t.Errorf("totalDiff %d without bcs1's BCS, want 0", list.TotalDiff)
	}

	// Without its header: Java's @CFNotNull answer.
	r = e.call(protocol.GetBrokerConsumeStats, nil, nil)
	if r.Code != protocol.SystemError || r.Remark != "the custom field <isOrder> is null" {
		t.Errorf("no header: %d %q", r.Code, r.Remark)
	}
}
