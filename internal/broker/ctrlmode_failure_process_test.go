package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/rocketd/rocketd/internal/controller/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// controllerLeader asks every live controller who leads and returns the
// index of the leader in c.ctls (-1: none agreed on yet). skip names a
// controller not to ask (a killed one).
func (c *ctrlCluster) controllerLeader(skip int) int {
	addrs := strings.Split(c.ctlAddrs, ";")
	for i, a := range addrs {
		if i == skip {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		md, err := c.cl.GetMetadata(ctx, a)
		cancel()
		if err != nil || md.ControllerLeaderAddress == "" {
			continue
		}
		if j := slices.Index(addrs, md.ControllerLeaderAddress); j >= 0 && j != skip {
			return j
		}
	}
	return -1
}

// TestControllerModeLeaderKilledDuringFailover: the master is SIGKILLed
// mid-load and, before the controller could elect (its heartbeats time
// out after controllerHeartBeatTimeoutMills=3000), the controller leader
// is SIGKILLed too. The two controllers left elect a leader of their own,
// which judges the master gone from the heartbeats it heard and elects a
// new master from the SyncStateSet; the Go producer resumes on it and
// every acknowledged message is readable from it.
func TestControllerModeLeaderKilledDuringFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	if raceEnabled {
		// The Go client's pull consumer races with itself (race_on_test.go).
		proc.RerunWithoutRace(t)
		return
	}
	rlog.SetLogLevel("error")
	c := startCtrlCluster(t)
	first := c.setOfThree(t)
	const topic = "CtrlLeaderKillTopic"
	c.createTopic(t, first, topic)
	load := startLoad(c.goProducer(t), topic)
	defer load.close()
	wait.For(t, 60*time.Second, "500 acknowledged sends", func() bool { return load.count() >= 500 })

	leader := -1
	wait.For(t, 10*time.Second, "the controller leader", func() bool { leader = c.controllerLeader(-1); return leader >= 0 })
	// Freeze the controller leader before the master dies, so it cannot
	// act on the master's closed connection in the moment between the two
	// kills (a loaded machine once let it elect there), then kill both.
	if err := c.ctls[leader].Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	first.p.Kill(t)
	load.markKill()
	c.ctls[leader].Kill(t)
	before := load.count()
	t.Logf("killed the master and controller n%d; %d acknowledged before", leader, before)
	if strings.Contains(c.ctls[leader].Log(), "master gone, election") {
		t.Fatalf("controller n%d elected before it was killed: the test killed it too late", leader)
	}

	next := -1
	wait.For(t, 30*time.Second, "a new controller leader", func() bool { next = c.controllerLeader(leader); return next >= 0 })
	t.Logf("controller n%d leads %v after the kills", next, load.sinceKill())
	newMaster := c.waitNewMaster(t, first, 2)
	t.Logf("new master %s elected %v after the kills", newMaster.name, load.sinceKill())
	if log := c.ctls[next].Log(); !strings.Contains(log, "master gone, election") {
		t.Errorf("the new controller leader did not log the election:\n%s", log)
	}
	// The Go client reroutes once its route refresh (every 30 s) names
	// the new master.
	wait.For(t, 90*time.Second, "the producer to resume on the new master", func() bool { return load.count() >= before+300 })
	t.Logf("first acknowledged send %v after the kills", load.firstBackAfterKill())
	acked := load.close()
	got := c.readAcked(t, newMaster, topic, acked)
	t.Logf("%d acknowledged, all %d read back from %s (%d distinct)", len(acked), len(acked), newMaster.name, len(got))
}

