//go:build race

package ha_test

// raceEnabled reports a -race build: the official Go client's pull
// consumer writes a queue's state in PullFrom while its rebalance goroutine
// reads it without a lock, which the race detector reports as a failure of
// whatever test runs it.
const raceEnabled = true
