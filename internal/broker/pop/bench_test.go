package pop

import (
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// BenchmarkPopAck is one pop of one message (check point stored) and its
// ack (ack record stored): the per-message cost of POP consumption
// besides the network.
func BenchmarkPopAck(b *testing.B) {
	f := newFixture(b)
	bodiesN := make([]string, b.N)
	for i := range bodiesN {
		bodiesN[i] = "m"
	}
	f.put(testTopic, bodiesN...)
	tc, _ := f.topics.Get(testTopic)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := Request{Group: testGroup, Topic: testTopic, QueueID: 0, MaxMsgNums: 1, InvisibleTime: 60_000}
		res := f.svc.Pop(&r, tc)
		if len(res.Parts) != 1 {
			b.Fatalf("pop %d: %d messages", i, len(res.Parts))
		}
		res.Release()
		ei := ExtraInfo{CkQueueOffset: int64(i), PopTime: res.Header.PopTime, InvisibleTime: 60_000,
			ReviveQid: res.Header.ReviveQid, Mark: "0", BrokerName: testBroker, QueueID: 0, QueueOffset: int64(i)}
		h := protocol.AckMessageRequestHeader{ConsumerGroup: testGroup, Topic: testTopic, QueueID: 0, ExtraInfo: ei.String(), Offset: int64(i)}
		if st := f.svc.Ack(&h, "bench"); st.Code != protocol.Success {
			b.Fatalf("ack: %+v", st)
		}
		f.now = f.now.Add(time.Millisecond)
	}
}
