package pace

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newWaiter(t testing.TB) *Waiter {
	w, err := NewWaiter()
	if err != nil {
		t.Logf("falling back: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestNeverEarly: a wait returns at or after its due time, over short and
// longer (coarse then precise) waits.
func TestNeverEarly(t *testing.T) {
	w := newWaiter(t)
	for _, d := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, 1500 * time.Microsecond, 25 * time.Millisecond} {
		for range 5 {
			due := time.Now().Add(d)
			if !w.WaitUntil(context.Background(), due) {
				t.Fatal("wait reported not reached")
			}
			if now := time.Now(); now.Before(due) {
				t.Fatalf("%v wait returned %v early", d, due.Sub(now))
			}
		}
	}
}

func TestPastDueAndCancel(t *testing.T) {
	w := newWaiter(t)
	if !w.WaitUntil(context.Background(), time.Now().Add(-time.Second)) {
		t.Fatal("past due: want true")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if w.WaitUntil(ctx, time.Now().Add(time.Hour)) {
		t.Fatal("cancelled context: want false")
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	done := make(chan bool)
	go func() { done <- w.WaitUntil(ctx, time.Now().Add(time.Hour)) }()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("cancelled mid-wait: want false")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled wait did not return")
	}
}

// BenchmarkLateness reports how late waits of 300 us return, for the
// Waiter and for time.Sleep, on an otherwise idle process: the reason the
// package exists.
//
//	go test -run '^$' -bench Lateness ./internal/pace/
func BenchmarkLateness(b *testing.B) {
	for _, c := range []struct {
		name string
		wait func(w *Waiter, d time.Duration)
	}{
		{"waiter", func(w *Waiter, d time.Duration) { w.WaitUntil(context.Background(), time.Now().Add(d)) }},
		{"time.Sleep", func(_ *Waiter, d time.Duration) { time.Sleep(d) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := newWaiter(b)
			const d = 300 * time.Microsecond
			late := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				c.wait(w, d)
				late = append(late, time.Since(start)-d)
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2].Microseconds()), "late-p50-us")
			b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "late-p99-us")
		})
	}
}
