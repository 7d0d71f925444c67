package broker_test

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
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
	wait.For(t, 15*time.Second, "the first changes on the slave", func() bool { return c.slaveHas(s.Addr(), "FastT1", "FastG1", 11) })
	first := time.Since(masterUp)

	for i, want := range []int64{22, 33, 44} {
		topic, group := uniq(t, "FastT"), uniq(t, "FastG")
		start := time.Now()
		c.changeMaster(topic, group, want)
		wait.For(t, 10*time.Second, "the changes on the slave", func() bool { return c.slaveHas(s.Addr(), topic, group, want) })
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
	wait.For(t, 10*time.Second, "the second NameServer to route the topic to the slave", func() bool {
		return slices.Contains(c.routeAddrs(ns2.Addr(), topic), s.Addr())
	})
	t.Logf("the slave's NameServer routes the topic %v after its creation on the master", time.Since(start))

	c.stopBroker()
	for _, ns := range []string{c.nsAddr, ns2.Addr()} {
		wait.For(t, 10*time.Second, "the route to the slave after the master stopped", func() bool {
			addrs := c.routeAddrs(ns, topic)
			return len(addrs) == 1 && addrs[0] == s.Addr()
		})
	}
}

// javaLikeMaster is a master that answers the metadata copy requests as
// Java's AdminBrokerProcessor does: always the whole table, no rocketd
// version keys. It records when each GET_ALL_TOPIC_CONFIG arrived and with
// which ext fields.
type javaLikeMaster struct {
	srv *remoting.Server
	mu  sync.Mutex
	at  []time.Time
	ext []map[string]string
}

func startJavaLikeMaster(t *testing.T) *javaLikeMaster {
	t.Helper()
	m := &javaLikeMaster{srv: remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})}
	body := func(s string) remoting.HandlerFunc {
		return func(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
			r := remoting.NewResponse(protocol.Success, "")
			r.Body = []byte(s)
			return r
		}
	}
	topics := body(`{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{` +
		`"JavaTopic":{"attributes":{},"order":false,"perm":6,"readQueueNums":2,"topicFilterType":"SINGLE_TAG","topicName":"JavaTopic","topicSysFlag":0,"writeQueueNums":2}},` +
		`"topicQueueMappingDetailMap":{},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000}}`)
	m.srv.Handle(protocol.GetAllTopicConfig, nil, func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		m.mu.Lock()
		m.at = append(m.at, time.Now())
		m.ext = append(m.ext, maps.Clone(req.ExtFields))
		m.mu.Unlock()
		return topics(c, req)
	})
	m.srv.Handle(protocol.GetAllConsumerOffset, nil, body(`{"dataVersion":{"counter":0,"timestamp":1700000000000},"offsetTable":{"JavaTopic@JavaGroup":{0:3,1:5}}}`))
	m.srv.Handle(protocol.GetAllDelayOffset, nil, body(`{"dataVersion":{"counter":0,"timestamp":1700000000000},"offsetTable":{1:4}}`))
	m.srv.Handle(protocol.GetAllSubscriptionGroupConfig, nil, body(`{"dataVersion":{"counter":2,"timestamp":1700000000000},"forbiddenTable":{},"subscriptionGroupTable":{`+
		`"JavaGroup":{"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,"groupName":"JavaGroup","notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}}}`))
	if err := m.srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.srv.Shutdown(ctx)
	})
	return m
}

// TestSlaveOfJavaLikeMaster: a rocketd slave whose master answers as Java
// does (no versions) copies the whole tables, never claims a version in
// its requests, and polls at the full-copy interval, not every
// SlaveSyncInterval.
func TestSlaveOfJavaLikeMaster(t *testing.T) {
	c := startCluster(t, nil)
	m := startJavaLikeMaster(t)
	const group = "JavaLikeGroup"
	body := (&protocol.RegisterBrokerBody{FilterServerList: []string{}}).MarshalFastJSON()
	h := protocol.RegisterBrokerRequestHeader{BrokerName: group, BrokerAddr: m.srv.Addr().String(),
		ClusterName: "DefaultCluster", BrokerID: 0, BodyCrc32: protocol.BodyCRC32(body)}
	if r := c.invoke(c.nsAddr, protocol.RegisterBroker, &h, body); r.Code != protocol.Success {
		t.Fatalf("register the Java-like master: %d %s", r.Code, r.Remark)
	}
	const full = time.Second
	bc := c.brokerConfig()
	bc.BrokerName, bc.BrokerID, bc.BrokerRole = group, 1, config.Slave
	bc.StorePathRootDir = filepath.Join(c.dir, "slave-store")
	s, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0",
		SlaveSyncInterval: 50 * time.Millisecond, SlaveFullSyncInterval: full})
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
	wait.For(t, 10*time.Second, "the Java-like master's tables on the slave", func() bool { return c.slaveHas(s.Addr(), "JavaTopic", "JavaGroup", 5) })
	wait.For(t, 10*time.Second, "three copies", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.at) >= 3
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, ext := range m.ext {
		if _, ok := ext["rocketdKnownStamp"]; ok {
			t.Errorf("request %d claims a version the master never gave: %v", i, ext)
		}
	}
	for i := 1; i < len(m.at); i++ {
		// The timer runs from the end of a round: a gap is never shorter.
		if gap := m.at[i].Sub(m.at[i-1]); gap < full {
			t.Errorf("copies %d and %d %v apart, want >= %v (full-copy interval)", i-1, i, gap, full)
		}
	}
}
