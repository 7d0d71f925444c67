package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// BenchmarkBrokerSend is one SEND_MESSAGE round trip (1 KiB body, tag and
// key, ASYNC_FLUSH) through rocketd's remoting client against a whole
// in-process broker.
func BenchmarkBrokerSend(b *testing.B) {
	c := startCluster(b, nil)
	c.createTopic("Bench", 1)
	body := make([]byte, 1024)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "Bench", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli(), Properties: "TAGS\x01a\x02KEYS\x01k1"}
	req := remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), body)
	addr := c.b.Addr()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := c.rc.Invoke(ctx, addr, req)
		cancel()
		if err != nil || r.Code != protocol.Success {
			b.Fatalf("send: %v %v", err, r)
		}
	}
}

// BenchmarkBrokerPull is one PULL_MESSAGE round trip returning 32
// messages of 1 KiB from a whole in-process broker.
func BenchmarkBrokerPull(b *testing.B) {
	c := startCluster(b, nil)
	c.createTopic("Bench", 1)
	body := make([]byte, 1024)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "Bench", BornTimestamp: time.Now().UnixMilli()}
	for range 32 {
		if r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, body); r.Code != protocol.Success {
			b.Fatal(r.Remark)
		}
	}
	wait.For(b, 10*time.Second, "dispatch", func() bool { return c.b.Store().MaxOffset("Bench", 0) == 32 })
	ph := protocol.PullMessageRequestHeader{ConsumerGroup: "g", Topic: "Bench", MaxMsgNums: 32,
		SysFlag: protocol.PullFlagSubscription, Subscription: "*"}
	req := remoting.NewRequest(protocol.PullMessage, protocol.Ext(&ph), nil)
	addr := c.b.Addr()
	b.SetBytes(32 * int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := c.rc.Invoke(ctx, addr, req)
		cancel()
		if err != nil || r.Code != protocol.Success || len(r.Body) < 32*len(body) {
			b.Fatalf("pull: %v %v", err, r)
		}
	}
}
