package namesrv

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// fakeBroker is a remoting server standing in for a broker: it records the
// SEND_MESSAGE requests it gets and answers them as a broker would, and
// answers everything else (heartbeats) with SUCCESS. It proves that a client
// found the broker through the name server's route.
type fakeBroker struct {
	srv  *remoting.Server
	addr string

	mu    sync.Mutex
	sends []map[string]string
}

func startFakeBroker(t *testing.T) *fakeBroker {
	t.Helper()
	fb := &fakeBroker{srv: remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0"})}
	fb.srv.Handle(protocol.SendMessage, nil, func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
		fb.mu.Lock()
		fb.sends = append(fb.sends, req.ExtFields)
		n := len(fb.sends)
		fb.mu.Unlock()
		resp := remoting.NewResponse(protocol.Success, "")
		resp.ExtFields = map[string]string{
			// Offset message id: store IPv4 (127.0.0.1), port, commit-log offset.
			"msgId":       fmt.Sprintf("7F000001%08X%016X", 10911, n),
			"queueId":     req.ExtFields["queueId"],
			"queueOffset": fmt.Sprint(n - 1),
			"MSG_REGION":  "DefaultRegion",
			"TRACE_ON":    "false",
		}
		return resp
	})
	fb.srv.HandleDefault(nil, func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
		return remoting.NewResponse(protocol.Success, "")
	})
	if err := fb.srv.Start(); err != nil {
		t.Fatal(err)
	}
	fb.addr = fb.srv.Addr().String()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := fb.srv.Shutdown(ctx); err != nil {
			t.Errorf("fake broker shutdown: %v", err)
		}
	})
	return fb
}

func (fb *fakeBroker) sent() []map[string]string {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return slices.Clone(fb.sends)
}

// newGoAdmin returns the official Go client's admin API pointed at ns. Each
// admin gets its own instance name (the library's default), hence its own
// route cache.
func newGoAdmin(t *testing.T, ns string) admin.Admin {
	t.Helper()
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{ns})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.Close() })
	return adm
}

// TestGoClientInterop registers a broker through our remoting client, then
// has the official rocketmq-client-go find it through our NameServer.
func TestGoClientInterop(t *testing.T) {
	rlog.SetLogLevel("fatal") // the last lookup below fails on purpose
	ts := startTestServer(t, nil)
	fb := startFakeBroker(t)

	brokerConn := remoting.NewClient(remoting.ClientConfig{})
	defer brokerConn.Close()
	spec := brokerSpec{cluster: "DefaultCluster", name: "broker-a", addr: fb.addr, ha: "127.0.0.1:10912", dv: 1,
		topics: []protocol.TopicConfig{topic("TopicA", 6, 8), topic("TopicB", 4, 4)}}
	expectCode(t, ts.callWith(brokerConn, spec.registerRequest(t, false)), protocol.Success, "")
	// A slave too, so the client parses a two-entry brokerAddrs ({0:..,1:..}).
	slave := spec
	slave.id, slave.addr = 1, "127.0.0.1:1"
	if resp := ts.callWith(brokerConn, slave.registerRequest(t, false)); resp.ExtFields["masterAddr"] != fb.addr {
		t.Fatalf("slave registration answer %v", resp.ExtFields)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	adm := newGoAdmin(t, ts.addr)
	mqs, err := adm.FetchPublishMessageQueues(ctx, "TopicA")
	if err != nil {
		t.Fatalf("FetchPublishMessageQueues: %v", err)
	}
	if len(mqs) != 8 {
		t.Fatalf("publish queues %d, want 8 (writeQueueNums)", len(mqs))
	}
	for i, mq := range mqs {
		if mq.Topic != "TopicA" || mq.BrokerName != "broker-a" || mq.QueueId != i {
			t.Fatalf("queue %d = %+v", i, mq)
		}
	}
	clusters, err := adm.FetchClusterList("TopicA")
	if err != nil || !slices.Equal(clusters, []string{"DefaultCluster"}) {
		t.Fatalf("FetchClusterList = %v, %v", clusters, err)
	}
	list, err := adm.FetchAllTopicList(ctx)
	if err != nil {
		t.Fatalf("FetchAllTopicList: %v", err)
	}
	if !slices.Contains(list.TopicList, "TopicA") || !slices.Contains(list.TopicList, "TopicB") {
		t.Fatalf("topic list %v", list.TopicList)
	}

	// A producer sends to the address the route gave: the fake broker's.
	p, err := producer.NewDefaultProducer(
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{ts.addr})),
		producer.WithGroupName("interop-producer"),
		producer.WithInstanceName(fmt.Sprintf("interop-%d", time.Now().UnixNano())),
		producer.WithRetry(0),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	res, err := p.SendSync(ctx, primitive.NewMessage("TopicA", []byte("hello")))
	if shutErr := p.Shutdown(); shutErr != nil {
		t.Errorf("producer shutdown: %v", shutErr)
	}
	if err != nil {
		t.Fatalf("SendSync: %v", err)
	}
	if res.Status != primitive.SendOK || res.MessageQueue.BrokerName != "broker-a" || res.MessageQueue.QueueId >= 8 {
		t.Fatalf("send result %+v", res)
	}
	sends := fb.sent()
	if len(sends) != 1 || sends[0]["topic"] != "TopicA" {
		t.Fatalf("fake broker got %v", sends)
	}

	// Write permission wiped at the name server: a fresh client sees no
	// writable queue.
	expectCode(t, ts.call(protocol.WipeWritePermOfBroker,
		protocol.Ext(&protocol.WipeWritePermOfBrokerRequestHeader{BrokerName: "broker-a"}), nil), protocol.Success, "")
	if mqs, err := newGoAdmin(t, ts.addr).FetchPublishMessageQueues(ctx, "TopicB"); err != nil || len(mqs) != 0 {
		t.Fatalf("after wipe: %d queues, %v", len(mqs), err)
	}

	// The broker's connection closes: its routes go, and a fresh client is
	// told the topic does not exist.
	brokerConn.CloseConn(ts.addr)
	wait.For(t, 10*time.Second, "routes of the closed broker to go", func() bool {
		return ts.route("TopicA", 317).Code == protocol.TopicNotExist
	})
	if _, err := newGoAdmin(t, ts.addr).FetchPublishMessageQueues(ctx, "TopicA"); err == nil {
		t.Fatal("route of a gone broker still served to the Go client")
	}
}
