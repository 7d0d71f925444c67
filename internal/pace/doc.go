// Package pace waits until a moment with microsecond precision, for load
// generators that send at a fixed rate (rocketctl bench --rate, the
// side-by-side harness).
//
// Why not time.Sleep: when every P is idle, the Go runtime (as of Go 1.26)
// parks in epoll_pwait, whose timeout is whole milliseconds, so a sleep of
// 300 us returns after about 1 ms and a sleep of 1.5 ms after about 2 ms.
// A paced sender measures latency from each send's due time (no
// coordinated omission), so that lateness of the sender's own timer would
// be counted as the broker's latency: on this project's 2-core machine it
// put ~1 ms into the p90 of a 20k msgs/s run.
//
// On Linux a Waiter arms a timerfd (hrtimer precision) and reads it
// through the runtime's network poller: the readiness of the fd wakes the
// poller at once, without any thread blocked in a syscall. Elsewhere it
// falls back to time.Sleep.
package pace
