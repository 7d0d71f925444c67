package role

import (
	"errors"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	b := backoff{min: time.Second, max: 5 * time.Second}
	var waits []time.Duration
	for range 5 {
		waits = append(waits, b.wait())
	}
	if want := []time.Duration{1, 2, 4, 5, 5}; !equalSeconds(waits, want) {
		t.Fatalf("waits %v, want %v s", waits, want)
	}
	b.reset()
	now := time.Unix(1000, 0)
	if !b.due(now) || b.due(now.Add(999*time.Millisecond)) || !b.due(now.Add(time.Second)) ||
		b.due(now.Add(2*time.Second)) || !b.due(now.Add(3*time.Second)) {
		t.Fatal("due not at 0, 1 s, 3 s")
	}
	b.reset()
	if !b.due(now.Add(3500 * time.Millisecond)) {
		t.Fatal("not due after reset")
	}
}

func equalSeconds(got, want []time.Duration) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i]*time.Second {
			return false
		}
	}
	return true
}

func TestFailureLog(t *testing.T) {
	var f failureLog
	now := time.Unix(1000, 0)
	errA, errB := errors.New("a"), errors.New("b")
	logged := func(err error, at time.Duration) int {
		n, ok := f.failed(err, now.Add(at))
		if !ok {
			return 0
		}
		return n
	}
	if n := logged(errA, 0); n != 1 {
		t.Fatalf("first failure: n=%d, want logged (1)", n)
	}
	if logged(errA, time.Second) != 0 || logged(errA, 2*time.Second) != 0 {
		t.Fatal("a repeated failure was logged within failureLogEvery")
	}
	if n := logged(errA, failureLogEvery); n != 3 {
		t.Fatalf("after failureLogEvery: n=%d, want 3 (the two suppressed and this one)", n)
	}
	if n := logged(errB, failureLogEvery+time.Second); n != 1 {
		t.Fatalf("another error: n=%d, want logged at once", n)
	}
	if !f.recovered() || f.recovered() {
		t.Fatal("recovered: want true once after failures, then false")
	}
}
