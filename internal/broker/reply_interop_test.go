package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestGoClientRequestReply: the official Go client's Request and
// RequestAsync get the reply a replier (a push consumer answering through
// its own producer, as the Go client's RPC example does) sends to
// <cluster>_REPLY_TOPIC; the broker pushes it to the requester.
func TestGoClientRequestReply(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "RPC")
	c.createTopic(topic, 2)
	c.waitRoute(config.DefaultBrokerClusterName+"_REPLY_TOPIC", 1)

	replier, err := producer.NewDefaultProducer(
		producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName(uniq(t, "replier")),
		producer.WithInstanceName(uniq(t, "r")),
		producer.WithSendMsgTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := replier.Start(); err != nil {
		t.Fatal(err)
	}
	// The Go client's consumer may still run a callback after its
	// Shutdown: the replier stops only once no callback uses it.
	var replierMu sync.RWMutex
	replierClosed := false
	t.Cleanup(func() {
		replierMu.Lock()
		replierClosed = true
		replierMu.Unlock()
		_ = replier.Shutdown()
	})

	replyErrs := make(chan error, 16)
	c.startPushConsumer(uniq(t, "rpc_server"), topic, "*", func(ctx context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		replierMu.RLock()
		defer replierMu.RUnlock()
		if replierClosed {
			return consumer.ConsumeRetryLater, nil
		}
		for _, m := range ms {
			if consumer.GetReplyToClient(m) == "" {
				continue // the warm-up message: no request
			}
			body := []byte("re:" + string(m.Body))
			reply, err := consumer.CreateReplyMessage(m, body)
			if err != nil {
				replyErrs <- err
				continue
			}
			// CreateReplyMessage parses body as properties instead of
			// setting it (a Go client bug): set it here.
			reply.Body = body
			if _, err := replier.SendSync(ctx, reply); err != nil {
				replyErrs <- fmt.Errorf("send reply: %w", err)
			}
		}
		return consumer.ConsumeSuccess, nil
	})

	requesterGroup := uniq(t, "requester")
	requester, err := producer.NewDefaultProducer(
		producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName(requesterGroup),
		producer.WithInstanceName(uniq(t, "q")),
		producer.WithSendMsgTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := requester.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = requester.Shutdown() })
	// The Go client heartbeats 1 s after Start and then every 30 s, to
	// the brokers it knows routes of; Request heartbeats only for a topic
	// without a route. A first send learns the broker before that first
	// heartbeat; the push needs the requester registered (as with Java's
	// broker).
	if _, err := requester.SendSync(context.Background(), primitive.NewMessage(topic, []byte("warm-up"))); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 40*time.Second, "requester registration", func() bool {
		r := c.invoke(c.b.Addr(), protocol.GetProducerConnectionList,
			&protocol.GetProducerConnectionListRequestHeader{ProducerGroup: requesterGroup}, nil)
		return r.Code == protocol.Success
	})

	// The first request may precede the consumer's first rebalance: the
	// replier answers once it consumes, within the request's TTL.
	reply, err := requester.Request(context.Background(), 20*time.Second, primitive.NewMessage(topic, []byte("ping-1")))
	if err != nil {
		select {
		case rerr := <-replyErrs:
			t.Fatalf("request: %v (replier: %v)", err, rerr)
		default:
			t.Fatalf("request: %v", err)
		}
	}
	if string(reply.Body) != "re:ping-1" || reply.Topic != config.DefaultBrokerClusterName+"_REPLY_TOPIC" {
		t.Fatalf("reply topic %q body %q", reply.Topic, reply.Body)
	}
	if reply.GetProperty("PUSH_REPLY_TIME") == "" {
		t.Fatalf("reply lacks PUSH_REPLY_TIME: %v", reply.GetProperties())
	}

	got := make(chan *primitive.Message, 1)
	if err := requester.RequestAsync(context.Background(), 10*time.Second, func(_ context.Context, m *primitive.Message, err error) {
		if err != nil {
			t.Errorf("async request: %v", err)
		}
		got <- m
	}, primitive.NewMessage(topic, []byte("ping-2"))); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m == nil || string(m.Body) != "re:ping-2" {
			t.Fatalf("async reply %+v", m)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no async reply")
	}
	select {
	case err := <-replyErrs:
		t.Fatalf("replier: %v", err)
	default:
	}
}
