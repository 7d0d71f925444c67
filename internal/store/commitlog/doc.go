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
//	unlock                           (chunks <= 1 MiB); the whole
//	                                 run written: committed = head --> see <= Committed
//	wait for the write  <----------- wake the puts it covers
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
// Every put waits until its record is written to the file (the committed
// position covers it) before it is answered, whatever the flush mode: a
// record still in the ring can be taken back by a failed write, so it is
// never acknowledged. The committed position moves once per commit run, to
// the head the run started from (a record boundary), never to a chunk end.
//
// SYNC_FLUSH: no committer; one flusher goroutine loops "commit the ring,
// fdatasync once, complete every waiter whose end <= flushed" (group
// commit); a put waits at most SyncFlushTimeout, then answers
// FLUSH_DISK_TIMEOUT (the record is stored). A put with NoWait (WAIT=false)
// writes the ring itself, wakes the flusher and does not wait for the sync.
// ASYNC_FLUSH: a committer goroutine writes the ring whenever data is pending
// and answers the puts it wrote; a put that finds it idle writes the ring
// itself (no goroutine switch under light traffic), after one yield when
// the put says more follow (PutOptions.Gather: a pipelining producer, gRPC
// sends, POP ack records), so
// that the puts already runnable append first and one write takes them
// all; the flusher syncs every FlushInterval when FlushLeastPages pages are dirty,
// and any amount every FlushThoroughInterval. Segments are preallocated in
// the background: zero-filled and synced for SYNC_FLUSH, sized with
// ftruncate for ASYNC_FLUSH.
//
// # Failures
//
// A failed WriteAt of a commit run is rolled back (rollbackLocked): every
// record of the run and after it, still in the ring, is dropped, and its put
// answered SERVICE_NOT_AVAILABLE (not stored; clients retry such a code); the
// queue offsets those records took are given back; the bytes the failed
// write may have left in the file (a short write) are zeroed; head returns
// to the committed position, and the next record is written there. No
// acknowledged record ever had a dropped record's offsets. A put knows
// whether its record survived by the rollback epoch it appended in (decide).
//
// A write that failed for lack of space (ENOSPC, EDQUOT) refuses puts until
// the disk has room again (the space guard, below); any other write error,
// and any failed Sync, makes the log sticky-failed (after a failed fsync the
// kernel may have dropped dirty pages: no later fsync can vouch for them).
// From then on: waiting puts whose records were written answer
// FLUSH_DISK_TIMEOUT, the others SERVICE_NOT_AVAILABLE, new puts
// SERVICE_NOT_AVAILABLE, Err returns the cause and Close returns it. No put
// ever answers PUT_OK for data a failed write or sync covered. Reopening
// (recovery) is the way back.
//
// # Disk space
//
// The space guard (space.go) refuses puts with SERVICE_NOT_AVAILABLE and a
// reason saying the disk is full before a write can meet ENOSPC: when the
// disk's use (df's Use%) is above DiskFullPercent
// (diskSpaceWarningLevelRatio, 90) or less than a reserve (the ring size, at
// most a twentieth of the disk) is available, until use is back at or below
// DiskResumePercent (diskSpaceCleanForciblyRatio, 85). It looks at the disk
// (statfs) from the put path at most every 100 ms; between looks, the
// committer subtracts what it wrote into sparse (ASYNC_FLUSH) segments from
// the available bytes, and a fall below the reserve makes the next put look
// at once. So puts resume by themselves within ~100 ms of space coming back.
//
// # Recovery
//
// RecoverWith scans from the third-to-last segment (normal) or from an
// offset the caller derives from the checkpoint (abnormal), validating
// magic, length, body CRC and PHYSICALOFFSET, and stops at the first
// invalid record or at zeros; with RecoverOptions.SkipBodyCRC
// (checkCRCOnRecover=false) the body CRC is not compared, as Java skips it,
// and a damaged body is kept. What the stop means depends on what is known
// to be durable (RecoverOptions):
//
//   - Torn tail: after a crash, an invalid record whose data is not known
//     durable. Page-cache writeback is not ordered, so valid records may
//     follow it; they were never acknowledged under SYNC_FLUSH (a put is
//     answered after the sync that covers it and everything before it). The
//     log is cut there, logged at Warn.
//   - Corruption: an invalid record (or zeros) before data known durable:
//     (a) the last shutdown was clean (every record was synced) and a valid
//     record follows it, or (b) the last valid record was stored before the
//     checkpoint's physicMsgTimestamp. (b) holds because the checkpoint is
//     written only after the CommitLog was flushed past the record stored
//     at that time, and store times never decrease along the log: that
//     record is on disk after the last valid one, so something before it
//     is damaged. A record stored at exactly that time may be a later,
//     unflushed one of the same millisecond, so only strictly older ones
//     count. (a) needs to find "a valid record follows": a resync scan reads
//     forward from the bad position, through later segments, for a position
//     p whose magic is a record's, whose PHYSICALOFFSET is p, whose TOTALSIZE
//     fits and whose body CRC matches; a bit flip cannot produce that by
//     chance. The scan runs only when corruption is possible, never for a
//     torn tail after a crash.
//
// Corruption is logged at Error with the segment file, the offset, what is
// wrong (the position class: a header field, the body or BODYCRC, a length
// field such as PROPERTIESLENGTH, a BLANK filler) and where valid records
// resume; then, by CorruptionAction:
//
//   - refuse (the default): RecoverWith returns a *CorruptionError and
//     changes no file. The operator restores the segment (from a slave or a
//     backup), or chooses truncate.
//   - truncate: the log is cut at the bad record as for a torn tail, and the
//     Error log says what is cut: the valid records and bytes after it and
//     the segment files deleted.
//
// Why refuse rather than keep the later records and mark the bad one
// unreadable: the bad record's header cannot be trusted, so its topic,
// queue and queue offset are unknown; a ConsumeQueue has no holes, so the
// unit it had is missing or points at bytes no reader can decode, and a
// consumer pulling that queue offset would stall or skip silently; a slave
// fetching the log raw would receive the same damage and refuse or cut it
// at its own recovery. Refusing loses nothing and makes the operator aware;
// truncating is today's behaviour, now explicit and logged. (Recover, with
// no durability knowledge, treats every stop as a torn tail: tools and
// tests only; the store passes the abort file and the checkpoint.)
//
// A BLANK filler is recognised by its magic alone (readers and RocketMQ's
// checker ignore its length), so a damaged length loses nothing: logged at
// Error, the scan continues at the next segment. No record can be as long
// as the space left in its segment (a record needs 8 bytes more), so 8
// bytes whose length is exactly that space and whose magic differs from
// BLANK's in at most 2 bits are a BLANK with flipped bits (a torn write
// zeroes whole bytes, never that): also logged at Error and followed. A
// worse magic stops the scan like any invalid record. The zero padding
// after a BLANK is never read by recovery or readers: a flip there is
// harmless and not reported. A flip in the zeros after the last record is
// garbage with nothing valid behind it (and the last record is the
// checkpoint's): cut and zeroed like a torn tail, logged at Warn.
//
// Not detected: BODYCRC covers the body only (as in RocketMQ), so a flip
// in QUEUEID, FLAG, QUEUEOFFSET, timestamps, hosts, RECONSUMETIMES, the
// topic or the properties' content (not their lengths) leaves a valid
// record with a changed value, kept as such.
//
// After the cut, the bytes after the end in the last segment are zeroed up
// to the last non-zero byte (records cut off behind a torn one must not
// come back after a later append of the same length), and the scanned
// segments are synced, so Flushed() = end holds after Recover.
package commitlog
