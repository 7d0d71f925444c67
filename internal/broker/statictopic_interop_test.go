package broker_test

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// mqadmin runs Apache RocketMQ 5.2.0's mqadmin with args against the
// cluster's NameServer and returns its output.
func (c *cluster) mqadmin(jars string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	home := c.t.TempDir()
	all := append([]string{"-Xmx256m", "-Duser.home=" + home, "-Djava.io.tmpdir=" + home,
		"-Drocketmq.client.logRoot=" + home, "-cp", filepath.Join(jars, "*"),
		"org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)
	all = append(all, "-n", c.nsAddr)
	out, err := exec.CommandContext(ctx, "java", all...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("mqadmin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// staticMapping reads the broker's mapping of topic (GET_TOPIC_CONFIG
// lo=true, as mqadmin reads it).
func (c *cluster) staticMapping(topic string) *protocol.TopicQueueMappingDetail {
	c.t.Helper()
	r := c.invoke(c.b.Addr(), protocol.GetTopicConfig, &protocol.GetTopicConfigRequestHeader{Topic: topic, Lo: protocol.Some(true)}, nil)
	if r.Code != protocol.Success {
		c.t.Fatalf("GET_TOPIC_CONFIG %s: %d %s", topic, r.Code, r.Remark)
	}
	var v protocol.TopicConfigAndQueueMapping
	if err := protocol.UnmarshalFastJSON(r.Body, &v); err != nil {
		c.t.Fatal(err)
	}
	return v.MappingDetail
}

// TestStaticTopicMQAdminGoClient: mqadmin 5.2.0 updateStaticTopic creates
// a static topic of 2 logic queues on the one broker group; the official
// Go client sends to it and consumes everything; remappingStaticTopic
// onto the same broker moves to a new epoch and the queue offsets the
// sends get keep growing from where they were.
func TestStaticTopicMQAdminGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a JVM")
	}
	jars := javaJars(t)
	c := startCluster(t, nil)
	cluster := c.brokerConfig().BrokerClusterName
	topic := uniq(t, "static")

	out := c.mqadmin(jars, "updateStaticTopic", "-c", cluster, "-t", topic, "-qn", "2")
	if !strings.Contains(out, "The new mapping data is written to file") {
		t.Fatalf("updateStaticTopic:\n%s", out)
	}
	d := c.staticMapping(topic)
	if d == nil || d.TotalQueues != 2 || len(d.HostedQueues) != 2 || d.Bname != c.brokerConfig().BrokerName {
		t.Fatalf("mapping after updateStaticTopic: %+v", d)
	}
	epoch := d.Epoch
	c.waitRoute(topic, 2)

	p := c.newProducer()
	last := map[int]int64{} // logic queue -> last offset a send got
	send := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", prefix, i))))
			if err != nil {
				t.Fatalf("send %s-%d: %v", prefix, i, err)
			}
			q := res.MessageQueue.QueueId
			if q < 0 || q > 1 {
				t.Fatalf("send %s-%d went to queue %d of a 2-queue static topic", prefix, i, q)
			}
			if prev, ok := last[q]; ok && res.QueueOffset <= prev {
				t.Fatalf("send %s-%d: queue %d offset %d after %d", prefix, i, q, res.QueueOffset, prev)
			}
			last[q] = res.QueueOffset
		}
	}
	send("before", 20)
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 60*time.Second, "the 20 messages", func() bool { return rec.len() == 20 })

	out = c.mqadmin(jars, "remappingStaticTopic", "-c", cluster, "-t", topic)
	if !strings.Contains(out, "The old mapping data is written to file") {
		t.Fatalf("remappingStaticTopic:\n%s", out)
	}
	if d = c.staticMapping(topic); d.Epoch <= epoch || len(d.HostedQueues) != 2 {
		t.Fatalf("mapping after remapping: epoch %d (was %d) %+v", d.Epoch, epoch, d)
	}
	send("after", 10)
	wait.For(t, 60*time.Second, "all 30 messages", func() bool { return rec.len() == 30 })
	for i := range 10 {
		if _, ok := rec.get(fmt.Sprintf("after-%d", i)); !ok {
			t.Fatalf("after-%d not consumed", i)
		}
	}
}

