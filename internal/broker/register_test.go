package broker_test

import (
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestCreateTopicRegisteredBeforeAnswer: UPDATE_AND_CREATE_TOPIC answers
// once the NameServer has the topic (Java registers before answering), so
// a topic acknowledged to the admin is routed even if the master dies
// right after; no wait here.
func TestCreateTopicRegisteredBeforeAnswer(t *testing.T) {
	c := startCluster(t, nil)
	for i := range 5 {
		topic := uniq(t, "RegNow")
		h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 3, WriteQueueNums: 3,
			Perm: 6, TopicFilterType: protocol.SingleTag}
		if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateTopic, &h, nil); r.Code != protocol.Success {
			t.Fatalf("create topic: %d %s", r.Code, r.Remark)
		}
		if addrs := c.routeAddrs(c.nsAddr, topic); len(addrs) != 1 || addrs[0] != c.b.Addr() {
			t.Fatalf("topic %d: route right after the create answered: %v, want the master", i, addrs)
		}
	}
}