// TestControllerModeNoUncleanElection: the only in-sync slave goes down
// with the master. broker-b is stopped (SIGSTOP) until the master drops
// it from the SyncStateSet ({1}), the master acknowledges more sends
// that broker-b lacks, then the master is SIGKILLed and broker-b
// continues (SIGCONT). With enableElectUncleanMaster=false (the default)
// nobody may become master: the set stays without one and read-only
// (broker-b serves pulls, refuses sends), and the controller's election
// answer, its log, broker-b's log and CONTROLLER_GET_SYNC_STATE_DATA say
// why. When broker-a, the in-sync replica, returns it becomes master
// (epoch 2), takes sends, every acknowledged message is readable from it
// and broker-b follows it back into the set.
func TestControllerModeNoUncleanElection(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startCtrlCluster(t)
	a := c.addBroker(t, "broker-a")
	c.waitMaster(t, a)
	b := c.addBroker(t, "broker-b")
	c.waitInSync(t, 1, 2)
	const topic = "CtrlUncleanTopic"
	send := func(addr, body string) *remoting.Command {
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte(body)))
		if err != nil {
			t.Fatalf("send to %s: %v", addr, err)
		}
		return r
	}
	acked := map[string]bool{}
	sendAcked := func(prefix string, n int) {
		for i := range n {
			body := fmt.Sprintf("%s-%03d", prefix, i)
			if r := send(a.addr, body); r.Code != protocol.Success {
				t.Fatalf("send %s to the master: code %d %s", body, r.Code, r.Remark)
			}
			acked[body] = true
		}
	}
	wait.For(t, 30*time.Second, "SUCCESS with the set in sync", func() bool { return send(a.addr, "warm-up").Code == protocol.Success })
	acked["warm-up"] = true
	sendAcked("in-sync", 20)

	b.stop(t)
	c.waitInSync(t, 1)
	// Acknowledged by broker-a alone: broker-b never sees them, so
	// electing it would lose them.
	wait.For(t, 10*time.Second, "sends acknowledged by the master alone", func() bool {
		return send(a.addr, "after the shrink").Code == protocol.Success
	})
	acked["after the shrink"] = true
	sendAcked("master-only", 20)

	a.p.Kill(t)
	if err := b.p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The controller finds the master gone and nobody to elect.
	wait.For(t, 30*time.Second, "the controller to record that the set has no master", func() bool {
		mi, err := c.replicaInfo()
		return err == nil && !mi.HasMaster
	})
	const why = "no alive replica in the SyncStateSet [1]"
	leader := c.controllerLeader(-1)
	if leader < 0 {
		t.Fatal("no controller leader")
	}
	if log := c.ctls[leader].Log(); !strings.Contains(log, why) || !strings.Contains(log, "code=2004") {
		t.Errorf("the controller leader's log does not say why no master was elected (want code 2004 and %q):\n%s", why, log)
	}
	// broker-b asks for elections (every syncBrokerMetadataPeriod) and is
	// refused; it says why in its log.
	wait.For(t, 30*time.Second, "broker-b to log its refused election", func() bool {
		return strings.Contains(b.p.Log(), "election failed") && strings.Contains(b.p.Log(), why)
	})
	// mqadmin electMaster naming broker-b is refused too: not in sync.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := c.cl.ElectMaster(ctx, ctrlClusterName, ctrlBrokerName, 2, true)
	cancel()
	if client.Code(err) != protocol.ControllerElectMasterFailed || !strings.Contains(err.Error(), "not in the SyncStateSet") {
		t.Errorf("designated election of broker-b: %v, want code %d (not in the SyncStateSet)", err, protocol.ControllerElectMasterFailed)
	}
	// mqadmin getSyncStateSet: no master, broker 1 in sync, broker 2 not.
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	info, ok, err := c.cl.GetSyncStateData(ctx, ctrlBrokerName)
	cancel()
	if err != nil || !ok || info.MasterBrokerID != nil || len(info.InSyncReplicas) != 1 || info.InSyncReplicas[0].BrokerID != 1 {
		t.Errorf("GET_SYNC_STATE_DATA: %+v ok=%v err=%v, want no master and broker 1 alone in sync", info, ok, err)
	}
	// Read-only: broker-b serves what it has and takes no send.
	if r := send(b.addr, "to the slave"); r.Code == protocol.Success {
		t.Fatal("broker-b acknowledged a send with no master elected")
	}
	if got := pullQueue0(t, c.rc, b.addr, topic); len(got) == 0 || got["warm-up"] == nil {
		t.Errorf("broker-b serves no pull of what it replicated: %d messages", len(got))
	}
	if mi, err := c.replicaInfo(); err != nil || mi.HasMaster {
		t.Fatalf("a master was elected without broker-a: %+v %v", mi, err)
	}

	// broker-a, the in-sync replica, returns and becomes master again.
	a.start(t, c)
	wait.For(t, 30*time.Second, "broker-a master at epoch 2", func() bool {
		mi, err := c.replicaInfo()
		return err == nil && mi.HasMaster && mi.MasterAddress == a.addr && mi.MasterEpoch >= 2
	})
	wait.For(t, 30*time.Second, "sends acknowledged again", func() bool { return send(a.addr, "after the return").Code == protocol.Success })
	acked["after the return"] = true
	got := pullQueue0(t, c.rc, a.addr, topic)
	for body := range acked {
		if got[body] == nil {
			t.Errorf("acknowledged %q not readable from broker-a", body)
		}
	}
	wait.For(t, 60*time.Second, "broker-b back in the SyncStateSet", func() bool {
		mi, err := c.replicaInfo()
		return err == nil && slices.Equal(slices.Sorted(slices.Values(mi.SyncStateSet)), []int64{1, 2})
	})
	wait.For(t, 30*time.Second, "broker-b's CommitLog to reach broker-a's end", func() bool {
		x, err1 := c.epochCache(a.addr)
		y, err2 := c.epochCache(b.addr)
		return err1 == nil && err2 == nil && x.MaxOffset == y.MaxOffset
	})
	t.Logf("%d acknowledged, all readable from broker-a", len(acked))
}