// startSecondBroker starts broker group brokerName of the cluster's
// cluster on the same NameServer (its own store), stopped at cleanup.
func (c *cluster) startSecondBroker(brokerName string) *broker.Broker {
	c.t.Helper()
	bc := c.brokerConfig()
	bc.BrokerName = brokerName
	bc.StorePathRootDir = filepath.Join(c.dir, "store-"+brokerName)
	b, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", GRPCListenAddr: "127.0.0.1:0"})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			c.t.Errorf("%s shutdown: %v", brokerName, err)
		}
		c.rc.CloseConn(b.Addr())
	})
	wait.For(c.t, 10*time.Second, brokerName+" registration", func() bool {
		r := c.invoke(c.nsAddr, protocol.GetBrokerClusterInfo, nil, nil)
		return r.Code == protocol.Success && strings.Contains(string(r.Body), b.Addr())
	})
	return b
}

// createStaticOn sends UPDATE_AND_CREATE_STATIC_TOPIC with broker d.Bname's
// part of the mapping and queues physical queues, as mqadmin
// updateStaticTopic / remappingStaticTopic do.
func (c *cluster) createStaticOn(addr string, d *protocol.TopicQueueMappingDetail, queues int32) {
	c.t.Helper()
	body, err := protocol.MarshalFastJSON(d)
	if err != nil {
		c.t.Fatal(err)
	}
	h := protocol.CreateTopicRequestHeader{Topic: d.Topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: 6, TopicFilterType: protocol.SingleTag, TopicSysFlag: protocol.Some(int32(0)), Force: protocol.Some(false)}
	if r := c.invoke(addr, protocol.UpdateAndCreateStaticTopic, &h, body); r.Code != protocol.Success {
		c.t.Fatalf("UPDATE_AND_CREATE_STATIC_TOPIC on %s: %d %s", d.Bname, r.Code, r.Remark)
	}
}

// logicQueues is what Java's MQClientInstance builds for a static topic
// from its route (topicRouteData2EndpointsForStaticTopic): each logic
// queue at the broker whose registered currIdMap names it, the newest
// epoch winning. The Go client does not read topicQueueMappingByBroker;
// the test hands these queues to its producer (a queue selector) and
// push consumer (an allocation strategy).
func (c *cluster) logicQueues(topic string) []*primitive.MessageQueue {
	c.t.Helper()
	r := c.invoke(c.nsAddr, protocol.GetRouteinfoByTopic, &protocol.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: true}, nil)
	if r.Code != protocol.Success {
		c.t.Fatalf("route of %s: %d %s", topic, r.Code, r.Remark)
	}
	var route protocol.TopicRouteData
	if err := protocol.UnmarshalFastJSON(r.Body, &route); err != nil {
		c.t.Fatal(err)
	}
	type at struct {
		bname string
		epoch int64
	}
	leaders := map[int32]at{}
	for bname, info := range route.TopicQueueMappingByBroker {
		for id := range info.CurrIDMap {
			if cur, ok := leaders[id]; !ok || info.Epoch > cur.epoch {
				leaders[id] = at{bname, info.Epoch}
			}
		}
	}
	var mqs []*primitive.MessageQueue
	for _, id := range slices.Sorted(maps.Keys(leaders)) {
		mqs = append(mqs, &primitive.MessageQueue{Topic: topic, BrokerName: leaders[id].bname, QueueId: int(id)})
	}
	return mqs
}

// logicSelector sends each message to the next logic queue of a list
// the test sets.
type logicSelector struct {
	mu  sync.Mutex
	mqs []*primitive.MessageQueue
	n   int
}

func (s *logicSelector) set(mqs []*primitive.MessageQueue) {
	s.mu.Lock()
	s.mqs = mqs
	s.mu.Unlock()
}

func (s *logicSelector) Select(*primitive.Message, []*primitive.MessageQueue, string) *primitive.MessageQueue {
	s.mu.Lock()
	defer s.mu.Unlock()
	mq := s.mqs[s.n%len(s.mqs)]
	s.n++
	return mq
}

