// Package lifecycle is the one way a background loop starts and stops.
//
// A Loop owns one goroutine. Its life is a small state machine guarded by a
// mutex, so every method is safe for concurrent callers:
//
//	idle --Start--> running --Close--> closed
//	idle --Close--> closed   (a later Start runs nothing and reports false)
//
// The methods:
//
//   - Start(name, run) runs run on a new goroutine under the pprof label
//     rocketd=name. run gets a context that is cancelled by Close; its Done
//     channel is the loop's quit signal. Start runs at most once per Loop.
//   - Kick wakes the loop without blocking: Kicked is a channel of capacity 1,
//     so any number of kicks before the loop looks coalesce into one wake-up
//     (a put path may kick on every record).
//   - Close cancels the context and waits until run has returned. It is
//     idempotent: every caller, concurrent or later, returns only once the
//     goroutine is gone. Close on a Loop that never started returns at once
//     and keeps it from starting.
//   - Cancel is Close without the wait, for an owner that gives several
//     loops one grace period together; it then calls Close.
//   - Done is closed once the goroutine has exited (or at Close when it
//     never started), for owners that must notice a loop ending by itself.
//
// The zero Loop is ready to use. A Loop is not restarted: an owner that
// restarts a service makes a new Loop.
//
// A loop that fails the same way every round logs through a
// lograte.Limiter, so a stuck disk or a dead peer costs one line per interval.
package lifecycle
