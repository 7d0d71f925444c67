// Package schedule delivers delay-level messages (RocketMQ's
// ScheduleMessageService, rocketmq-spec.md §9.2).
//
// The CommitLog parks a message carrying DELAY=n in SCHEDULE_TOPIC_XXXX,
// queue n-1, with REAL_TOPIC/REAL_QID; the dispatcher stores the delivery
// time (store time + level delay, epoch ms) as the unit's tags code. A
// Service runs one goroutine per level: it reads the level's queue from the
// offset saved in config/delayOffset.json and, for each unit in order,
// sleeps until the delivery time and re-puts the message to its real topic
// and queue: DELAY removed (so it is not parked again), body, flags,
// born/store data, reconsume times and every other property kept; the
// dispatcher recomputes the tags code from TAGS. Units of one level are in
// delivery-time order (constant delay, increasing store time), so the head
// unit is always the next one due and the goroutine sleeps exactly until it
// (no scan, no fixed tick). An empty queue is polled every half level
// delay (20 ms .. 1 s): a new message is seen before it is due.
//
// Progress file (config/delayOffset.json, RocketMQ's format, written by
// meta.DelayOffsets):
//
//	{"offsetTable":{1:12,2:0,...}}   level (1-based) -> next queue offset
//
// It is saved every flushDelayOffsetInterval (10 s) and on Close.
//
// At-least-once bound: a message is acknowledged in memory right after its
// put succeeds; a crash (SIGKILL) re-delivers the messages of each level
// delivered since the last save, at most one save interval (10 s) of
// deliveries per level. A clean Close saves the offsets after the loops
// stopped: nothing is delivered twice. Nothing is lost: the offset only
// moves past a unit after its put succeeded.
package schedule
