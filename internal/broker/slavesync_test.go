package broker_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
	"github.com/rocketd/rocketd/internal/protocol"
)

// startSlaveWith starts a slave of c's master with the default metadata
// copy interval; tune adjusts its configuration. It does not wait for the
// master (there may be none yet).
func (c *cluster) startSlaveWith(t testing.TB, tune func(*config.BrokerConfig)) *broker.Broker {
	t.Helper()
	bc := c.brokerConfig()
	bc.BrokerID = 1
	bc.BrokerRole = config.Slave
	bc.StorePathRootDir = filepath.Join(c.dir, "slave-store")
	if tune != nil {
		tune(&bc)
	}
	s, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("slave shutdown: %v", err)
		}
		c.rc.CloseConn(s.Addr())
	})
	return s
}

// changeMaster creates a topic and a subscription group and commits a
// consumer offset on the master.
func (c *cluster) changeMaster(topic, group string, offset int64) {
	c.t.Helper()
	th := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 2, WriteQueueNums: 2,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateTopic, &th, nil); r.Code != protocol.Success {
		c.t.Fatalf("create topic: %d %s", r.Code, r.Remark)
	}
	gc := protocol.NewSubscriptionGroupConfig(group)
	body, err := protocol.MarshalFastJSON(&gc)
	if err != nil {
		c.t.Fatal(err)
	}
	if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
		c.t.Fatalf("create group: %d %s", r.Code, r.Remark)
	}
	uh := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 1, CommitOffset: offset}
	if r := c.invoke(c.b.Addr(), protocol.UpdateConsumerOffset, &uh, nil); r.Code != protocol.Success {
		c.t.Fatalf("commit offset: %d %s", r.Code, r.Remark)
	}
}

// slaveHas reports whether the slave at addr has the topic, the group and
// the offset.
func (c *cluster) slaveHas(addr, topic, group string, offset int64) bool {
	c.t.Helper()
	if r := c.invoke(addr, protocol.GetAllTopicConfig, nil, nil); !bytes.Contains(r.Body, []byte(`"`+topic+`"`)) {
		return false
	}
	if r := c.invoke(addr, protocol.GetAllSubscriptionGroupConfig, nil, nil); !bytes.Contains(r.Body, []byte(`"`+group+`"`)) {
		return false
	}
	r := c.invoke(addr, protocol.QueryConsumerOffset, &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 1}, nil)
	var oh protocol.OffsetResponseHeader
	return r.Code == protocol.Success && oh.Decode(r.ExtFields) == nil && oh.Offset == offset
}

// TestSlaveLearnsMasterMetadataFast: a slave started before its master
// (it learns the master from a later registration answer) and then in
// steady state learns a new topic, subscription group and consumer offset
// of the master within about a second (the goal; the bound below
// leaves room for a loaded machine, the test logs what it measured).
func TestSlaveLearnsMasterMetadataFast(t *testing.T) {
	c := startCluster(t, nil)
	c.stopBroker()
	s := c.startSlaveWith(t, nil) // registers while the group has no master
	c.startBroker()
	masterUp := time.Now()

	c.changeMaster("FastT1", "FastG1", 11)
	waitFor(t, 15*time.Second, "the first changes on the slave", func() bool { return c.slaveHas(s.Addr(), "FastT1", "FastG1", 11) })
	first := time.Since(masterUp)

	for i, want := range []int64{22, 33, 44} {
		topic, group := uniq(t, "FastT"), uniq(t, "FastG")
		start := time.Now()
		c.changeMaster(topic, group, want)
		waitFor(t, 10*time.Second, "the changes on the slave", func() bool { return c.slaveHas(s.Addr(), topic, group, want) })
		took := time.Since(start)
		t.Logf("round %d: on the slave %v after the changes on the master", i+1, took)
		if took > 3*time.Second {
			t.Errorf("round %d: the slave took %v, want about 1 s (500 ms polls)", i+1, took)
		}
	}
	t.Logf("slave started before its master: first changes on the slave %v after the master started", first)
	// The slave registers again at 1, 2, 4, 5, 5... s until it knows its
	// master: one retry period plus a poll.
	if first > 8*time.Second {
		t.Errorf("the slave learnt its master's changes %v after the master started, want a few seconds", first)
	}
}

// routeAddrs returns the broker addresses the NameServer at nsAddr routes
// topic to (nil when it has no route).
func (c *cluster) routeAddrs(nsAddr, topic string) []string {
	c.t.Helper()
	r := c.invoke(nsAddr, protocol.GetRouteinfoByTopic, &protocol.GetRouteInfoRequestHeader{Topic: topic}, nil)
	if r.Code != protocol.Success {
		return nil
	}
	var route protocol.TopicRouteData
	if err := protocol.UnmarshalFastJSON(r.Body, &route); err != nil || len(route.QueueDatas) == 0 {
		return nil
	}
	var addrs []string
	for _, bd := range route.BrokerDatas {
		for _, a := range bd.BrokerAddrs {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// TestSlaveTopicRoutedWithoutMaster: a topic created on the master is
// routed to the slave by a NameServer the master never registered with
// (as after a master that died before its registration arrived, or a
// NameServer started after the master died): the slave copies the topic
// and registers it at once. After the master stops, both NameServers
// still route the topic to the slave.
func TestSlaveTopicRoutedWithoutMaster(t *testing.T) {
	c := startCluster(t, nil)
	ns2, err := namesrv.New(namesrv.Config{
		Addr:    "127.0.0.1:0",
		Namesrv: config.NamesrvConfig{KVConfigPath: filepath.Join(c.dir, "kvConfig2.json")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ns2.Shutdown(ctx)
	})
	s := c.startSlaveWith(t, func(bc *config.BrokerConfig) { bc.NamesrvAddr = c.nsAddr + ";" + ns2.Addr() })

	const topic = "RoutedBySlave"
	start := time.Now()
	c.changeMaster(topic, "RoutedG", 1)
	waitFor(t, 10*time.Second, "the second NameServer to route the topic to the slave", func() bool {
		return slices.Contains(c.routeAddrs(ns2.Addr(), topic), s.Addr())
	})
	t.Logf("the slave's NameServer routes the topic %v after its creation on the master", time.Since(start))

	c.stopBroker()
	for _, ns := range []string{c.nsAddr, ns2.Addr()} {
		waitFor(t, 10*time.Second, "the route to the slave after the master stopped", func() bool {
			addrs := c.routeAddrs(ns, topic)
			return len(addrs) == 1 && addrs[0] == s.Addr()
		})
	}
}
