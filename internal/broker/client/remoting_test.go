package client

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// notifyRecorder is a remoting client that records the
// NOTIFY_CONSUMER_IDS_CHANGED requests a broker sends it.
type notifyRecorder struct {
	*remoting.Client
	mu     sync.Mutex
	groups []string
	oneway []bool
}

func newNotifyRecorder(t *testing.T) *notifyRecorder {
	n := &notifyRecorder{Client: remoting.NewClient(remoting.ClientConfig{})}
	n.Handle(protocol.NotifyConsumerIdsChanged, func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		var h protocol.NotifyConsumerIdsChangedRequestHeader
		if err := h.Decode(req.ExtFields); err != nil {
			t.Errorf("decode: %v", err)
		}
		n.mu.Lock()
		n.groups = append(n.groups, h.ConsumerGroup)
		n.oneway = append(n.oneway, req.IsOneway())
		n.mu.Unlock()
		return nil
	})
	t.Cleanup(func() { _ = n.Close() })
	return n
}

func (n *notifyRecorder) received() ([]string, []bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.groups), slices.Clone(n.oneway)
}

// heartbeat sends a consumer heartbeat for group as client id.
func (n *notifyRecorder) heartbeat(t *testing.T, addr, id, group string) {
	t.Helper()
	body, err := json.Marshal(protocol.HeartbeatData{
		ClientID:        id,
		ConsumerDataSet: []protocol.ConsumerData{*consumerData(group, sub("T", "*", 1))},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := n.Invoke(ctx, addr, remoting.NewRequest(protocol.HeartBeat, nil, body))
	if err != nil || resp.Code != protocol.Success {
		t.Fatalf("heartbeat: %v %+v", err, resp)
	}
}

// TestNotifyOverRealConnections wires a Registry into a remoting.Server the
// way the broker does and checks what real clients see.
func TestNotifyOverRealConnections(t *testing.T) {
	r := newRegistry(t, Config{})
	srv := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})
	srv.Handle(protocol.HeartBeat, srv.NewFamily("client", 2, 64), func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		var hb protocol.HeartbeatData
		if err := json.Unmarshal(req.Body, &hb); err != nil {
			return remoting.NewResponse(protocol.SystemError, err.Error())
		}
		ci := ClientInfo{ClientID: hb.ClientID, Language: req.Language, Version: req.Version}
		for i := range hb.ConsumerDataSet {
			r.RegisterConsumer(c, ci, &hb.ConsumerDataSet[i], true)
		}
		return remoting.NewResponse(protocol.Success, "")
	})
	srv.OnConnClose(func(c *remoting.Conn) { r.RemoveChannel(c) })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	addr := srv.Addr().String()

	c1, c2 := newNotifyRecorder(t), newNotifyRecorder(t)
	c1.heartbeat(t, addr, "10.0.0.1@one", "cg")
	wait.For(t, 5*time.Second, "c1 notified of its join", func() bool { g, _ := c1.received(); return len(g) == 1 })
	c2.heartbeat(t, addr, "10.0.0.2@two", "cg")
	wait.For(t, 5*time.Second, "both notified of c2's join", func() bool {
		g1, _ := c1.received()
		g2, _ := c2.received()
		return len(g1) == 2 && len(g2) == 1
	})
	if ids := r.ConsumerIDs("cg"); !slices.Equal(ids, []string{"10.0.0.1@one", "10.0.0.2@two"}) {
		t.Fatalf("ids = %v", ids)
	}
	g, ok := r.ConsumerGroup("cg")
	if !ok || g.Channels[0].Language != remoting.JAVA || g.Channels[0].Version != remoting.DefaultVersion {
		t.Fatalf("client info from the request header not kept: %+v", g.Channels)
	}

	// c2 goes away without UNREGISTER_CLIENT, as the Go client does.
	c2.CloseConn(addr)
	wait.For(t, 5*time.Second, "c2 removed", func() bool { return slices.Equal(r.ConsumerIDs("cg"), []string{"10.0.0.1@one"}) })
	wait.For(t, 5*time.Second, "c1 notified of c2's departure", func() bool { g, _ := c1.received(); return len(g) == 3 })
	groups, oneway := c1.received()
	for i := range groups {
		if groups[i] != "cg" || !oneway[i] {
			t.Fatalf("notification %d: group %q oneway %v", i, groups[i], oneway[i])
		}
	}
	if g2, _ := c2.received(); len(g2) != 1 {
		t.Fatalf("closed client got %d notifications, want 1", len(g2))
	}
}