// logicStrategy allocates the logic queues mqs of topic to a group's one
// consumer: the Go client knows no static topics, and its own allocation
// would hand out the route's physical queues. The other topic every
// clustering consumer rebalances, its group's %RETRY% topic, keeps its own
// queues: given topic's queues there, the client would run a second pull
// loop on them under the retry topic's rebalance. No route lookups here: the
// client calls this on its own goroutines, where a failed lookup cannot
// fail the test.
func logicStrategy(topic string, mqs []*primitive.MessageQueue) consumer.Option {
	return consumer.WithStrategy(func(group, cid string, all []*primitive.MessageQueue, cids []string) []*primitive.MessageQueue {
		if len(all) == 0 || all[0].Topic != topic {
			return consumer.AllocateByAveragely(group, cid, all, cids)
		}
		out := make([]*primitive.MessageQueue, len(mqs))
		for i, mq := range mqs {
			cp := *mq
			out[i] = &cp
		}
		return out
	})
}

// TestStaticTopicTwoBrokerGroups: a static topic of 2 logic queues over two
// rocketd broker groups (logic queue 0 on broker-a, 1 on broker-b), its
// mapping in the route (topicQueueMappingByBroker); the official Go client
// produces to the logic queues and a push consumer consumes them all and
// commits its offsets, which QUERY_CONSUMER_OFFSET reads back. Then logic
// queue 1 moves to broker-a (a new item from logic offset 10000, as
// remappingStaticTopic leaves it); new sends land on broker-a, and the
// Go client's pulls through broker-a read the logic queue from its start:
// the old item is pulled on broker-b (forwarded), its end moves on to the
// new item; commits and queries through broker-a reach the item holding
// the offset on either broker.
func TestStaticTopicTwoBrokerGroups(t *testing.T) {
	c := startCluster(t, nil)
	bB := c.startSecondBroker("broker-b")
	aAddr, bAddr := c.b.Addr(), bB.Addr()
	topic := uniq(t, "static2")
	item := func(gen, phys int32, bname string, logic, end int64) protocol.LogicQueueMappingItem {
		return protocol.LogicQueueMappingItem{Gen: gen, QueueID: phys, Bname: bname, LogicOffset: logic, EndOffset: end, TimeOfStart: -1, TimeOfEnd: -1}
	}
	detail := func(bname string, epoch int64, hosted map[int32][]protocol.LogicQueueMappingItem) *protocol.TopicQueueMappingDetail {
		return &protocol.TopicQueueMappingDetail{Topic: topic, Scope: protocol.MetadataScopeGlobal, TotalQueues: 2, Bname: bname, Epoch: epoch,
			CurrIDMap: map[int32]int32{}, HostedQueues: hosted}
	}
	epoch := time.Now().UnixMilli()
	c.createStaticOn(aAddr, detail("broker-a", epoch, map[int32][]protocol.LogicQueueMappingItem{0: {item(0, 0, "broker-a", 0, -1)}}), 1)
	c.createStaticOn(bAddr, detail("broker-b", epoch, map[int32][]protocol.LogicQueueMappingItem{1: {item(0, 0, "broker-b", 0, -1)}}), 1)
	var mqs []*primitive.MessageQueue
	wait.For(t, 10*time.Second, "both logic queues in the route", func() bool {
		mqs = c.logicQueues(topic)
		return len(mqs) == 2
	})
	if mqs[0].BrokerName != "broker-a" || mqs[1].BrokerName != "broker-b" {
		t.Fatalf("logic queues from the route: %v", mqs)
	}

	sel := &logicSelector{}
	sel.set(mqs)
	p := c.newProducer(producer.WithQueueSelector(sel))
	// next logic offset of each logic queue
	nextOffset := map[int]int64{0: 0, 1: 0}
	send := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", prefix, i))))
			if err != nil {
				t.Fatalf("send %s-%d: %v", prefix, i, err)
			}
			q := res.MessageQueue.QueueId
			if res.QueueOffset != nextOffset[q] {
				t.Fatalf("send %s-%d: logic queue %d offset %d, want %d", prefix, i, q, res.QueueOffset, nextOffset[q])
			}
			nextOffset[q]++
		}
	}
	send("before", 20)

	group := uniq(t, "cg")
	rec := newReceived()
	pc := c.newPushConsumer(group, topic, "*", rec, logicStrategy(topic, mqs))
	wait.For(t, 60*time.Second, "the 20 messages", func() bool { return rec.len() == 20 })
	query := func(logicQueue int32) (int64, int32) {
		r := c.invoke(aAddr, protocol.QueryConsumerOffset, &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: logicQueue}, nil)
		var h protocol.OffsetResponseHeader
		_ = h.Decode(r.ExtFields)
		return h.Offset, r.Code
	}
	queryAt := func(addr string, logicQueue int32) int64 {
		r := c.invoke(addr, protocol.QueryConsumerOffset, &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: logicQueue}, nil)
		var h protocol.OffsetResponseHeader
		_ = h.Decode(r.ExtFields)
		if r.Code != protocol.Success {
			return -1
		}
		return h.Offset
	}
	wait.For(t, 30*time.Second, "the consumer's offsets committed", func() bool {
		return queryAt(aAddr, 0) == 10 && queryAt(bAddr, 1) == 10
	})
	if err := pc.Shutdown(); err != nil {
		t.Fatal(err)
	}

	// Logic queue 1 moves to broker-a: b's item ends at 10, a's starts at
	// logic 10000 on its physical queue 1.
	epoch2 := epoch + 1000
	moved := []protocol.LogicQueueMappingItem{item(0, 0, "broker-b", 0, 10), item(1, 1, "broker-a", 10000, -1)}
	c.createStaticOn(aAddr, detail("broker-a", epoch2, map[int32][]protocol.LogicQueueMappingItem{0: {item(0, 0, "broker-a", 0, -1)}, 1: moved}), 2)
	c.createStaticOn(bAddr, detail("broker-b", epoch2, map[int32][]protocol.LogicQueueMappingItem{1: moved}), 1)
	wait.For(t, 10*time.Second, "logic queue 1 led by broker-a in the route", func() bool {
		mqs = c.logicQueues(topic)
		return len(mqs) == 2 && mqs[1].BrokerName == "broker-a"
	})
	sel.set(mqs)
	if r := c.invoke(bAddr, protocol.QueryConsumerOffset, &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 1}, nil); r.Code != protocol.NotLeaderForQueue {
		t.Fatalf("broker-b still answers for logic queue 1: %d %s", r.Code, r.Remark)
	}
	// The committed offset of logic queue 1 lives on broker-b's item: a
	// query through broker-a finds it there.
	if off, code := query(1); code != protocol.Success || off != 10 {
		t.Fatalf("logic queue 1's offset through broker-a: %d (code %d), want 10", off, code)
	}
	nextOffset[1] = 10000 // broker-a's item of logic queue 1
	send("after", 4)      // 2 to each logic queue

	// A new group of the official Go client reads both logic queues from
	// their start through their leader, broker-a: logic queue 1's old item
	// is pulled on broker-b (forwarded), its end moves on to the new item.
	// (The Go client ignores offsetDelta, so its own commits past the
	// first item would be physical offsets; this group's are not checked.)
	rec2 := newReceived()
	group2 := uniq(t, "cg2")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the new group received (body@broker/queue/offset): %s", rec2.describe())
		}
	})
	c.newPushConsumer(group2, topic, "*", rec2, logicStrategy(topic, mqs))
	wait.For(t, 60*time.Second, "all 24 messages by the new group", func() bool { return rec2.len() == 24 })
	for _, body := range []string{"before-0", "before-19", "after-0", "after-3"} {
		if _, ok := rec2.get(body); !ok {
			t.Fatalf("%s not consumed by the new group", body)
		}
	}

	// The same walk by hand: logic offsets, offsetDelta, the move to the
	// next item.
	var bodies []string
	next := int64(0)
	for _, want := range []struct {
		code        int32
		n           int
		next, delta int64
	}{
		{protocol.Success, 10, 10, 0},
		{protocol.PullRetryImmediately, 0, 10000, 10000},
		{protocol.Success, 2, 10002, 10000},
		{protocol.PullNotFound, 0, 10002, 10000},
	} {
		h := protocol.PullMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 1, QueueOffset: next, MaxMsgNums: 32,
			SysFlag: protocol.PullFlagSubscription, Subscription: "*"}
		r := c.invoke(aAddr, protocol.PullMessage, &h, nil)
		var rh protocol.PullMessageResponseHeader
		if err := rh.Decode(r.ExtFields); err != nil {
			t.Fatal(err)
		}
		var got []string
		var sc message.Scanner
		sc.Reset(r.Body)
		for sc.Next() {
			got = append(got, string(sc.Record().Body))
		}
		if r.Code != want.code || len(got) != want.n || rh.NextBeginOffset != want.next || rh.OffsetDelta.Value != want.delta {
			t.Fatalf("pull logic queue 1 at %d: %d %s, %d messages, %+v; want %+v", next, r.Code, r.Remark, len(got), rh, want)
		}
		bodies = append(bodies, got...)
		next = rh.NextBeginOffset
	}
	want := []string{}
	for i := range 20 {
		if i%2 == 1 {
			want = append(want, fmt.Sprintf("before-%d", i))
		}
	}
	want = append(want, "after-1", "after-3")
	if !slices.Equal(bodies, want) {
		t.Fatalf("logic queue 1 through broker-a:\n got %v\nwant %v", bodies, want)
	}

	// Commits through broker-a go to the item holding the offset.
	commit := func(off int64) {
		t.Helper()
		r := c.invoke(aAddr, protocol.UpdateConsumerOffset, &protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: 1, CommitOffset: off}, nil)
		if r.Code != protocol.Success {
			t.Fatalf("commit %d: %d %s", off, r.Code, r.Remark)
		}
	}
	commit(7)
	if off, code := query(1); code != protocol.Success || off != 7 {
		t.Fatalf("after commit(7): %d (code %d)", off, code)
	}
	commit(10002)
	if off, code := query(1); code != protocol.Success || off != 10002 {
		t.Fatalf("after commit(10002): %d (code %d)", off, code)
	}
	qh := &protocol.QueueRequestHeader{Topic: topic, QueueID: 1}
	offsetOf := func(code int32) int64 {
		t.Helper()
		r := c.invoke(aAddr, code, qh, nil)
		var h protocol.OffsetResponseHeader
		if r.Code != protocol.Success || h.Decode(r.ExtFields) != nil {
			t.Fatalf("request %d: %d %s", code, r.Code, r.Remark)
		}
		return h.Offset
	}
	if got := offsetOf(protocol.GetMaxOffset); got != 10002 {
		t.Fatalf("max offset of logic queue 1: %d", got)
	}
	if got := offsetOf(protocol.GetMinOffset); got != 0 {
		t.Fatalf("min offset of logic queue 1: %d", got)
	}
}

