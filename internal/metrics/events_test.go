package metrics

import (
	"fmt"
	"testing"
)

// TestEventsTransactionsAndDLQ: half messages counted per real topic
// until settled, commits and rollbacks counted, the finish latency in
// Java's buckets (seconds), DLQ sends per group and topic.
func TestEventsTransactionsAndDLQ(t *testing.T) {
	e := NewEvents(BaseLabels("c", "b"))
	for range 3 {
		e.HalfPut("T")
	}
	e.HalfPut("U")
	e.Finished("T", true, 1_000, 8_000) // 7 s: bucket 60
	e.Finished("T", false, 1_000, 2_000)
	e.Finished("U", false, 0, 0)
	e.Finished("U", false, 0, 0) // a settlement of a half counted before a restart: stays at 0
	e.HalfPut("V")
	e.HalfDone("V")
	e.SentToDLQ("g1", "%RETRY%g1", false)
	e.SentToDLQ("g1", "%RETRY%g1", false)
	e.SentToDLQ("CID_RMQ_SYS_X", "T", false)
	e.RevivedToRetryFunc()("g1", "T", "PUT_OK")

	mfs := gather(t, e)
	for _, c := range []struct {
		name string
		want float64
		l    []string
	}{
		{"rocketmq_half_messages", 1, []string{"topic=T", "cluster=c", "node_type=broker", "node_id=b"}},
		{"rocketmq_half_messages", 0, []string{"topic=U"}},
		{"rocketmq_half_messages", 0, []string{"topic=V"}},
		{"rocketmq_commit_messages_total", 1, []string{"topic=T"}},
		{"rocketmq_rollback_messages_total", 1, []string{"topic=T"}},
		{"rocketmq_rollback_messages_total", 2, []string{"topic=U"}},
		{"rocketmq_finish_message_latency", 1, []string{"topic=T"}},
		{"rocketmq_send_to_dlq_messages_total", 2, []string{"consumer_group=g1", "topic=%RETRY%g1", "is_system=false"}},
		{"rocketmq_send_to_dlq_messages_total", 1, []string{"consumer_group=CID_RMQ_SYS_X", "topic=T", "is_system=true"}},
		{"rocketmq_pop_revive_retry_messages_total", 1, []string{"consumer_group=g1", "topic=T", "put_status=PUT_OK"}},
	} {
		if got := value(t, mfs, c.name, c.l...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.l, got, c.want)
		}
	}
	h := mfs["rocketmq_finish_message_latency"].GetMetric()[0].GetHistogram()
	for _, b := range h.GetBucket() {
		want := uint64(1)
		if b.GetUpperBound() < 60 {
			want = 0
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("finish latency bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	if h.GetSampleSum() != 7 {
		t.Errorf("finish latency sum %v, want 7 (seconds, as Java records)", h.GetSampleSum())
	}
}

// TestNilEventsRecordNothing: a nil *Events (metrics off) is safe.
func TestNilEventsRecordNothing(t *testing.T) {
	var e *Events
	e.HalfPut("T")
	e.HalfDone("T")
	e.Finished("T", true, 0, 0)
	e.SentToDLQ("g", "T", false)
	e.RevivedToRetry("g", "T", "PUT_OK")
	e.RevivePut("g", "T", false, "PUT_OK")
	e.ReviveGot("g", "T", 0, true)
	if e.RevivedToRetryFunc() != nil {
		t.Error("nil Events gave a callback")
	}
}

// BenchmarkEventsHalfPut: the per-half-message cost once the topic's
// cell exists (no allocation, no lock).
func BenchmarkEventsHalfPut(b *testing.B) {
	e := NewEvents(BaseLabels("c", "b"))
	e.HalfPut("T")
	b.ReportAllocs()
	for b.Loop() {
		e.HalfPut("T")
	}
}

func TestEventsAllocateNothingOnceKnown(t *testing.T) {
	e := NewEvents(BaseLabels("c", "b"))
	e.HalfPut("T")
	e.SentToDLQ("g", "T", false)
	e.RevivePut("g", "T", false, "PUT_OK")
	e.ReviveGot("g", "T", 1, false)
	if n := testing.AllocsPerRun(100, func() {
		e.HalfPut("T")
		e.Finished("T", true, 0, 1000)
		e.SentToDLQ("g", "T", false)
		e.RevivePut("g", "T", false, "PUT_OK") // per ack: the hot one
		e.ReviveGot("g", "T", 1, false)
	}); n != 0 {
		t.Errorf("%v allocations per event, want 0", n)
	}
}

// BenchmarkEventsRevivePut: the per-ack cost of
// rocketmq_pop_revive_in_message_total once the series exists.
func BenchmarkEventsRevivePut(b *testing.B) {
	e := NewEvents(BaseLabels("c", "b"))
	e.RevivePut("group", "topic", false, "PUT_OK")
	b.ReportAllocs()
	for b.Loop() {
		e.RevivePut("group", "topic", false, "PUT_OK")
	}
}

// TestSetHalfCounts: rebuilt counts replace the loaded ones; a topic the
// rebuild did not find drops to 0.
func TestSetHalfCounts(t *testing.T) {
	e := NewEvents(BaseLabels("c", "b"))
	e.AddHalf("A", 5)
	e.AddHalf("B", 2)
	e.SetHalfCounts(map[string]int64{"A": 1, "C": 3})
	if got := fmt.Sprint(e.HalfCounts()); got != "map[A:1 B:0 C:3]" {
		t.Fatalf("half counts %s", got)
	}
}
