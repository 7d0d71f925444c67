package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestGoClientPullPastTheEnd: the Go client's pull consumer relies on
// nextBeginOffset. A pull past the end of a queue whose min offset is 0
// answers OFFSET_ILLEGAL with nextBeginOffset = max offset (5.x; 4.9.3 and
// older answered 0, and the client re-read the whole queue); pulling from
// there reads only what arrives afterwards.
func TestGoClientPullPastTheEnd(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "PastEnd")
	c.createTopic(topic, 1)
	c.waitRoute(topic, 1)
	p := c.newProducer()
	send := func(body string) {
		t.Helper()
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		send(fmt.Sprintf("old-%d", i))
	}

	pc, err := consumer.NewPullConsumer(
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName(uniq(t, "pastend")),
		consumer.WithInstance(uniq(t, "c")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Assign with no queue: PullFrom is all this test drives. (Subscribe
	// would start a rebalance that races, in the client, with PullFrom's
	// write of the group name; -race reports it.)
	if err := pc.Assign(topic, nil); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	t.Cleanup(func() { _ = shutdownSettled(pc, started) })
	mq := &primitive.MessageQueue{Topic: topic, BrokerName: c.brokerConfig().BrokerName, QueueId: 0}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var res *primitive.PullResult
	wait.For(t, 10*time.Second, "the three messages dispatched", func() bool {
		res, err = pc.PullFrom(ctx, mq, 100, 32)
		return err == nil && res.MaxOffset == 3
	})
	if res.Status != primitive.PullOffsetIllegal || res.NextBeginOffset != 3 || res.MinOffset != 0 {
		t.Fatalf("pull past the end: status %v next %d min %d max %d; want OFFSET_ILLEGAL next 3 (the max)",
			res.Status, res.NextBeginOffset, res.MinOffset, res.MaxOffset)
	}

	send("new-0")
	res, err = pc.PullFrom(ctx, mq, res.NextBeginOffset, 32)
	if err != nil {
		t.Fatal(err)
	}
	msgs := res.GetMessageExts()
	if res.Status != primitive.PullFound || len(msgs) != 1 || string(msgs[0].Body) != "new-0" || res.NextBeginOffset != 4 {
		var bodies []string
		for _, m := range msgs {
			bodies = append(bodies, string(m.Body))
		}
		t.Fatalf("pull from the corrected offset: status %v bodies %v next %d; want only new-0, next 4", res.Status, bodies, res.NextBeginOffset)
	}
}
