//go:build race

package broker_test

// raceEnabled reports a -race build: the official Go client's orderly
// consumer has a data race of its own (processQueue's tree read by the
// consume goroutine while the pull goroutine writes it), which the race
// detector reports as a failure of whatever test runs it.
const raceEnabled = true
