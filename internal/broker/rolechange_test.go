package broker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/broker/role"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// brokerAddrs is the NameServer's brokerId -> address table of the
// broker group that serves topic.
func (c *cluster) brokerAddrs(topic string) map[int64]string {
	c.t.Helper()
	r := c.invoke(c.nsAddr, protocol.GetRouteinfoByTopic, &protocol.GetRouteInfoRequestHeader{Topic: topic}, nil)
	var route protocol.TopicRouteData
	if r.Code != protocol.Success || protocol.UnmarshalFastJSON(r.Body, &route) != nil || len(route.BrokerDatas) != 1 {
		return nil
	}
	return route.BrokerDatas[0].BrokerAddrs
}

// sendGo sends n messages through a new official Go client producer and
// returns the store host of each (from the offset message id).
func (c *cluster) sendGo(topic, prefix string, n int) []string {
	c.t.Helper()
	p := c.newProducer()
	defer func() { _ = p.Shutdown() }()
	hosts := make([]string, 0, n)
	for i := range n {
		res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, fmt.Appendf(nil, "%s-%d", prefix, i)))
		if err != nil || res.Status != primitive.SendOK {
			c.t.Fatalf("send %s-%d: %v %v", prefix, i, res, err)
		}
		id, err := primitive.UnmarshalMsgID([]byte(res.OffsetMsgID))
		if err != nil {
			c.t.Fatalf("offset message id %q: %v", res.OffsetMsgID, err)
		}
		hosts = append(hosts, fmt.Sprintf("%s:%d", id.Addr, id.Port))
	}
	return hosts
}

// switchRoles promotes slave (epoch) and makes master its slave.
func switchRoles(t *testing.T, master, slave *broker.Broker, epoch int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := slave.Role().BecomeMaster(ctx, epoch); err != nil {
		t.Fatalf("become master: %v", err)
	}
	if err := master.Role().BecomeSlave(ctx, slave.Addr(), slave.HAServer().Addr().String(), 1, epoch); err != nil {
		t.Fatalf("become slave: %v", err)
	}
}

