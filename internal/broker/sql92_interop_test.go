package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestGoClientSQL92: a rocketmq-client-go push consumer subscribed with
// consumer.MessageSelector{Type: consumer.SQL92} gets exactly the messages
// whose properties match (TAGS included), on a broker with
// enablePropertyFilter=true.
//
// The Go client never sends CHECK_CLIENT_CONFIG (its CheckClientInBroker
// is empty), so a bad expression does not stop its Start: the broker
// registers no filter for it, its pulls get FILTER_DATA_NOT_EXIST, and
// CHECK_CLIENT_CONFIG for the same subscription (what a Java client asks)
// answers SUBSCRIPTION_PARSE_FAILED.
func TestGoClientSQL92(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.EnablePropertyFilter = true })
	topic := uniq(t, "T")
	c.createTopic(topic, 1)
	p := c.newProducer()
	var want []string
	for i := 0; i < 20; i++ {
		tag := []string{"TagA", "TagB"}[i%2]
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("m%02d", i)))
		m.WithTag(tag)
		m.WithProperty("a", fmt.Sprint(i))
		m.WithProperty("region", []string{"eu-west", "us-east", "eu-north"}[i%3])
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		if i > 5 && tag == "TagB" && strings.HasPrefix(m.GetProperty("region"), "eu") {
			want = append(want, string(m.Body))
		}
	}

	rec := newReceived()
	group := uniq(t, "cg")
	pc, err := consumer.NewPushConsumer(
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName(group),
		consumer.WithInstance(uniq(t, "c")),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		t.Fatal(err)
	}
	sel := consumer.MessageSelector{Type: consumer.SQL92, Expression: "a > 5 AND TAGS = 'TagB' AND region STARTSWITH 'eu'"}
	if err := pc.Subscribe(topic, sel, func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		rec.add(ms...)
		return consumer.ConsumeSuccess, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	t.Cleanup(func() { _ = shutdownSettled(pc, started) })
	// The push consumer consumes a pulled batch on several goroutines, so
	// the last message may be handed over before earlier ones: wait for
	// every match. The broker filters, so a wrong message would come in
	// the same pulls as the matches and be counted by now.
	wait.For(t, 30*time.Second, "every matching message", func() bool {
		for _, body := range want {
			if _, ok := rec.get(body); !ok {
				return false
			}
		}
		return true
	})
	if n := rec.len(); n != len(want) {
		t.Fatalf("received %d messages, want the %d matching ones: %v", n, len(want), want)
	}

	// A bad expression.
	bad := uniq(t, "cgbad")
	badSel := consumer.MessageSelector{Type: consumer.SQL92, Expression: "a > AND"}
	pc2, err := consumer.NewPushConsumer(consumer.WithNameServer([]string{c.nsAddr}), consumer.WithGroupName(bad),
		consumer.WithInstance(uniq(t, "c")), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc2.Subscribe(topic, badSel, func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		t.Error("a consumer with a bad expression got a message")
		return consumer.ConsumeSuccess, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := pc2.Start(); err != nil {
		t.Fatal(err)
	}
	started2 := time.Now()
	t.Cleanup(func() { _ = shutdownSettled(pc2, started2) })
	wait.For(t, 30*time.Second, "the bad group's heartbeat", func() bool {
		r := c.invoke(c.b.Addr(), protocol.GetConsumerListByGroup, &protocol.ConsumerGroupRequestHeader{ConsumerGroup: bad}, nil)
		return r.Code == protocol.Success
	})
	pull := &protocol.PullMessageRequestHeader{ConsumerGroup: bad, Topic: topic, MaxMsgNums: 32, ExpressionType: "SQL92"}
	if r := c.invoke(c.b.Addr(), protocol.PullMessage, pull, nil); r.Code != protocol.FilterDataNotExist {
		t.Fatalf("pull of the bad group: %d %s", r.Code, r.Remark)
	}
	body, _ := json.Marshal(protocol.CheckClientRequestBody{ClientID: "go", Group: bad,
		SubscriptionData: &protocol.SubscriptionData{Topic: topic, SubString: badSel.Expression, ExpressionType: "SQL92"}})
	if r := c.invoke(c.b.Addr(), protocol.CheckClientConfig, nil, body); r.Code != protocol.SubscriptionParseFailed ||
		!strings.Contains(r.Remark, "Invalid MessageSelector") {
		t.Fatalf("CHECK_CLIENT_CONFIG of the bad expression: %d %s", r.Code, r.Remark)
	}
}
