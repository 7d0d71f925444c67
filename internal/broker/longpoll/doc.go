// Package longpoll holds pull requests that found no message: Java's
// PullRequestHoldService (rocketmq-spec.md §13.2; go-client-wire.md §0
// item 9: the Go client re-pulls at once after PULL_NOT_FOUND, so without
// holding it would spin).
//
// # Flow
//
//	PULL_MESSAGE -> store: nothing at offset (PULL_NOT_FOUND), SUSPEND flag set,
//	                not a replay
//	  -> Holder.Hold(Request{Topic, QueueID, Offset, Timeout, Match, Conn, Wake})
//	       Held: the processor answers nothing now
//	       other status: the processor answers PULL_NOT_FOUND at once
//	store dispatch -> arrival listener -> Holder.Notify(topic, queueId, maxOffset, tagsCode)
//	  -> requests of topic@queueId with Offset < maxOffset and Match(tagsCode)
//	     are unlinked and handed to a worker, which calls Wake
//	deadline (Timeout capped at MaxSuspend) -> Wake on a worker
//	connection closed -> Holder.DropConn(conn): forgotten, Wake never runs
//
// Wake re-runs the pull with suspension not allowed and without committing
// the offset, and writes the response with the original opaque; a re-run
// after the deadline answers whatever the store says then (usually
// PULL_NOT_FOUND with nextBeginOffset = the request's offset).
//
// # Timing
//
// Deadlines live in a min-heap served by one timer goroutine that sleeps
// until the earliest one, so a 15 s hold ends at 15 s (not at the next tick
// of a coarse checker as in Java, where it may take 5 s more). Wake-ups run
// on Config.Workers goroutines in arrival order; Notify itself only moves
// requests from the tables to the workers' queue and never blocks on I/O,
// so it can run on the store's dispatcher goroutine.
//
// Lost wake-ups: a message may be announced after the pull read the queue
// and before Hold linked the request. With Config.MaxOffset set, Hold
// looks at the queue's max offset after linking and wakes the request if a
// message is already there; a periodic recheck (every RecheckInterval, 5 s,
// as Java's checker) catches anything else.
//
// Short polling (Config.ShortPolling, longPollingEnable=false): every
// request is held ShortPollingTime (1 s) and arrivals do not wake it.
//
// # Bounds
//
// At most MaxPerQueue requests per queue and MaxTotal in all; Hold refuses
// more (QueueFull, Full) and the caller answers at once. Many consumers of
// one queue (broadcasting, many groups) are the case the per-queue cap is
// for.
//
// # Shutdown
//
// Close wakes nothing: held requests, and woken ones no worker has started
// yet, are dropped without an answer (the broker closes the connections
// next; a client whose connection survives times out and retries). Wake
// calls already running are waited for; the goroutines are stopped.
//
// # Concurrency
//
// One mutex guards the tables (per-queue slices, the deadline heap, the
// per-connection sets, the ready queue). Request.Match runs under it;
// Wake and Config.MaxOffset run without it.
package longpoll
