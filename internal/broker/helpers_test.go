package broker_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// cluster is a NameServer and a master broker in this process, on
// ephemeral loopback ports, with the store in a test directory.
type cluster struct {
	t      testing.TB
	dir    string
	ns     *namesrv.Server
	b      *broker.Broker
	nsAddr string
	tune   func(*config.BrokerConfig)
	rc     *remoting.Client // rocketd's own client, for admin calls
	// listen is the broker's listen address; "" is 127.0.0.1:0.
	listen string
}

// startCluster starts a NameServer and a broker; both stop at cleanup.
func startCluster(t testing.TB, tune func(*config.BrokerConfig)) *cluster {
	t.Helper()
	return startClusterOn(t, tune, "")
}

// startClusterOn is startCluster with the broker listening on listen.
func startClusterOn(t testing.TB, tune func(*config.BrokerConfig), listen string) *cluster {
	t.Helper()
	c := &cluster{t: t, dir: t.TempDir(), tune: tune, listen: listen}
	// The NameServer and the admin client take the broker's tls.* keys,
	// as one set of JVM system properties would give them in Java.
	tlsCfg := c.brokerConfig().TLS
	ns, err := namesrv.New(namesrv.Config{
		Addr:    "127.0.0.1:0",
		Namesrv: config.NamesrvConfig{KVConfigPath: filepath.Join(c.dir, "kvConfig.json"), TLS: tlsCfg},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	c.ns, c.nsAddr = ns, ns.Addr()
	clientTLS, err := tlsCfg.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	c.rc = remoting.NewClient(remoting.ClientConfig{TLS: clientTLS})
	t.Cleanup(func() {
		c.stopBroker()
		_ = c.rc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ns.Shutdown(ctx)
	})
	c.startBroker()
	return c
}

// brokerConfig is the configuration of the test broker.
func (c *cluster) brokerConfig() config.BrokerConfig {
	bc := config.NewBrokerConfig()
	bc.BrokerIP1 = "127.0.0.1"
	bc.NamesrvAddr = c.nsAddr
	bc.StorePathRootDir = filepath.Join(c.dir, "store")
	bc.MappedFileSizeCommitLog = 32 << 20
	bc.MappedFileSizeConsumeQueue = 30000 * 20
	if c.tune != nil {
		c.tune(&bc)
	}
	return bc
}

func (c *cluster) startBroker() {
	c.t.Helper()
	listen := c.listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	// Metrics and the gRPC service (when a test turns them on) on
	// ephemeral ports too.
	b, err := broker.Start(broker.Config{Broker: c.brokerConfig(), ListenAddr: listen, MetricsAddr: "127.0.0.1:0", GRPCListenAddr: "127.0.0.1:0"})
	if err != nil {
		c.t.Fatal(err)
	}
	c.b = b
	c.waitRegistered()
}

// waitRegistered waits until the NameServer lists the broker's address:
// the first registration round runs asynchronously, and a client started
// at once would otherwise find no route (not even TBW102's).
func (c *cluster) waitRegistered() {
	c.t.Helper()
	if c.brokerConfig().NamesrvAddr != c.nsAddr {
		return // a test pointing the broker elsewhere (a silent NameServer)
	}
	wait.For(c.t, 10*time.Second, "broker registration", func() bool {
		r := c.invoke(c.nsAddr, protocol.GetBrokerClusterInfo, nil, nil)
		return r.Code == protocol.Success && strings.Contains(string(r.Body), c.b.Addr())
	})
}

// stopBroker shuts the broker down cleanly (idempotent).
func (c *cluster) stopBroker() {
	if c.b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.b.Shutdown(ctx); err != nil {
		c.t.Errorf("broker shutdown: %v", err)
	}
	c.rc.CloseConn(c.b.Addr())
	c.b = nil
}

// invoke sends a request through rocketd's own remoting client.
func (c *cluster) invoke(addr string, code int32, h protocol.ExtHeader, body []byte) *remoting.Command {
	c.t.Helper()
	var ext map[string]string
	if h != nil {
		ext = protocol.Ext(h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
	if err != nil {
		c.t.Fatalf("invoke %d: %v", code, err)
	}
	return resp
}

// createTopic creates a topic on the broker and waits until the NameServer
// routes it (clients' consumers refuse to start without a route).
func (c *cluster) createTopic(topic string, queues int32) {
	c.t.Helper()
	h := protocol.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: 6, TopicFilterType: protocol.SingleTag,
	}
	if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateTopic, &h, nil); r.Code != protocol.Success {
		c.t.Fatalf("create topic %s: %d %s", topic, r.Code, r.Remark)
	}
	c.waitRoute(topic, queues)
}

// waitRoute polls the NameServer until topic has a route with queues
// write queues.
func (c *cluster) waitRoute(topic string, queues int32) {
	c.t.Helper()
	wait.For(c.t, 10*time.Second, "route of "+topic, func() bool {
		r := c.invoke(c.nsAddr, protocol.GetRouteinfoByTopic, &protocol.GetRouteInfoRequestHeader{Topic: topic}, nil)
		if r.Code != protocol.Success {
			return false
		}
		var route protocol.TopicRouteData
		if err := protocol.UnmarshalFastJSON(r.Body, &route); err != nil {
			return false
		}
		return len(route.QueueDatas) == 1 && route.QueueDatas[0].WriteQueueNums == queues
	})
}

// uniq returns a name unique in this test process (topics, groups,
// client instance names).
func uniq(t testing.TB, prefix string) string {
	t.Helper()
	return prefix + "_" + strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
}

// startWith starts a broker with bc on an ephemeral port; a broker that
// did start is shut down again by the caller's cleanup.
func startWith(bc config.BrokerConfig) (*broker.Broker, error) {
	b, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0"})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
	}
	return b, err
}

// maxOffset is the max offset of a queue on the broker at addr
// (GET_MAX_OFFSET).
func (c *cluster) maxOffset(addr, topic string, queueID int32) int64 {
	c.t.Helper()
	r := c.invoke(addr, protocol.GetMaxOffset, &protocol.QueueRequestHeader{Topic: topic, QueueID: queueID}, nil)
	var h protocol.OffsetResponseHeader
	if err := h.Decode(r.ExtFields); r.Code != protocol.Success || err != nil {
		c.t.Fatalf("max offset of %s/%d: %d %s %v", topic, queueID, r.Code, r.Remark, err)
	}
	return h.Offset
}

// consumerOffset is group's committed offset on a queue of the broker at
// addr (QUERY_CONSUMER_OFFSET); false when it has none.
func (c *cluster) consumerOffset(addr, group, topic string, queueID int32) (int64, bool) {
	c.t.Helper()
	r := c.invoke(addr, protocol.QueryConsumerOffset,
		&protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: queueID}, nil)
	var h protocol.OffsetResponseHeader
	if r.Code != protocol.Success || h.Decode(r.ExtFields) != nil {
		return 0, false
	}
	return h.Offset, true
}

// consumedAll has a Go client push consumer of group persist its offsets
// and reports whether they reach the end of every queue of topic: the
// client moves an offset only past messages its listener has returned
// from, so every message stored so far has been through the listener
// (any wrong delivery or replay included).
func (c *cluster) consumedAll(cons any, group, topic string, queues int32) bool {
	c.t.Helper()
	p, ok := cons.(interface{ PersistConsumerOffset() error })
	if !ok {
		c.t.Fatalf("%T cannot persist its offsets", cons)
	}
	if err := p.PersistConsumerOffset(); err != nil {
		return false
	}
	for q := range queues {
		off, ok := c.consumerOffset(c.b.Addr(), group, topic, q)
		if !ok || off != c.maxOffset(c.b.Addr(), topic, q) {
			return false
		}
	}
	return true
}
