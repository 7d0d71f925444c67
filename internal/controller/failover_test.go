package controller_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/controller/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func wantCode(t *testing.T, what string, err error, code int32) {
	t.Helper()
	if got := client.Code(err); got != code {
		t.Fatalf("%s: code %d (%v), want %d", what, got, err, code)
	}
}

// TestFailover walks a broker set through the controller's life on a
// 3-node group: ids, first master, SyncStateSet changes and their fencing,
// a master whose heartbeats stop (a new master from the SyncStateSet, never
// outside it), no eligible replica (no master, and why), and the raft
// leader killed (the next leader has the same state).
func TestFailover(t *testing.T) {
	g := startGroup(t, 3, nil)
	g.leader()
	c := g.client()

	b1 := join(t, c, "10.0.0.1:10911")
	b2 := join(t, c, "10.0.0.2:10911")
	b3 := join(t, c, "10.0.0.3:10911")
	if b1.id != 1 || b2.id != 2 || b3.id != 3 {
		t.Fatalf("ids %d %d %d, want 1 2 3", b1.id, b2.id, b3.id)
	}
	for _, b := range []broker{b1, b2, b3} {
		g.beat(b, 0, 0)
	}

	// The first broker to ask becomes master.
	mi, err := c.ElectMaster(ctx(t), cluster, bname, b1.id, false)
	if err != nil || !mi.HasMaster || mi.MasterBrokerID != 1 || mi.MasterEpoch != 1 || mi.MasterAddress != b1.addr {
		t.Fatalf("first election: %+v, %v", mi, err)
	}
	mi, err = c.ElectMaster(ctx(t), cluster, bname, b2.id, false)
	wantCode(t, "second election with a live master", err, protocol.ControllerMasterStillExist)
	if mi == nil || mi.MasterBrokerID != 1 {
		t.Fatalf("MASTER_STILL_EXIST answer: %+v", mi)
	}
	reg, err := c.RegisterBroker(ctx(t), cluster, bname, b2.id, b2.addr)
	if err != nil || !reg.HasMaster || reg.MasterBrokerID != 1 || !slices.Equal(reg.SyncStateSet, []int64{1}) {
		t.Fatalf("register after election: %+v, %v", reg, err)
	}

	// The master adds b2 to the SyncStateSet; stale requests are fenced.
	ep, err := c.AlterSyncStateSet(ctx(t), bname, 1, 1, []int64{1, 2}, 1)
	if err != nil || ep != 2 {
		t.Fatalf("alter: epoch %d, %v", ep, err)
	}
	_, err = c.AlterSyncStateSet(ctx(t), bname, 1, 1, []int64{1, 2, 3}, 1)
	wantCode(t, "stale SyncStateSet epoch", err, protocol.ControllerFencedSyncStateSetEpoch)
	_, err = c.AlterSyncStateSet(ctx(t), bname, 1, 0, []int64{1, 2, 3}, 2)
	wantCode(t, "stale master epoch", err, protocol.ControllerFencedMasterEpoch)
	_, err = c.AlterSyncStateSet(ctx(t), bname, 2, 1, []int64{1, 2, 3}, 2)
	wantCode(t, "a slave claiming mastership", err, protocol.ControllerInvalidMaster)
	_, err = c.AlterSyncStateSet(ctx(t), bname, 1, 1, []int64{1, 9}, 2)
	wantCode(t, "unknown broker id", err, protocol.ControllerInvalidReplicas)
	_, err = c.AlterSyncStateSet(ctx(t), bname, 1, 1, []int64{2}, 2)
	wantCode(t, "set without the master", err, protocol.ControllerAlterSyncStateSetFailed)

	// b1 falls silent: b2 (in sync) becomes master, not b3, though b3
	// reports the larger offset.
	// The clock moves in two steps so that b2's and b3's beats land while
	// they are alive: a beat racing the expiry scan can arrive over the
	// connection the scan is closing and be forgotten with it (a real
	// broker beats again a second later; this test beats once).
	g.clock.Add(hbTimeout - time.Second)
	g.beat(b2, 1, 100)
	g.beat(b3, 1, 500)
	g.clock.Add(2 * time.Second) // b1 silent for hbTimeout+1s, b2 and b3 for 2s
	wait.For(t, 10*time.Second, "b2 elected after b1's heartbeat timeout", func() bool {
		mi, err := c.GetReplicaInfo(ctx(t), bname)
		return err == nil && mi.HasMaster && mi.MasterBrokerID == 2 && mi.MasterEpoch == 2
	})
	mi, err = c.GetReplicaInfo(ctx(t), bname)
	if err != nil || !slices.Equal(mi.SyncStateSet, []int64{2}) || mi.MasterAddress != b2.addr {
		t.Fatalf("after fail-over: %+v, %v", mi, err)
	}
	_, err = c.AlterSyncStateSet(ctx(t), bname, 1, 1, []int64{1, 2}, 3)
	wantCode(t, "the old master after fail-over", err, protocol.ControllerInvalidMaster)

	// b2 falls silent too: only b3, outside the SyncStateSet, is alive.
	// No unclean election: the set has no master, and the answer says why.
	g.clock.Add(time.Second)
	g.beat(b3, 1, 500)
	g.clock.Add(hbTimeout - time.Second/2) // b2 silent for hbTimeout+1.5s, b3 for 2.5s
	wait.For(t, 10*time.Second, "no master once b2 is gone", func() bool {
		mi, err := c.GetReplicaInfo(ctx(t), bname)
		return err == nil && !mi.HasMaster
	})
	_, err = c.ElectMaster(ctx(t), cluster, bname, b3.id, false)
	wantCode(t, "electing outside the SyncStateSet", err, protocol.ControllerElectMasterFailed)
	if !strings.Contains(err.Error(), "enableElectUncleanMaster=false") {
		t.Fatalf("the refusal does not say why: %v", err)
	}
	_, err = c.ElectMaster(ctx(t), cluster, bname, b3.id, true)
	wantCode(t, "designated election outside the SyncStateSet", err, protocol.ControllerElectMasterFailed)

	// The raft leader dies: the next one has the same state.
	before, err := c.GetReplicaInfo(ctx(t), bname)
	if err != nil {
		t.Fatal(err)
	}
	old := g.leader()
	g.stop(old)
	next := g.leader()
	if next == old {
		t.Fatalf("leader %d still leads after it stopped", old)
	}
	after, err := c.GetReplicaInfo(ctx(t), bname)
	if err != nil || after.HasMaster || after.MasterEpoch != before.MasterEpoch || !slices.Equal(after.SyncStateSet, before.SyncStateSet) {
		t.Fatalf("state after leader change: %+v (before %+v), %v", after, before, err)
	}
	if id, err := c.GetNextBrokerID(ctx(t), cluster, bname); err != nil || id != 4 {
		t.Fatalf("next broker id after leader change: %d, %v", id, err)
	}
	// b2 returns and heartbeats the new leader: it is in the SyncStateSet,
	// so its own election request makes it master again.
	g.beat(b2, 2, 100)
	mi, err = c.ElectMaster(ctx(t), cluster, bname, b2.id, false)
	if err != nil || mi.MasterBrokerID != 2 || mi.MasterEpoch != after.MasterEpoch+1 {
		t.Fatalf("re-election of b2: %+v, %v", mi, err)
	}

	// The stopped node comes back and catches up as a follower.
	g.restart(old)
	wait.For(t, 10*time.Second, "restarted node learns the leader", func() bool {
		id, addr := g.nodes[old].LeaderClientAddr()
		return id != "" && addr != ""
	})
}

