// Package commitlog is RocketMQ's CommitLog: every message of every topic,
// appended as records to one sequence of fixed-size segment files
// (internal/store/segment) under <root>/commitlog/.
//
// # Record layout (rocketmq-spec.md §5.1; big-endian; do not change)
//
// The codec lives in internal/message; this is the layout it writes, shown
// for IPv4 born and store hosts and the v1 magic:
//
//	off  size field
//	  0     4 TOTALSIZE            whole record, this field included
//	  4     4 MAGICCODE            0xDAA320A7 (v1)
//	  8     4 BODYCRC              crc32-IEEE(body) & 0x7FFFFFFF, computed by the broker
//	 12     4 QUEUEID
//	 16     4 FLAG
//	 20     8 QUEUEOFFSET          patched under the put lock; 0 for prepared/rollback
//	 28     8 PHYSICALOFFSET       patched under the put lock: segment start + position
//	 36     4 SYSFLAG              0x10: born host IPv6, 0x20: store host IPv6
//	 40     8 BORNTIMESTAMP
//	 48     8 BORNHOST             4-byte IPv4 + int32 port (16 + 4 if IPv6: later fields +12)
//	 56     8 STORETIMESTAMP       patched under the put lock (never decreases along the log)
//	 64     8 STOREHOST            (16 + 4 if IPv6: later fields +12)
//	 72     4 RECONSUMETIMES
//	 76     8 PREPAREDTRANSACTIONOFFSET
//	 84     4 BODYLENGTH
//	 88     n BODY
//	  .     1 TOPICLENGTH          signed byte: topics are at most 127 bytes
//	  .     t TOPIC
//	  .     2 PROPERTIESLENGTH     int16: properties are at most 32767 bytes
//	  .     p PROPERTIES
//
//	TOTALSIZE = 91 + n + t + p (+12 per IPv6 host)
//
// # End of a segment
//
// A record is written only if TOTALSIZE + 8 <= bytes left in the segment.
// Otherwise an 8-byte BLANK filler is written at the write position:
//
//	+----------------------------+----------------------+
//	| bytes left in segment (4)  | 0xCBD43194 BLANK (4) |
//	+----------------------------+----------------------+
//
// the rest of the segment stays zero, and the record goes to the start of
// the next segment. Readers treat BLANK as "continue at the next segment".
// A batch (PutBatch) is placed as one unit: it moves whole.
//
// # Segment preparation
//
// Segments are prepared by the segment package's allocator, ahead of the
// roll that takes them: the next one right after each roll and after Start.
// PrepareSegment (the store calls it before Open returns) has the segment
// the first put writes prepared too, so that no put waits for a zero-fill.
// A segment that cannot be prepared (a full disk: see segment's doc) fails
// the roll: the put answers CREATE_MAPPED_FILE_FAILED at once, not stored,
// and RollErr says why until the allocator's retry succeeds. The log stays
// usable (no sticky failure): its end is the full segment's end.
//
// # Write path (architecture.md; write-path.md strategy B)
//
//	put (any goroutine)              committer / flusher           readers
//	no lock: one clock read, body
//	  CRC, header and topic part
//	  encoded on the stack, queue
//	  cell looked up
//	lock mu: roll if needed,
//	  next queue offset, patch
//	  offsets and store time,
//	  copy header, body, topic
//	  part, properties to ring   --> WriteAt ring -> segment
//	unlock                           (chunks <= 1 MiB), committed++ --> see <= Committed
//	wait for flush (sync) <--------- fdatasync, flushed++, wake waiters
//
// A put's body and properties are copied once in user space (straight from
// the message to the ring); only the ~90-byte header and the topic part are
// encoded before (outside the lock) and copied in. A batch is encoded
// outside the lock and copied in (its records' offsets patched under the
// lock).
// The ring (RingSize, default 16 MiB) holds bytes between the committed and
// the write position; it never spans two segments (a roll commits it first).
// A put that finds the ring full commits inline (back-pressure).
//
// SYNC_FLUSH: no committer; one flusher goroutine loops "commit the ring,
// fdatasync once, complete every waiter whose end <= flushed" (group
// commit); a put waits at most SyncFlushTimeout, then answers
// FLUSH_DISK_TIMEOUT (the record is stored). Puts with NoWait only wake it.
// ASYNC_FLUSH: a committer goroutine writes the ring whenever data is pending
// (a put wakes it when it is idle); the flusher syncs every FlushInterval
// when FlushLeastPages pages are dirty, and any amount every
// FlushThoroughInterval. Segments are preallocated in the background:
// zero-filled and synced for SYNC_FLUSH, sized with ftruncate for ASYNC_FLUSH.
//
// # Failures
//
// A failed WriteAt or Sync makes the log sticky-failed (the kernel may have
// dropped the dirty pages: no later fsync can vouch for them). From then on:
// waiting puts answer FLUSH_DISK_TIMEOUT, new puts SERVICE_NOT_AVAILABLE,
// Err returns the cause and Close returns it. No put ever answers PUT_OK
// for data a failed sync covered. Reopening (recovery) is the way back.
//
// # Recovery
//
// Recover scans from the third-to-last segment (normal) or from an offset
// the caller derives from the checkpoint (abnormal), validating magic,
// length, body CRC and PHYSICALOFFSET, and truncates at the first invalid
// record: a torn tail, zeros, garbage. Unacknowledged data may be lost;
// data acknowledged under SYNC_FLUSH was synced before the answer, so it is
// valid and kept. The bytes after the end in the last segment are zeroed up
// to the last non-zero byte (records cut off behind a torn one must not
// come back after a later append of the same length), and the scanned
// segments are synced, so Flushed() = end holds after Recover.
package commitlog
