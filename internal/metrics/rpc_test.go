package metrics

import (
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

func TestRPCLatencyLabelsAndBuckets(t *testing.T) {
	r := NewRPC(BaseLabels("c1", "b1"))
	r.ObserveRequest(protocol.SendMessageV2, protocol.Success, false, 2*time.Millisecond)
	r.ObserveRequest(protocol.SendMessageV2, protocol.Success, false, 50*time.Millisecond)
	r.ObserveRequest(protocol.SendMessageV2, protocol.SystemBusy, false, 0)
	r.ObserveRequest(protocol.HeartBeat, protocol.Success, true, time.Millisecond)
	r.ObserveRequest(999999, 4242, false, 5*time.Second) // unknown codes pool into "other"
	mfs := gather(t, r)
	base := []string{"cluster=c1", "node_type=broker", "node_id=b1", "protocol_type=remoting", "is_long_polling=false"}
	send := append(append([]string(nil), base...), "request_code=send_message_v2", "response_code=success", "result=success")
	if n := value(t, mfs, "rocketmq_rpc_latency", send...); n != 2 {
		t.Fatalf("send samples %v, want 2", n)
	}
	if n := value(t, mfs, "rocketmq_rpc_latency", "request_code=send_message_v2", "response_code=system_busy"); n != 1 {
		t.Errorf("busy samples %v, want 1", n)
	}
	if n := value(t, mfs, "rocketmq_rpc_latency", "request_code=heart_beat", "result=oneway"); n != 1 {
		t.Errorf("oneway samples %v, want 1", n)
	}
	if n := value(t, mfs, "rocketmq_rpc_latency", "request_code=other", "response_code=other"); n != 1 {
		t.Errorf("unknown-code samples %v, want 1", n)
	}
	// Buckets are cumulative over Java's bounds (ms): 2 ms falls in le=3,
	// 50 ms in le=100.
	for _, m := range mfs["rocketmq_rpc_latency"].GetMetric() {
		h := m.GetHistogram()
		if h.GetSampleCount() != 2 {
			continue
		}
		want := map[float64]uint64{1: 0, 3: 1, 5: 1, 7: 1, 10: 1, 100: 2, 1000: 2, 2000: 2, 3000: 2}
		for _, b := range h.GetBucket() {
			if want[b.GetUpperBound()] != b.GetCumulativeCount() {
				t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want[b.GetUpperBound()])
			}
		}
		if h.GetSampleSum() != 52 {
			t.Errorf("sum %v ms, want 52", h.GetSampleSum())
		}
	}
}

// BenchmarkObserveRequest is the remoting server's per-request cost of
// rocketmq_rpc_latency: it must not allocate.
func BenchmarkObserveRequest(b *testing.B) {
	r := NewRPC(BaseLabels("c", "b"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.ObserveRequest(protocol.SendMessageV2, protocol.Success, false, 3*time.Millisecond)
		}
	})
}

func TestObserveRequestAllocatesNothing(t *testing.T) {
	r := NewRPC(BaseLabels("c", "b"))
	r.ObserveRequest(protocol.PullMessage, protocol.PullNotFound, false, time.Millisecond) // makes the cell
	if n := testing.AllocsPerRun(1000, func() {
		r.ObserveRequest(protocol.PullMessage, protocol.PullNotFound, false, time.Millisecond)
	}); n != 0 {
		t.Fatalf("%v allocations per observed request", n)
	}
}
