// Package wait is the one way tests wait for a condition: poll it until it
// holds or a deadline passes, then fail the test naming what was awaited.
// Only _test.go files import it.
package wait

import (
	"testing"
	"time"
)

// poll is how often the condition is tried again: short enough to keep
// tests quick, long enough not to starve the goroutines being waited on.
const poll = 2 * time.Millisecond

// For polls cond until it returns true; after d it fails t with what.
func For(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(poll)
	}
}
