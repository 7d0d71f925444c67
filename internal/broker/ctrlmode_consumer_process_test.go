package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// The bound on what a consumer group replays after a fail-over. The
// official Go client commits its offsets every 5 s (internal/client.go
// _PersistOffsetInterval, UPDATE_CONSUMER_OFFSET one way); a slave copies
// a rocketd master's consumer offsets every 500 ms (role.slaveSync), so a
// commit reaches the slave that the controller promotes at most one poll
// and a round trip after it was made. The offset the new master holds is
// therefore at least the one the consumer had reached goCommitInterval +
// slaveSyncPeriod before the kill; what the group consumed before that is
// never consumed again. consumeSlack covers a commit delayed on the busy
// machine (the client's ticker, the one-way request, the poll's round
// trip).
const (
	goCommitInterval = 5 * time.Second
	slaveSyncPeriod  = 500 * time.Millisecond
	consumeSlack     = 2 * time.Second
	replayBound      = goCommitInterval + slaveSyncPeriod + consumeSlack
)

// consumed records what a consumer group consumed: per message (queue and
// queue offset on the broker set, identical on every replica) the times
// it was consumed, and the bodies.
type consumed struct {
	mu     sync.Mutex
	times  map[string][]time.Time // "queueId/queueOffset" -> consumption times
	bodies map[string]time.Time   // body -> first consumption
	first  time.Time
}

func newConsumed() *consumed {
	return &consumed{times: map[string][]time.Time{}, bodies: map[string]time.Time{}}
}

func (c *consumed) add(msgs []*primitive.MessageExt) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first.IsZero() {
		c.first = now
	}
	for _, m := range msgs {
		k := fmt.Sprintf("%d/%d", m.Queue.QueueId, m.QueueOffset)
		c.times[k] = append(c.times[k], now)
		if _, ok := c.bodies[string(m.Body)]; !ok {
			c.bodies[string(m.Body)] = now
		}
	}
}

func (c *consumed) since() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first.IsZero() {
		return 0
	}
	return time.Since(c.first)
}

// at is when body was first consumed (false: never).
func (c *consumed) at(body string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.bodies[body]
	return at, ok
}

func (c *consumed) hasAll(acked map[string]bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for b := range acked {
		if _, ok := c.bodies[b]; !ok {
			return false
		}
	}
	return true
}

// replays checks the bound: a message consumed more than once was first
// consumed at most replayBound before the kill. It returns how many
// messages were consumed twice, how many were consumed in the bound's
// window (from replayBound before the kill on), and how long before the
// kill the earliest replayed message was first consumed (span).
func (c *consumed) replays(t *testing.T, group string, killedAt time.Time) (dups, inWindow int, span time.Duration) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	from := killedAt.Add(-replayBound)
	for k, ts := range c.times {
		if !ts[0].Before(from) {
			inWindow++
		}
		if len(ts) < 2 {
			continue
		}
		dups++
		span = max(span, killedAt.Sub(ts[0]))
		if ts[0].Before(from) {
			t.Errorf("%s: message %s consumed again after the fail-over although first consumed %v before the kill (bound %v)",
				group, k, killedAt.Sub(ts[0]), replayBound)
		}
	}
	return dups, inWindow, span
}

// pushConsumer starts the official Go push consumer of group on topic
// (client instance instance, from the first offset), recording into rec.
func (c *ctrlCluster) pushConsumer(t *testing.T, group, instance, topic string, rec *consumed) interface{ Shutdown() error } {
	t.Helper()
	pc, err := consumer.NewPushConsumer(consumer.WithNameServer([]string{c.nsAddr}), consumer.WithGroupName(group),
		consumer.WithInstance(instance), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			rec.add(msgs)
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	return pc
}

// tableHas asks addr for a whole metadata table (GET_ALL_TOPIC_CONFIG,
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG) and reports whether it names name.
func (c *ctrlCluster) tableHas(addr string, code protocol.RequestCode, name string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(code, nil, nil))
	return err == nil && r.Code == protocol.Success && bytes.Contains(r.Body, []byte(`"`+name+`"`))
}

// routedMaster reports whether the NameServer routes topic to addr as the
// broker set's master (brokerId 0).
func (c *ctrlCluster) routedMaster(topic, addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := c.rc.Invoke(ctx, c.nsAddr, remoting.NewRequest(protocol.GetRouteinfoByTopic,
		protocol.Ext(&protocol.GetRouteInfoRequestHeader{Topic: topic}), nil))
	var route protocol.TopicRouteData
	if err != nil || r.Code != protocol.Success || protocol.UnmarshalFastJSON(r.Body, &route) != nil || len(route.BrokerDatas) != 1 {
		return false
	}
	return route.BrokerDatas[0].BrokerAddrs[0] == addr
}

