package ha_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestProcessSlaveMetadataAndRouteAfterMasterKilled: with the three
// processes of a real deployment, a topic created on the master reaches
// the slave within about a second, and a topic created right before the
// master is SIGKILLed is still routed to the slave afterwards (the create
// answers once the NameServer has the topic; the NameServer keeps the
// group's queue data while its slave lives).
func TestProcessSlaveMetadataAndRouteAfterMasterKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startHACluster(t, "ASYNC_MASTER")
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	create := func(topic string) {
		t.Helper()
		h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 2, WriteQueueNums: 2,
			Perm: 6, TopicFilterType: protocol.SingleTag}
		if r, err := invoke(rc, c.masterAddr, protocol.UpdateAndCreateTopic, &h, nil); err != nil || r.Code != protocol.Success {
			t.Fatalf("create topic %s: %v %+v", topic, err, r)
		}
	}
	slaveHas := func(topic string) bool {
		r, err := invoke(rc, c.slaveAdr, protocol.GetAllTopicConfig, nil, nil)
		return err == nil && r.Code == protocol.Success && bytes.Contains(r.Body, []byte(`"`+topic+`"`))
	}
	routedToSlave := func(topic string) bool {
		r, err := invoke(rc, c.nsAddr, protocol.GetRouteinfoByTopic, &protocol.GetRouteInfoRequestHeader{Topic: topic}, nil)
		if err != nil || r.Code != protocol.Success {
			return false
		}
		var route protocol.TopicRouteData
		if protocol.UnmarshalFastJSON(r.Body, &route) != nil || len(route.QueueDatas) != 1 || len(route.BrokerDatas) != 1 {
			return false
		}
		addrs := route.BrokerDatas[0].BrokerAddrs
		return len(addrs) == 1 && addrs[1] == c.slaveAdr
	}

	// The slave may still be learning its master: the first copy counts
	// from then; later ones are the steady state.
	create("ProcMetaWarmUp")
	wait.For(t, 30*time.Second, "the slave to copy the first topic", func() bool { return slaveHas("ProcMetaWarmUp") })
	for i, topic := range []string{"ProcMeta1", "ProcMeta2"} {
		start := time.Now()
		create(topic)
		wait.For(t, 10*time.Second, "the slave to copy "+topic, func() bool { return slaveHas(topic) })
		took := time.Since(start)
		t.Logf("topic %d on the slave %v after its creation on the master", i+1, took)
		if took > 3*time.Second {
			t.Errorf("the slave copied %s after %v, want about 1 s", topic, took)
		}
	}

	create("ProcMetaLast")
	c.master.Kill(t)
	for _, topic := range []string{"ProcMeta1", "ProcMetaLast"} {
		wait.For(t, 10*time.Second, "the NameServer to route "+topic+" to the slave alone", func() bool { return routedToSlave(topic) })
	}
}
