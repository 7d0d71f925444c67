package controller_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/controller"
	"github.com/rocketd/rocketd/internal/controller/client"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// fakeClock is the liveness clock the tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// group is n in-process controller nodes on ephemeral ports (raft
// transport too) sharing one fake clock.
type group struct {
	t     *testing.T
	clock *fakeClock
	dir   string
	peers string
	lns   []string // raft addresses by index
	nodes []*controller.Controller
	cc    []config.ControllerConfig
}

const hbTimeout = 3 * time.Second // the brokers' heartbeat timeout in these tests

func startGroup(t *testing.T, n int, mutate func(*config.ControllerConfig)) *group {
	t.Helper()
	g := &group{t: t, clock: &fakeClock{t: time.Unix(1_700_000_000, 0)}, dir: t.TempDir()}
	var lns []net.Listener
	var peers []string
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		g.lns = append(g.lns, ln.Addr().String())
		peers = append(peers, fmt.Sprintf("n%d-%s", i, ln.Addr()))
	}
	g.peers = strings.Join(peers, ";")
	g.nodes = make([]*controller.Controller, n)
	g.cc = make([]config.ControllerConfig, n)
	for i := range n {
		g.cc[i] = config.ControllerConfig{
			ControllerDLegerGroup:  "g1",
			ControllerDLegerPeers:  g.peers,
			ControllerDLegerSelfID: fmt.Sprintf("n%d", i),
			ControllerStorePath:    g.dir,
			ConfigStorePath:        filepath.Join(g.dir, fmt.Sprintf("n%d.properties", i)),
			// The scans run often; what they decide depends on the
			// fake clock alone.
			ScanNotActiveBrokerInterval: 20 * time.Millisecond,
			ScanInactiveMasterInterval:  20 * time.Millisecond,
		}
		if mutate != nil {
			mutate(&g.cc[i])
		}
		g.start(i, lns[i])
	}
	t.Cleanup(func() {
		for i := range g.nodes {
			g.stop(i)
		}
	})
	return g
}

func (g *group) start(i int, ln net.Listener) {
	g.t.Helper()
	c, err := controller.New(controller.Config{Controller: g.cc[i], Addr: "127.0.0.1:0", RaftListener: ln,
		RaftTimeout: time.Second, BrokerHeartbeatTimeout: hbTimeout, Now: g.clock.Now})
	if err != nil {
		g.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		g.t.Fatal(err)
	}
	g.nodes[i] = c
}

func (g *group) stop(i int) {
	if g.nodes[i] != nil {
		if err := g.nodes[i].Close(); err != nil {
			g.t.Logf("close n%d: %v", i, err)
		}
		g.nodes[i] = nil
	}
}

// restart brings node i back on its raft address with its store.
func (g *group) restart(i int) {
	g.t.Helper()
	var ln net.Listener
	wait.For(g.t, 10*time.Second, "raft port free again", func() bool {
		var err error
		ln, err = net.Listen("tcp", g.lns[i])
		return err == nil
	})
	g.start(i, ln)
}

// leader waits for a ready leader and returns its index.
func (g *group) leader() int {
	g.t.Helper()
	idx := -1
	wait.For(g.t, 20*time.Second, "a controller leader", func() bool {
		for i, n := range g.nodes {
			if n != nil && n.IsLeader() {
				idx = i
				return true
			}
		}
		return false
	})
	return idx
}

// addrs is every running node's client address, ';'-separated.
func (g *group) addrs() string {
	var out []string
	for _, n := range g.nodes {
		if n != nil {
			out = append(out, n.ClientAddr())
		}
	}
	return strings.Join(out, ";")
}

func (g *group) client() *client.Client {
	g.t.Helper()
	c, err := client.New(g.addrs(), nil)
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// broker is a simulated broker of set "broker-a" with a connection of
// its own for heartbeats, as a broker process has (the controller closes
// an expired broker's connection).
type broker struct {
	id   int64
	addr string
	hb   *client.Client
}

const (
	cluster = "DefaultCluster"
	bname   = "broker-a"
)

// join does what a broker does at start: next id, apply it, register.
func join(t *testing.T, c *client.Client, addr string) broker {
	t.Helper()
	id, err := c.GetNextBrokerID(ctx(t), cluster, bname)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyBrokerID(ctx(t), cluster, bname, id, addr+";1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterBroker(ctx(t), cluster, bname, id, addr); err != nil {
		t.Fatal(err)
	}
	hb, err := client.New(c.Addrs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hb.Close() })
	return broker{id: id, addr: addr, hb: hb}
}

// beat sends b's heartbeat until every running node took it: a node may
// just have closed b's connection (its heartbeat expired when the fake
// clock jumped), and the next send goes over a new one.
func (g *group) beat(b broker, epoch int32, offset int64) {
	g.t.Helper()
	running := 0
	for _, n := range g.nodes {
		if n != nil {
			running++
		}
	}
	var err error
	for range 5 {
		var n int
		n, err = b.hb.SendHeartbeat(ctx(g.t), client.Heartbeat{ClusterName: cluster, BrokerName: bname, BrokerAddr: b.addr,
			BrokerID: b.id, Epoch: epoch, MaxOffset: offset, Timeout: hbTimeout})
		if n == running {
			return
		}
	}
	g.t.Fatalf("heartbeat of broker %d reached fewer than %d nodes: %v", b.id, running, err)
}