// TestControllerModeMinInSyncReplicas: with minInSyncReplicas=2 a master
// whose SyncStateSet is {itself} refuses sends before writing them:
// SYSTEM_ERROR "in-sync replicas not enough" (Java's
// IN_SYNC_REPLICAS_NOT_ENOUGH as SendMessageProcessor answers it), its
// CommitLog does not move; with a slave in the set sends are
// acknowledged; once the stopped slave left the set they are refused
// again, unwritten.
func TestControllerModeMinInSyncReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startCtrlCluster(t)
	extra := map[string]string{"minInSyncReplicas": "2"}
	a := c.addBrokerWith(t, "broker-a", extra)
	c.waitMaster(t, a)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "CtrlMinInSyncTopic", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
	send := func() *remoting.Command {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := c.rc.Invoke(ctx, a.addr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte("m")))
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		return r
	}
	end := func() int64 {
		ec, err := c.epochCache(a.addr)
		if err != nil {
			t.Fatal(err)
		}
		return ec.MaxOffset
	}
	refused := func(when string) {
		t.Helper()
		before := end()
		r := send()
		if r.Code != protocol.SystemError || r.Remark != "in-sync replicas not enough" {
			t.Fatalf("%s: send answered %d %q, want %d %q", when, r.Code, r.Remark, protocol.SystemError, "in-sync replicas not enough")
		}
		if after := end(); after != before {
			t.Fatalf("%s: the refused send was written: CommitLog end %d -> %d", when, before, after)
		}
	}
	// Registration with the NameServer follows the promotion: wait for
	// the store to take puts (a refusal other than SERVICE_NOT_AVAILABLE).
	wait.For(t, 30*time.Second, "broker-a taking sends", func() bool { return send().Code != protocol.ServiceNotAvailable })
	refused("SyncStateSet {1}")

	b := c.addBrokerWith(t, "broker-b", extra)
	c.waitInSync(t, 1, 2)
	wait.For(t, 10*time.Second, "SUCCESS with two in sync", func() bool { return send().Code == protocol.Success })

	b.stop(t)
	c.waitInSync(t, 1)
	wait.For(t, 10*time.Second, "the master to take the smaller set", func() bool {
		return send().Code == protocol.SystemError
	})
	refused("SyncStateSet {1} after the shrink")
	if err := b.p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}