// TestStaticTopicSlaveCopiesMapping: GET_ALL_TOPIC_CONFIG carries the
// static topics' mappings (Java 5.x's TopicConfigAndMappingSerializeWrapper:
// topicQueueMappingDetailMap, mappingDataVersion) and a slave copies them
// (SlaveSynchronize.syncTopicConfig): a new mapping, a newer epoch and the
// topic's deletion reach it.
func TestStaticTopicSlaveCopiesMapping(t *testing.T) {
	c := startCluster(t, nil)
	slave := c.startSlaveWith(t, nil)
	topic := uniq(t, "staticslave")
	detail := func(epoch int64) *protocol.TopicQueueMappingDetail {
		return &protocol.TopicQueueMappingDetail{Topic: topic, Scope: protocol.MetadataScopeGlobal, TotalQueues: 1, Bname: "broker-a", Epoch: epoch,
			CurrIDMap: map[int32]int32{}, HostedQueues: map[int32][]protocol.LogicQueueMappingItem{
				0: {{QueueID: 0, Bname: "broker-a", EndOffset: -1, TimeOfStart: -1, TimeOfEnd: -1}}}}
	}
	slaveEpoch := func() int64 {
		r := c.invoke(slave.Addr(), protocol.GetTopicConfig, &protocol.GetTopicConfigRequestHeader{Topic: topic, Lo: protocol.Some(true)}, nil)
		if r.Code != protocol.Success {
			return -1
		}
		var v protocol.TopicConfigAndQueueMapping
		if err := protocol.UnmarshalFastJSON(r.Body, &v); err != nil || v.MappingDetail == nil {
			return -1
		}
		return v.MappingDetail.Epoch
	}
	c.createStaticOn(c.b.Addr(), detail(1000), 1)
	wait.For(t, 10*time.Second, "the mapping on the slave", func() bool { return slaveEpoch() == 1000 })
	c.createStaticOn(c.b.Addr(), detail(2000), 1)
	wait.For(t, 10*time.Second, "the newer epoch on the slave", func() bool { return slaveEpoch() == 2000 })
	if r := c.invoke(c.b.Addr(), protocol.DeleteTopicInBroker, &protocol.TopicRequestHeader{Topic: topic}, nil); r.Code != protocol.Success {
		t.Fatalf("delete: %d %s", r.Code, r.Remark)
	}
	wait.For(t, 10*time.Second, "the mapping gone from the slave", func() bool { return slaveEpoch() == -1 })
}
