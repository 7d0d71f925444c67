package broker_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func routeCode(c *cluster, topic string) int32 {
	c.t.Helper()
	return c.invoke(c.nsAddr, protocol.GetRouteinfoByTopic, &protocol.GetRouteInfoRequestHeader{Topic: topic}, nil).Code
}

// TestRegistration: the broker registers at start (TBW102 is routable),
// after a topic change, and unregisters at shutdown.
func TestRegistration(t *testing.T) {
	c := startCluster(t, nil)
	wait.For(t, 5*time.Second, "TBW102 route", func() bool { return routeCode(c, "TBW102") == protocol.Success })
	c.createTopic("Reg", 2) // waits for the route
	c.createTopic("Reg", 5) // an update re-registers too
	// (A topic deleted in the broker stays routed until it is deleted in
	// the NameServer as well, as with Java: registration only adds.)
	c.stopBroker()
	if code := routeCode(c, "TBW102"); code != protocol.TopicNotExist {
		t.Fatalf("after shutdown TBW102 still routed (code %d): not unregistered", code)
	}
}

// TestShutdownFiles: the abort file exists while the broker runs and is
// gone after a clean shutdown; offsets are persisted every
// flushConsumerOffsetInterval and at shutdown; a restart recovers normally.
func TestShutdownFiles(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.FlushConsumerOffsetInterval = 50 * time.Millisecond })
	root := filepath.Join(c.dir, "store")
	if _, err := os.Stat(filepath.Join(root, "abort")); err != nil {
		t.Fatalf("no abort file while running: %v", err)
	}
	c.createTopic("F", 1)
	u := &protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "F", QueueID: 0, CommitOffset: 42}
	if r := c.invoke(c.b.Addr(), protocol.UpdateConsumerOffset, u, nil); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	offsetsFile := filepath.Join(root, "config", "consumerOffset.json")
	wait.For(t, 5*time.Second, "periodic offset persist", func() bool {
		b, err := os.ReadFile(offsetsFile)
		return err == nil && strings.Contains(string(b), `"F@g"`) && strings.Contains(string(b), "42")
	})
	u.CommitOffset = 43
	c.invoke(c.b.Addr(), protocol.UpdateConsumerOffset, u, nil)
	c.stopBroker()
	if _, err := os.Stat(filepath.Join(root, "abort")); !os.IsNotExist(err) {
		t.Fatalf("abort file after clean shutdown: %v", err)
	}
	if b, err := os.ReadFile(offsetsFile); err != nil || !strings.Contains(string(b), "43") {
		t.Fatalf("offsets at shutdown: %s %v", b, err)
	}
	c.startBroker()
	if !c.b.Store().LastExitOK() {
		t.Fatal("restart after a clean shutdown saw an unclean exit")
	}
	q := &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "F", QueueID: 0}
	r := c.invoke(c.b.Addr(), protocol.QueryConsumerOffset, q, nil)
	if r.Code != protocol.Success || r.ExtFields["offset"] != "43" {
		t.Fatalf("offset after restart: %d %v", r.Code, r.ExtFields)
	}
}

// TestStartErrors: a configuration that cannot work is refused before
// anything is left running.
func TestStartErrors(t *testing.T) {
	c := startCluster(t, nil)
	bc := c.brokerConfig()
	bc.BrokerID = 1
	bc.BrokerRole = config.Slave
	if _, err := startWith(bc); err == nil {
		t.Fatal("slave accepted")
	}
	bc = c.brokerConfig()
	bc.BrokerIP1 = "not-an-ip"
	if _, err := startWith(bc); err == nil || !strings.Contains(err.Error(), "brokerIP1") {
		t.Fatalf("bad brokerIP1: %v", err)
	}
	// The store is locked by the running broker.
	if _, err := startWith(c.brokerConfig()); err == nil {
		t.Fatal("second broker on the same store started")
	}
}

// TestShutdownWithSilentNameServer: a NameServer that accepts connections
// but never answers delays neither start nor shutdown beyond the
// registration timeout.
func TestShutdownWithSilentNameServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		<-acceptDone
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.NamesrvAddr = ln.Addr().String()
		bc.RegisterBrokerTimeout = 300 * time.Millisecond
	})
	start := time.Now()
	c.stopBroker()
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("shutdown took %v with a silent NameServer", el)
	}
}
