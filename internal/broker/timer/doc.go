// Package timer delivers messages at an arbitrary time: RocketMQ 5's timer
// messages (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS; spec §9.3),
// without RocketMQ's 3-day window (timerMaxDelaySec may be a year or more).
//
// # Flow
//
// The send path calls Hold: the message is stored in the CommitLog under
// topic rmq_sys_wheel_timer, queue 0, with TIMER_OUT_MS (delivery time,
// epoch ms), REAL_TOPIC and REAL_QID. The CommitLog record is the message's
// only copy until delivery. A Service (one goroutine) reads that queue,
// files a 20-byte entry per message into a time bucket on disk, loads a
// bucket into an in-memory min-heap shortly (1 s) before the bucket
// starts, and when an entry is due reads the held record and puts it to its
// real topic and queue (REAL_TOPIC/REAL_QID removed, everything else
// kept). It sleeps until the earliest loaded entry is due, at most 100 ms
// (the poll for newly held messages), and is woken by Notify (the broker
// calls it from a store arrival listener) when a message is held. Delivery is never early: the
// delivery time is not rounded down as RocketMQ does.
//
// # Cost
//
// Insert: one 20-byte append to the bucket of the delivery time (plus the
// record for a far message; batched per enqueue round, one write per
// bucket), whatever the delay: there are no rounds, no cascading and no
// re-insertion. A bucket is read once
// (sequentially) when its time comes; each entry then costs a heap push and
// pop (O(log n) of the loaded entries only). Memory: 32 bytes per entry of
// the loaded buckets (the current bucket width, default 10 min, of
// messages), plus 8+8 bytes per bucket file in the index; entries of
// later buckets cost no memory, 20 bytes of disk each. A year of delay is
// one bucket file name further.
//
// # Measured (BenchmarkTimerHour, 2 shared cores, other builds running)
//
//	go test -run '^$' -bench BenchmarkTimerHour -benchtime 1x \
//	    ./internal/broker/timer/ -timer.pending 1000000 [-timer.spread 48h]
//
// 1,000,000 messages due uniformly over the next hour, plus 1,000 due in
// 1-3 s sent among them: 290k-990k puts/s through Hold + CommitLog,
// filed at 280k-950k/s (keeps up with the puts), 20 bytes of disk and
// 2-8 bytes of Go heap per pending message (only the current 10-minute
// bucket, 80k-150k entries, is in memory), sample lateness p50 0-1 ms,
// p99 1-5 ms on a quiet machine (160-340 ms under load average 6-7).
// Spread over 48 h (every message copied into its bucket): 279 bytes of
// disk per message, ~1 byte of heap, filed at ~290k/s.
// Memory per million pending messages: ~0 for messages in later buckets;
// 32 MB (32 bytes an entry, plus slice growth) for a million due within
// the same bucket width.
//
// # Files (<root>/timerbuckets/, all integers big-endian)
//
// (Not RocketMQ 5's <root>/timerlog and <root>/timerwheel, whose formats
// differ: a store directory of a Java broker is never misread.)
//
// Bucket files, named by the bucket's start time (epoch ms, 20 decimal
// digits, zero-padded; start = deliverMs - deliverMs mod width), are
// append-only sequences of entries in arrival order:
//
//	+-----------------+-----------------+-------------+----------------------+
//	| deliverMs int64 | phyOffset int64 | size  int32 | record (-size bytes) |
//	+-----------------+-----------------+-------------+----------------------+
//	  delivery time     CommitLog offset  > 0: record   only when size < 0:
//	                    of the held       size in the   a copy of the held
//	                    record            CommitLog     record (spec §5.1)
//
// A message due more than CopyAfter (1 h) after it is filed is copied into
// its bucket (negative size): its delivery does not depend on the CommitLog
// keeping the record (fileReservedTime, 72 h), so a year works. Nearer
// messages are 20-byte references. A held record deleted from the CommitLog
// before its delivery anyway (disk-full cleaning) is logged and dropped
// rather than blocking the others. A torn tail (a crash in the middle of
// an append) is cut when the bucket is loaded. A bucket is deleted once
// the saved watermark is past its end.
//
// checkpoint (20 bytes, replaced atomically via checkpoint.tmp + rename):
//
//	+---------------------+-------------------+--------------+
//	| enqueueOffset int64 | watermarkMs int64 | CRC32 uint32 |
//	+---------------------+-------------------+--------------+
//	  next offset of the    every entry due     IEEE CRC of
//	  timer queue to read   before it has been  the first 16
//	                        delivered           bytes
//
// The checkpoint is saved every CheckpointInterval (1 s) and on Close,
// after the bucket files were synced.
//
// timermetrics (JSON, GET_TIMER_METRICS; replaced by rename just before
// each checkpoint save, not synced: the counts are approximate and an
// unreadable file only resets them):
//
//	{"timingCount":{"TopicA":{"count":2,"timeStamp":1733100000000}}}
//
// count is the held messages of that real topic filed and not yet
// delivered; timeStamp (ms) when it last changed.
//
// recalls (replaced atomically via vfs.WriteFileAtomic when the set
// changed, before the checkpoint; removed when empty; all integers
// big-endian):
//
//	+--------------+------------------------------------------+--------------+
//	| count uint32 | count x (deliverMs int64, keyLen uint16, | CRC32 uint32 |
//	|              |          key [keyLen]byte)               | of the rest  |
//	+--------------+------------------------------------------+--------------+
//
// One row per recalled message not yet due: its delivery time
// (TIMER_OUT_MS) and Java's delete key "<realTopic>+<UNIQ_KEY>".
//
// # Snapshot (rocketmq_timer_message_snapshot; snapshot.go)
//
// Snapshot counts the held messages due within 5 s, 1 min, 5 min, 15 min,
// 1 h, 4 h, 8 h and 24 h (each range from the previous bound), as Java's
// per-second wheel slots give it. The goroutine keeps a count per
// delivery second for the next 24 h (plus a bucket width and an hour of
// margin: 4 bytes a second, allocated with the first held message), kept
// in memory only. Each bucket file is read once (deduplicated, as a load)
// when the bucket comes within 24 h, at most one per round; an entry
// filed into a bucket already read is counted at once; an entry leaving
// the heap (delivered, recalled, dropped) is subtracted; slots of past
// seconds are cleared as the clock moves. After a start Snapshot reports
// nothing (ok false) until every bucket file within 24 h has been read.
// A bucket's second read costs one sequential read of its file (20 bytes
// an entry, plus the copies skipped over).
//
// # Recall (RECALL_MESSAGE, gRPC RecallMessage)
//
// A send of a single timer message answers Java's recall handle
// (RecallHandle: Base64 of "v1 topic brokerName TIMER_OUT_MS+1 uniqKey").
// Recalling it puts a marker to Topic, as Java's RecallMessageProcessor
// does: body "0", tag _RECALL_TAG_, TIMER_DEL_UNIQKEY = the delete key,
// TIMER_OUT_MS = the message's delivery time (RecallMarker). The service
// never delivers a marker: reading one from the queue adds its row to the
// recalls set, written to the recalls file before the checkpoint passes
// the marker, so a recall survives kill -9 (from the file, or from the
// marker re-read from the queue). The recall request also calls Recall,
// which takes effect at once and, under the lock each delivery takes to
// record the highest delivery time handed out, answers TooLate when an
// entry due at or after the message's time was delivered: a recall is
// either in time (the message is never delivered: dropped when due,
// counted in Stats.Recalled) or refused, never both. A row leaves the set
// once the watermark has passed the message's time and the marker was
// filed (its message, earlier in the queue, was then surely handled).
// Unlike Java, a marker is not an entry of the wheel: a bucket load
// reads no record to find markers.
//
// After an outage, overdue buckets are loaded one at a time (the next one
// when the heap has drained to its start): memory stays about one bucket.
//
// # Restart and the duplicate bound
//
// After a crash the queue is read again from the saved enqueueOffset before
// any bucket is loaded: entries appended since the save are appended again,
// and loading a bucket drops entries with an already seen CommitLog offset,
// so they are delivered once. Entries due before the saved watermark are
// skipped. What may be delivered twice (at-least-once) is what was
// delivered after the last save: at most one CheckpointInterval (1 s) of
// deliveries, plus a past-due message read again after the crash if it had
// already been delivered. Nothing is lost: the watermark only passes an
// entry after its put succeeded, and enqueueOffset only passes a message
// whose entry is synced in its bucket file. Without a checkpoint (lost
// file) every bucket is replayed from its first entry.
//
// # Taking over from another master (Config.Takeover)
//
// Bucket files are not replicated: a promoted slave has none of its old
// master's. Its broker drops its own timer directory and starts the
// service with the old master's checkpoint (queue offset E, watermark W,
// as the slave last copied it). The timer queue, which is replicated, is
// read again from its start: a message below E due before W was
// delivered by the old master and is skipped; every other one is filed
// (one due before W at W, that is at once), so what the old master held
// and had not delivered is delivered here once. What the old master
// delivered after the copy (it is refreshed every slave sync round; the
// old master saves every CheckpointInterval) may come twice. A crash
// while the queue below E is read again loses the takeover (the next
// start has only its own checkpoint, or none): messages re-read then and
// already due are delivered again. Held records the CommitLog no longer has
// (fileReservedTime) are not re-read.
package timer
