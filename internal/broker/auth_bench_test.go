package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// BenchmarkBrokerSendAuthenticated is BenchmarkBrokerSend against a broker
// with authenticationEnabled: the request is signed once and sent as is
// through an unsigned client, so the figure is the broker's cost only
// (the goal: within 10 % of BenchmarkBrokerSend).
func BenchmarkBrokerSendAuthenticated(b *testing.B) {
	c := startAuthCluster(b, "")
	c.createTopic("Bench", 1)
	body := make([]byte, 1024)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "Bench", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli(), Properties: "TAGS\x01a\x02KEYS\x01k1"}
	req := remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), body)
	authAdmin.Sign(req)
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	addr := c.b.Addr()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := rc.Invoke(ctx, addr, req)
		cancel()
		if err != nil || r.Code != protocol.Success {
			b.Fatalf("send: %v %v", err, r)
		}
	}
}