// TestRoleSwitchAtRuntime: a master/slave pair switches roles without a
// restart, twice. Each time the promoted broker registers as brokerId 0,
// takes the official Go client's sends (their offset message ids name
// it), the demoted one refuses sends with SERVICE_NOT_AVAILABLE and
// replicates the new master's log up to its end, and consumer offsets
// committed on the new master reach the old one.
func TestRoleSwitchAtRuntime(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "RoleSwitch")
	c.createTopic(topic, 2)
	a := c.b
	b := c.startSlave(t)
	for _, h := range c.sendGo(topic, "before", 10) {
		if h != a.Addr() {
			t.Fatalf("sent before the switch to %s, want the master %s", h, a.Addr())
		}
	}
	for i, pair := range []struct {
		master, slave *broker.Broker
	}{{a, b}, {b, a}} {
		epoch := int32(i + 1)
		wait.For(t, 10*time.Second, "the slave to catch up", func() bool {
			return pair.slave.Store().CommitLogMaxOffset() == pair.master.Store().CommitLogMaxOffset()
		})
		end := pair.slave.Store().CommitLogMaxOffset()
		switchRoles(t, pair.master, pair.slave, epoch)
		newMaster, newSlave := pair.slave, pair.master
		// The promoted broker's epoch file: the epoch from the end it
		// took it at.
		if last, ok := newMaster.Store().Epochs().Last(); !ok || last.Epoch != epoch || last.StartOffset != end {
			t.Fatalf("switch %d: last epoch entry %+v, want epoch %d from %d", i, last, epoch, end)
		}
		if r := newMaster.Role(); r.BrokerRole() != config.AsyncMaster || r.BrokerID() != 0 || r.Epoch() != epoch {
			t.Fatalf("switch %d: new master is %s id %d epoch %d", i, r.BrokerRole(), r.BrokerID(), r.Epoch())
		}
		if r := newSlave.Role(); r.BrokerRole() != config.Slave || r.BrokerID() != 1 || r.Epoch() != epoch {
			t.Fatalf("switch %d: new slave is %s id %d epoch %d", i, r.BrokerRole(), r.BrokerID(), r.Epoch())
		}
		// Both registered before the calls returned.
		if got := c.brokerAddrs(topic); got[0] != newMaster.Addr() || got[1] != newSlave.Addr() {
			t.Fatalf("switch %d: NameServer lists %v, want 0=%s 1=%s", i, got, newMaster.Addr(), newSlave.Addr())
		}
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 2, BornTimestamp: time.Now().UnixMilli()}
		if r := c.invoke(newSlave.Addr(), protocol.SendMessage, &h, []byte("to the old master")); r.Code != protocol.ServiceNotAvailable {
			t.Fatalf("switch %d: send to the demoted broker: %d %s, want SERVICE_NOT_AVAILABLE", i, r.Code, r.Remark)
		}
		for _, host := range c.sendGo(topic, fmt.Sprint("after", i), 10) {
			if host != newMaster.Addr() {
				t.Fatalf("switch %d: sent to %s, want the new master %s", i, host, newMaster.Addr())
			}
		}
		uh := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 0, CommitOffset: int64(5 + i)}
		if r := c.invoke(newMaster.Addr(), protocol.UpdateConsumerOffset, &uh, nil); r.Code != protocol.Success {
			t.Fatalf("switch %d: commit offset: %d %s", i, r.Code, r.Remark)
		}
		wait.For(t, 10*time.Second, "the old master to follow the new one", func() bool {
			return newSlave.Store().CommitLogMaxOffset() == newMaster.Store().CommitLogMaxOffset() &&
				newSlave.Store().MaxOffset(topic, 0)+newSlave.Store().MaxOffset(topic, 1) == newMaster.Store().MaxOffset(topic, 0)+newMaster.Store().MaxOffset(topic, 1)
		})
		wait.For(t, 10*time.Second, "the offset on the new slave", func() bool {
			r := c.invoke(newSlave.Addr(), protocol.QueryConsumerOffset, &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 0}, nil)
			var oh protocol.OffsetResponseHeader
			return r.Code == protocol.Success && oh.Decode(r.ExtFields) == nil && oh.Offset == int64(5+i)
		})
	}
	if total := a.Store().MaxOffset(topic, 0) + a.Store().MaxOffset(topic, 1); total != 30 {
		t.Fatalf("%d messages in the topic, want 30", total)
	}
}

