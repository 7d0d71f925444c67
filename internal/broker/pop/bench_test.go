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

// BenchmarkAck is the ack of one popped message (its record stored) and
// the revive service reading that record back: what each acknowledged
// message costs in this package. The pops are outside the timer.
func BenchmarkAck(b *testing.B) {
	f := newFixture(b)
	bodiesN := make([]string, b.N)
	for i := range bodiesN {
		bodiesN[i] = "m"
	}
	f.put(testTopic, bodiesN...)
	tc, _ := f.topics.Get(testTopic)
	hs := make([]protocol.AckMessageRequestHeader, 0, b.N)
	for len(hs) < b.N {
		r := Request{Group: testGroup, Topic: testTopic, QueueID: 0, MaxMsgNums: MaxPopNums, InvisibleTime: 60_000}
		res := f.svc.Pop(&r, tc)
		if len(res.Parts) == 0 {
			b.Fatalf("pop at %d: nothing", len(hs))
		}
		start := int64(len(hs))
		for i := range res.Parts {
			off := start + int64(i)
			ei := ExtraInfo{CkQueueOffset: start, PopTime: res.Header.PopTime, InvisibleTime: 60_000,
				ReviveQid: res.Header.ReviveQid, Mark: "0", BrokerName: testBroker, QueueID: 0, QueueOffset: off}
			hs = append(hs, protocol.AckMessageRequestHeader{ConsumerGroup: testGroup, Topic: testTopic, QueueID: 0, ExtraInfo: ei.String(), Offset: off})
		}
		res.Release()
		f.now = f.now.Add(time.Millisecond)
	}
	f.svc.Revive(f.now) // the check points read: the timed reads are acks
	b.ReportAllocs()
	b.ResetTimer()
	for i := range hs[:b.N] {
		if st := f.svc.Ack(&hs[i], "bench"); st.Code != protocol.Success {
			b.Fatalf("ack: %+v", st)
		}
		if i%256 == 255 {
			f.svc.Revive(f.now)
		}
	}
	f.svc.Revive(f.now)
}