// TestBadInput: requests with unknown brokers, ids or sets, and requests to
// a follower, get Java's codes.
func TestBadInput(t *testing.T) {
	g := startGroup(t, 3, nil)
	leader := g.leader()
	c := g.client()

	err := c.ApplyBrokerID(ctx(t), cluster, bname, 5, "10.0.0.1:10911;1")
	wantCode(t, "first id of a set other than 1", err, protocol.ControllerBrokerIDInvalid)
	b1 := join(t, c, "10.0.0.1:10911")
	err = c.ApplyBrokerID(ctx(t), cluster, bname, b1.id, "10.0.0.9:10911;7")
	wantCode(t, "id held by another broker", err, protocol.ControllerBrokerIDInvalid)
	if err := c.ApplyBrokerID(ctx(t), cluster, bname, b1.id, b1.addr+";1"); err != nil {
		t.Fatalf("the same broker applying again: %v", err)
	}
	_, err = c.RegisterBroker(ctx(t), cluster, bname, 9, "10.0.0.9:10911")
	wantCode(t, "register an unknown id", err, protocol.ControllerBrokerNeedToBeRegistered)
	_, err = c.RegisterBroker(ctx(t), cluster, "no-such-set", 1, "10.0.0.9:10911")
	wantCode(t, "register in an unknown set", err, protocol.ControllerBrokerNeedToBeRegistered)
	_, err = c.GetReplicaInfo(ctx(t), "no-such-set")
	wantCode(t, "replica info of an unknown set", err, protocol.ControllerBrokerMetadataNotExist)
	_, err = c.ElectMaster(ctx(t), cluster, "no-such-set", 1, false)
	wantCode(t, "election in an unknown set", err, protocol.ControllerBrokerNeedToBeRegistered)
	_, err = c.ElectMaster(ctx(t), cluster, bname, 7, false)
	wantCode(t, "first election by an unknown id", err, protocol.ControllerElectMasterFailed)
	_, err = c.AlterSyncStateSet(ctx(t), bname, 1, 0, []int64{1}, 0)
	wantCode(t, "alter without a master", err, protocol.ControllerInvalidMaster)

	// A follower answers CONTROLLER_NOT_LEADER and names the leader.
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	follower := (leader + 1) % 3
	resp, err := rc.Invoke(ctx(t), g.nodes[follower].ClientAddr(), remoting.NewRequest(protocol.ControllerGetReplicaInfo,
		protocol.Ext(&protocol.BrokerNameHeader{BrokerName: bname}), nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != protocol.ControllerNotLeader || resp.ExtField("controllerLeaderAddress") != g.nodes[leader].ClientAddr() {
		t.Fatalf("follower answered %d %q %v, want %d naming %s", resp.Code, resp.Remark, resp.ExtFields,
			protocol.ControllerNotLeader, g.nodes[leader].ClientAddr())
	}
	md, err := c.GetMetadata(ctx(t), g.nodes[follower].ClientAddr())
	if err != nil || md.IsLeader || md.ControllerLeaderAddress != g.nodes[leader].ClientAddr() || md.Group != "g1" ||
		strings.Count(md.Peers, ";") != 3 {
		t.Fatalf("follower metadata: %+v, %v", md, err)
	}
	// A heartbeat without brokerId.
	resp, err = rc.Invoke(ctx(t), g.nodes[leader].ClientAddr(), remoting.NewRequest(protocol.BrokerHeartbeat,
		map[string]string{"clusterName": cluster, "brokerName": bname}, nil))
	if err != nil || resp.Code != protocol.ControllerInvalidRequest {
		t.Fatalf("heartbeat without brokerId: %v %v", resp, err)
	}
	// A malformed number in a header.
	resp, err = rc.Invoke(ctx(t), g.nodes[leader].ClientAddr(), remoting.NewRequest(protocol.ControllerAlterSyncStateSet,
		map[string]string{"brokerName": bname, "masterBrokerId": "x"}, []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`)))
	if err != nil || resp.Code != protocol.ControllerInvalidRequest {
		t.Fatalf("bad header: %v %v", resp, err)
	}
	// Clean refuses a set with a master unless asked to clean living
	// brokers.
	g.beat(b1, 0, 0)
	if _, err := c.ElectMaster(ctx(t), cluster, bname, b1.id, false); err != nil {
		t.Fatal(err)
	}
	clean := func(living bool) *remoting.Command {
		resp, err := rc.Invoke(ctx(t), g.nodes[leader].ClientAddr(), remoting.NewRequest(protocol.CleanBrokerData,
			protocol.Ext(&protocol.CleanControllerBrokerDataRequestHeader{ClusterName: cluster, BrokerName: bname, IsCleanLivingBroker: living}), nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := clean(false); r.Code != protocol.ControllerInvalidCleanBrokerMetadata {
		t.Fatalf("clean of a living set: %d %q", r.Code, r.Remark)
	}
	if r := clean(true); r.Code != protocol.Success {
		t.Fatalf("clean with isCleanLivingBroker: %d %q", r.Code, r.Remark)
	}
	_, err = c.GetReplicaInfo(ctx(t), bname)
	wantCode(t, "replica info after clean", err, protocol.ControllerBrokerMetadataNotExist)
}
