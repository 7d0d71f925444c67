package stats

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkTopicPut is the cost of counting one put (a known topic, from
// parallel goroutines): the whole of what the send path pays.
func BenchmarkTopicPut(b *testing.B) {
	s := newStats(Config{Cluster: "C", IsSystemTopic: func(string) bool { return false }})
	topics := make([]string, 64)
	for i := range topics {
		topics[i] = "Topic" + strconv.Itoa(i)
		s.TopicPut(topics[i], 1, 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.TopicPut(topics[i&63], 1, 1100)
			i++
		}
	})
}

// BenchmarkPutLatency is the cost of recording one put's latency.
func BenchmarkPutLatency(b *testing.B) {
	s := newStats(Config{Cluster: "C"})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.PutLatency(3 * time.Millisecond)
		}
	})
}

// BenchmarkGroupGet is the cost of counting one pull.
func BenchmarkGroupGet(b *testing.B) {
	s := newStats(Config{Cluster: "C"})
	s.GroupGet("G", "T", 1, 1, 0)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.GroupGet("G", "T", 32, 32<<10, time.Millisecond)
		}
	})
}

// BenchmarkSample is one sampling round over 1,000 topics and 1,000
// groups (the sampler's work every 10 s). Run it with a small
// -benchtime (e.g. 100x): each round takes milliseconds.
func BenchmarkSample(b *testing.B) {
	s := newStats(Config{Cluster: "C"})
	for i := range 1000 {
		s.TopicPut("T"+strconv.Itoa(i), 1, 1)
		s.GroupGet("G", "T"+strconv.Itoa(i), 1, 1, 0)
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now = now.Add(10 * time.Second)
		s.tick(now)
	}
}
