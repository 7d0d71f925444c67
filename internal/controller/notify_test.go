package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/controller"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// fakeBroker records the NOTIFY_BROKER_ROLE_CHANGED requests it gets.
type fakeBroker struct {
	rs  *remoting.Server
	mu  sync.Mutex
	got []protocol.MasterInfoHeader
}

func startFakeBroker(t *testing.T) *fakeBroker {
	t.Helper()
	f := &fakeBroker{rs: remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})}
	f.rs.Handle(controller.NotifyBrokerRoleChanged, nil, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		var h protocol.MasterInfoHeader
		if err := h.Decode(req.Ext()); err == nil {
			f.mu.Lock()
			f.got = append(f.got, h)
			f.mu.Unlock()
		}
		return nil
	})
	if err := f.rs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.rs.Shutdown(context.Background()) })
	return f
}

func (f *fakeBroker) lastMaster() (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		return 0, false
	}
	return f.got[len(f.got)-1].MasterBrokerID.Value, true
}

// TestNotifyBrokerRoleChanged: with notifyBrokerRoleChanged, a new master
// is announced to the set's live brokers at once, both for the first
// election and for the one after the master's heartbeats stopped.
func TestNotifyBrokerRoleChanged(t *testing.T) {
	g := startGroup(t, 1, func(c *config.ControllerConfig) { c.NotifyBrokerRoleChanged = true })
	g.leader()
	c := g.client()
	fb1, fb2 := startFakeBroker(t), startFakeBroker(t)
	b1 := join(t, c, fb1.rs.Addr().String())
	b2 := join(t, c, fb2.rs.Addr().String())
	g.beat(b1, 0, 0)
	g.beat(b2, 0, 0)
	if _, err := c.ElectMaster(ctx(t), cluster, bname, b1.id, false); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "both brokers told that 1 is master", func() bool {
		m1, ok1 := fb1.lastMaster()
		m2, ok2 := fb2.lastMaster()
		return ok1 && ok2 && m1 == 1 && m2 == 1
	})
	if _, err := c.AlterSyncStateSet(ctx(t), bname, 1, 1, []int64{1, 2}, 1); err != nil {
		t.Fatal(err)
	}
	g.clock.Add(hbTimeout + time.Second)
	g.beat(b2, 1, 10)
	wait.For(t, 10*time.Second, "b2 elected", func() bool {
		mi, err := c.GetReplicaInfo(ctx(t), bname)
		return err == nil && mi.MasterBrokerID == 2
	})
	wait.For(t, 10*time.Second, "b2 told it is master", func() bool {
		m, ok := fb2.lastMaster()
		return ok && m == 2
	})
}
