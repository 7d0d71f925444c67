// Package consumequeue implements RocketMQ's ConsumeQueue (rocketmq-spec.md
// §6.3): per (topic, queueId), a dense array of fixed-size units, unit N for
// logical queue offset N, each pointing at one record of the CommitLog.
//
// Directory and file naming:
//
//	<root>/consumequeue/<topic>/<queueId>/<20-digit byte offset>
//
// queueId is the decimal queue id (other directory names are ignored). A file
// holds UnitsPerFile units (300,000 by default: 6,000,000 bytes) and is
// created at full size, zero-filled; its name is the logical byte offset
// (queue offset × 20) of its first unit, zero-padded to 20 digits:
// 00000000000000000000, 00000000000006000000, ...
//
// Unit layout (20 bytes, big-endian; do not change):
//
//		+----------------------+------------+----------------------+
//		| commitlog offset (8) |  size (4)  |    tags code (8)     |
//		+----------------------+------------+----------------------+
//		0                      8            12                     20
//
//	  - commitlog offset: int64, physical offset of the record.
//	  - size: int32, TOTALSIZE of the record.
//	  - tags code: int64, Java String.hashCode of the TAGS property
//	    (sign-extended; 0 without a tag), or for SCHEDULE_TOPIC_XXXX the
//	    delivery time in ms.
//
// A unit is valid while offset >= 0 && size > 0; the zero bytes after the last
// unit are therefore invalid and end the queue on recovery. A queue whose
// first file starts in the middle of the queue (its first unit is for a
// non-zero offset) is padded at the front of that file with filler units
// (0, MaxInt32, 0); fillers are valid for recovery but lie below the queue's
// min offset and are never returned to readers as messages.
//
// Durability: Flush syncs the files with unsynced units. In addition a file
// is synced when it fills up, before the next file is created, so a file is
// never durable while an earlier one is not: recovery takes every file before
// the last three as full without scanning it (as RocketMQ does), which is
// only safe with that order. A new file's directory entry (and the topic
// and queue directories made for it) become durable at the next Flush,
// which syncs each directory once for all the queues created since, or
// when the file is full and synced before its successor is created; until
// then a crash may lose the new file, which is the newest of its queue, so
// no earlier file is missing after it.
// Truncation and recovery zero the bytes after the
// new end, so that stale units can never reappear as valid after a crash.
//
// Files: the list of a queue's files, their naming, lookup by offset,
// truncation and deletion are package segment's (a segment.Queue per
// queue, created in place, with gaps allowed); this package owns what the
// files hold (units) and when they are synced.
//
// Descriptors: a queue keeps its file list and positions in memory and
// opens a file only to use it, through the Options.Files cache (package
// fdcache), which keeps at most its cap of files open, closing the least
// recently used idle ones (a written file is synced before it is closed).
// So a store with 100,000 queues needs no more descriptors than the cap:
// loading a Set only lists and stats files, and recovery opens each scanned
// file once, one at a time.
//
// Write side: one writer (the store's dispatcher, or recovery) calls Append
// for each record and Commit once per batch; Commit writes the pending units
// of the batch with one WriteAt per file touched, and only then are they
// visible to readers (MaxOffset, Read). Flush makes written units durable.
//
// Read side: Read preads the units asked for, except that a sequential
// reader's queue reads up to 256 units ahead and serves the next reads from
// that block (readahead.go); Truncate, Recover and Destroy invalidate it.
package consumequeue