// TestControllerModeConsumersContinue: issue 17 item 4. Three
// controllers, a NameServer and a broker set of three; the official Go
// client produces and two push consumer groups consume. A topic and a
// subscription group are created on the master (UPDATE_AND_CREATE_TOPIC,
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP) and a delay-level message is sent;
// then the master is SIGKILLed under load. Group "live" keeps its
// consumer: it continues on the new master. Group "restarted" loses its
// consumer at the kill (shut down while its commit can only go to the
// dead master) and a new consumer of the group starts after the fail-over
// from the offsets the new master holds, which it copied as a slave.
// Both groups consume every acknowledged message at least once, and a
// message consumed twice was first consumed at most replayBound (the Go
// client's 5 s commit interval + the slave's 500 ms sync period + 2 s
// slack) before the kill. The topic and the group exist on the new master
// and the delay-level message is delivered by it, after its delay.
func TestControllerModeConsumersContinue(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	if raceEnabled {
		// The Go client's consumers race with themselves (race_on_test.go).
		proc.RerunWithoutRace(t)
		return
	}
	rlog.SetLogLevel("error")
	c := startCtrlCluster(t)
	first := c.setOfThree(t)

	const (
		topic      = "CtrlConsumeTopic"
		adminTopic = "CtrlAdminTopic"
		adminGroup = "CtrlAdminGroup"
		liveGroup  = "ctrl_live_cg"
		restGroup  = "ctrl_restarted_cg"
	)
	c.createTopic(t, first, topic)
	// mqadmin updateTopic and updateSubGroup against the master.
	c.createTopic(t, first, adminTopic)
	gc := protocol.SubscriptionGroupConfig{GroupName: adminGroup, ConsumeEnable: true, ConsumeBroadcastEnable: true,
		RetryQueueNums: 1, RetryMaxTimes: 7, WhichBrokerWhenConsumeSlowly: 1}
	body, err := protocol.MarshalFastJSON(&gc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	r, err := c.rc.Invoke(ctx, first.addr, remoting.NewRequest(protocol.UpdateAndCreateSubscriptionGroup, nil, body))
	cancel()
	if err != nil || r.Code != protocol.Success {
		t.Fatalf("create subscription group: %v %+v", err, r)
	}

	live, rest := newConsumed(), newConsumed()
	lc := c.pushConsumer(t, liveGroup, "live", topic, live)
	defer func() { _ = lc.Shutdown() }()
	rc1 := c.pushConsumer(t, restGroup, "restarted-1", topic, rest)
	p := c.goProducer(t)
	load := startLoad(p, topic)
	defer load.close()
	// Both groups consumed (and so committed, the first commit 10 s after
	// the client starts, then every 5 s) for a while; the slaves copied
	// the group.
	wait.For(t, 90*time.Second, "both groups consuming for 20 s", func() bool {
		return live.since() >= 20*time.Second && rest.since() >= 20*time.Second && load.count() >= 1000
	})
	for _, b := range c.brokers[1:] {
		wait.For(t, 30*time.Second, b.name+" copies the subscription group", func() bool {
			return c.tableHas(b.addr, protocol.GetAllSubscriptionGroupConfig, adminGroup)
		})
	}

	// A delay-level message (level 3: 10 s) just before the kill.
	delayed := primitive.NewMessage(topic, []byte("delayed-level-3"))
	delayed.WithDelayTimeLevel(3)
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	sr, err := p.SendSync(ctx, delayed)
	cancel()
	if err != nil || sr.Status != primitive.SendOK {
		t.Fatalf("send the delayed message: %v %+v", err, sr)
	}
	delayedSent := time.Now()

	first.p.Kill(t)
	load.markKill()
	killedAt := time.Now()
	before := load.count()
	// The restarted group's consumer goes away: its last commit (on
	// shutdown) can only reach the dead master.
	_ = rc1.Shutdown()
	newMaster := c.waitNewMaster(t, first, 2)
	t.Logf("new master %s elected %v after the kill", newMaster.name, load.sinceKill())
	// The group's new consumer starts once the NameServer routes the new
	// master (a consumer started in between finds no broker to ask for
	// its offsets and tries again at its next rebalance).
	wait.For(t, 30*time.Second, "the NameServer to route the new master", func() bool {
		return c.routedMaster(topic, newMaster.addr)
	})
	rc2 := c.pushConsumer(t, restGroup, "restarted-2", topic, rest)
	defer func() { _ = rc2.Shutdown() }()
	wait.For(t, 90*time.Second, "the producer to resume on the new master", func() bool { return load.count() >= before+300 })
	acked := load.close()
	acked["delayed-level-3"] = true
	t.Logf("%d acknowledged before the kill, %d in all", before, len(acked))

	wait.For(t, 120*time.Second, "both groups to consume every acknowledged message", func() bool {
		return live.hasAll(acked) && rest.hasAll(acked)
	})
	for _, g := range []struct {
		name string
		rec  *consumed
	}{{liveGroup, live}, {restGroup, rest}} {
		dups, inWindow, span := g.rec.replays(t, g.name, killedAt)
		t.Logf("%s: %d messages consumed, %d of them twice (the earliest first consumed %v before the kill); "+
			"%d consumed from %v before the kill on", g.name, len(g.rec.times), dups, span.Round(time.Millisecond), inWindow, replayBound)
	}

	// The delay-level message was delivered to both groups after its
	// delay (level 3: 10 s), by the new master: the old one was dead by then.
	for _, g := range []*consumed{live, rest} {
		at, _ := g.at("delayed-level-3")
		if d := at.Sub(delayedSent); d < 9500*time.Millisecond || !at.After(killedAt) {
			t.Errorf("the delayed message was consumed %v after it was sent (delay 10 s), %v after the kill", d, at.Sub(killedAt))
		}
	}

	// The topic and the group created on the old master exist on the new one.
	if !c.tableHas(newMaster.addr, protocol.GetAllTopicConfig, adminTopic) {
		t.Errorf("topic %s missing on the new master", adminTopic)
	}
	if !c.tableHas(newMaster.addr, protocol.GetAllSubscriptionGroupConfig, adminGroup) {
		t.Errorf("subscription group %s missing on the new master", adminGroup)
	}
}