// TestRoleChangeConcurrentAndFenced: concurrent BecomeMaster calls of the
// same epoch all succeed and leave one master state; an order with an
// older epoch is refused (StaleEpochError) and changes nothing.
func TestRoleChangeConcurrentAndFenced(t *testing.T) {
	c := startCluster(t, nil)
	s := c.startSlave(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Role().BecomeMaster(ctx, 3)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if r := s.Role(); r.BrokerRole() != config.AsyncMaster || r.BrokerID() != 0 || r.Epoch() != 3 || s.HAServer() == nil {
		t.Fatalf("after concurrent promotions: %s id %d epoch %d", r.BrokerRole(), r.BrokerID(), r.Epoch())
	}
	err := s.Role().BecomeSlave(ctx, c.b.Addr(), c.b.HAServer().Addr().String(), 1, 2)
	var stale *role.StaleEpochError
	if !errors.As(err, &stale) || stale.Epoch != 2 || stale.Current != 3 {
		t.Fatalf("stale demotion: %v, want StaleEpochError", err)
	}
	if s.Role().BrokerRole() != config.AsyncMaster || s.Store().Slave() {
		t.Fatal("a refused demotion changed the role")
	}
	if err := s.Role().BecomeSlave(ctx, c.b.Addr(), "", 1, 3); err == nil {
		t.Fatal("demotion without the master's HA address accepted")
	}
	if err := s.Role().BecomeSlave(ctx, c.b.Addr(), c.b.HAServer().Addr().String(), 0, 3); err == nil {
		t.Fatal("demotion to brokerId 0 accepted")
	}
}

// TestDemotionWithSendsInFlight: senders keep a SYNC_MASTER busy while it
// is demoted. Every answer is SUCCESS (stored and acked by the slave) or a
// refusal (SERVICE_NOT_AVAILABLE once demoted; FLUSH_SLAVE_TIMEOUT or
// SLAVE_NOT_AVAILABLE: not acknowledged), never a lost connection; and
// every acknowledged message is on the slave, whole, when it is promoted.
func TestDemotionWithSendsInFlight(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.BrokerRole = config.SyncMaster })
	topic := uniq(t, "Demote")
	c.createTopic(topic, 4)
	a := c.b
	b := c.startSlave(t)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: -1, BornTimestamp: time.Now().UnixMilli()}
	wait.For(t, 10*time.Second, "SEND_OK with the slave", func() bool {
		return c.invoke(a.Addr(), protocol.SendMessage, &h, []byte("first")).Code == protocol.Success
	})
	type acked struct {
		body   string
		offset int64
	}
	var (
		mu       sync.Mutex
		acks     []acked
		refused  int
		demoted  = make(chan struct{})
		wg       sync.WaitGroup
		failures []string
	)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				body := fmt.Sprintf("g%d-%d", g, i)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				r, err := c.rc.Invoke(ctx, a.Addr(), remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte(body)))
				cancel()
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case r.Code == protocol.Success:
					var sh protocol.SendMessageResponseHeader
					derr := sh.Decode(r.ExtFields)
					_, off, perr := message.ParseOffsetMsgID(sh.MsgID)
					if derr != nil || perr != nil {
						failures = append(failures, fmt.Sprintf("SUCCESS without a message id: %v %v", derr, perr))
					}
					acks = append(acks, acked{body, off})
				case r.Code == protocol.ServiceNotAvailable, r.Code == protocol.FlushSlaveTimeout, r.Code == protocol.SlaveNotAvailable:
					refused++
				default:
					failures = append(failures, fmt.Sprintf("code %d %s", r.Code, r.Remark))
				}
				n := len(acks)
				mu.Unlock()
				select {
				case <-demoted:
					return
				default:
				}
				if n > 5000 {
					return
				}
			}
		}()
	}
	wait.For(t, 10*time.Second, "100 acknowledged sends", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acks) >= 100
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Demoted first (fenced), towards a master that is not one yet: its
	// HA address comes with the promotion.
	if err := a.Role().BecomeSlave(ctx, b.Addr(), "127.0.0.1:1", 1, 1); err != nil {
		t.Fatalf("demote: %v", err)
	}
	close(demoted)
	wg.Wait()
	if r := c.invoke(a.Addr(), protocol.SendMessage, &h, []byte("late")); r.Code != protocol.ServiceNotAvailable {
		t.Fatalf("send after the demotion: %d %s", r.Code, r.Remark)
	}
	if err := b.Role().BecomeMaster(ctx, 1); err != nil {
		t.Fatalf("promote: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("%d sends failed otherwise than refused, first: %s", len(failures), failures[0])
	}
	for _, x := range acks {
		rec, buf, err := b.Store().LookMessageByOffset(x.offset)
		if err != nil {
			t.Fatalf("acknowledged %q at %d not on the promoted slave: %v", x.body, x.offset, err)
		}
		if string(rec.Body) != x.body {
			t.Fatalf("at %d the promoted slave has %q, acknowledged %q", x.offset, rec.Body, x.body)
		}
		buf.Release()
	}
	t.Logf("%d acknowledged, %d refused", len(acks), refused)
}
