package longpoll

import (
	"sync"
	"testing"
	"time"
)

// BenchmarkNotifyNothingHeld is the dispatcher's cost per message when no
// pull waits.
func BenchmarkNotifyNothingHeld(b *testing.B) {
	h, _ := New(Config{})
	_ = h.Start()
	defer h.Close()
	b.ReportAllocs()
	for b.Loop() {
		h.Notify("T", 0, 1, 0)
	}
}

// BenchmarkNotifyNoMatch: 100 requests held on the queue, none matching
// the arriving tag (a busy topic with a selective consumer).
func BenchmarkNotifyNoMatch(b *testing.B) {
	h, _ := New(Config{})
	_ = h.Start()
	defer h.Close()
	for range 100 {
		h.Hold(Request{Topic: "T", Timeout: time.Hour, Match: func(tc int64) bool { return tc == 1 }, Wake: func() {}})
	}
	b.ReportAllocs()
	for b.Loop() {
		h.Notify("T", 0, 1, 2)
	}
}

// BenchmarkHoldWake is one long-poll round: hold, the arrival, the wake on
// a worker.
func BenchmarkHoldWake(b *testing.B) {
	h, _ := New(Config{})
	_ = h.Start()
	defer h.Close()
	var wg sync.WaitGroup
	wake := func() { wg.Done() }
	b.ReportAllocs()
	for b.Loop() {
		wg.Add(1)
		if h.Hold(Request{Topic: "T", Offset: 0, Timeout: time.Hour, Wake: wake}) != Held {
			b.Fatal("not held")
		}
		h.Notify("T", 0, 1, 0)
		wg.Wait()
	}
}
