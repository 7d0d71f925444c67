// Package store is the MessageStore: the CommitLog, the ConsumeQueues and
// the checkpoint put together, with recovery, the dispatcher, reads,
// retention and the shutdown order. It knows nothing about the network.
//
// Data directory (Apache RocketMQ's layout, rocketmq-spec.md §6.1):
//
//	<Dir>/commitlog/<20-digit offset>            CommitLog segments (commitlog package)
//	<Dir>/consumequeue/<topic>/<qid>/<20-digit>  ConsumeQueue files (consumequeue package)
//	<Dir>/index/<yyyyMMddHHmmssSSS>              key index files (index package)
//	<Dir>/checkpoint                             4 KiB checkpoint (checkpoint package)
//	<Dir>/abort                                  empty; exists while the store runs
//	<Dir>/lock                                   held with an exclusive OS lock while open
//	<Dir>/epochFileCheckpoint(.bak)              master epochs of the CommitLog (epoch.go)
//	<Dir>/config/                                broker JSON files (written by broker/meta)
//
// Open (spec §7): take the lock; an `abort` file left behind means the last
// run did not shut down cleanly. Recover the ConsumeQueues (scan for their
// valid ends), then the CommitLog: normally from its last three segments;
// after a crash from the newest segment whose first record is older than the
// checkpoint's min(physic, logics) - 3 s, or, later in it, from the
// checkpoint's resume record (rocketd's extension of the file: the last
// record the flushers saw durable in both structures, used once its header
// is found naming its own offset), which bounds the time from a crash to
// accepting sends by the unflushed tail instead of the segment size. Both
// check magic codes and body CRCs and cut the torn tail. The CommitLog is told whether the last
// shutdown was clean and the checkpoint's physicMsgTimestamp: an invalid
// record before data known durable is corruption, and Open fails with a
// *commitlog.CorruptionError (Config.CommitLogCorruptionAction = truncate
// cuts it instead, and lowers physicMsgTimestamp to what is left; commitlog
// doc.go, "Recovery"). ConsumeQueue units pointing past the recovered end
// are cut. The dispatcher then re-dispatches from the recovery start
// (abnormal; after the resume record when the scan started there) or from
// the ConsumeQueues' end (normal) — duplicates are
// ignored by the queues — and Open waits until it has caught up, rebuilds
// the CommitLog's next-queue-offset table from the queues, starts the
// background services and creates `abort`. Before that it waits for the
// segment the first put writes to be prepared (PrepareSegment: seconds for
// a 1 GiB SYNC_FLUSH zero-fill, so that no put waits for it); a failure (a
// full disk) does not fail Open: puts answer CREATE_MAPPED_FILE_FAILED and
// RefusalReason says "disk full" until the segment can be prepared.
//
// Dispatch: one goroutine follows the CommitLog's committed end in order,
// kicked by the CommitLog's OnCommit hook. For each record of transaction
// type NOT or COMMIT it appends a 20-byte unit to its queue (tags code = the
// TAGS hash, or for SCHEDULE_TOPIC_XXXX the delivery time). Units of a batch
// of records are written with one WriteAt per queue, and only then the
// dispatched offset advances and arrival listeners are called: readers see
// exactly the dispatched units.
//
// Key index: unless MessageIndexDisabled, the dispatcher also stages each
// record's UNIQ_KEY and KEYS entries (every transaction type but ROLLBACK)
// and commits them to the index (package index) with the chunk; an index
// write failure blocks dispatch like a queue write failure (Java refuses
// puts on WRITE_INDEX_FILE_ERROR). QueryMessage looks keys up (QUERY_MESSAGE).
// After a crash, index files newer than the checkpoint's indexMsgTimestamp
// are deleted at Open; with MessageIndexSafe the recovery start is bounded
// by that timestamp too, so re-dispatch rebuilds them. Index files whose
// endPhyOffset is below the CommitLog's min offset go with retention.
//
// Dispatch failure: when a queue write (EMFILE, ENOSPC, EIO) or a CommitLog
// read fails, dispatch is blocked: puts are refused with
// SERVICE_NOT_AVAILABLE and RefusalReason says why, the condition is
// logged (when it starts, every 10 s, when it ends), and the dispatcher
// retries after 10 ms, doubling up to 1 s, resuming a half-written chunk
// with the queue that failed. The first successful attempt unblocks puts.
// Only undecodable CommitLog data stops dispatch for good (puts refused
// until the store is reopened).
//
// Descriptors: the ConsumeQueue files are opened on demand through one
// fdcache.Cache of Config.MaxOpenCQFiles (maxOpenConsumeQueueFiles;
// default half of RLIMIT_NOFILE), so the number of queues does not bound
// the number of open files; recovery opens each queue's files one at a time.
//
// Checkpoint: after each ConsumeQueue flush, logicsMsgTimestamp becomes the
// store time of the last record dispatched before that flush (once no queue
// has unsynced units), and physicMsgTimestamp the store time of the newest
// dispatched position at or below the CommitLog's flushed end. Everything
// stored before min(physic, logics) is on disk in both structures, which is
// what abnormal recovery relies on. Recovery also relies on the record
// stored at physicMsgTimestamp being on disk (a log ending before it is
// corrupt). Java masters set it from the flush as well; a Java slave sets
// it from dispatch, so a Java slave's store after a crash may be refused:
// CommitLogCorruptionAction truncate opens it.
//
// Retention and disk protection (cleanup.go, RocketMQ 5.x's
// CleanCommitLogService): every CleanInterval, disk use is read as df's Use%
// of the CommitLog's file system. Segments older than FileReservedTime are
// deleted at a DeleteWhen hour, above DiskMaxUsedSpaceRatio, or in the 20
// rounds after DeleteExpiredManually (DELETE_EXPIRED_COMMITLOG); above
// DiskSpaceCleanForciblyRatio (or DiskSpaceWarningLevelRatio) the oldest
// segments go whatever their age, logged at Warn with their offsets since
// they may hold unconsumed messages, unless KeepUnexpiredSegments
// (cleanFileForciblyEnable=false). Above DiskSpaceWarningLevelRatio puts are
// refused. At most DeleteFilesBatchMax segments go per round, never the one
// being written; ConsumeQueue files wholly below the new minimum follow.
//
// Admin cleanups (admin.go): CleanExpiredConsumeQueues destroys whole
// ConsumeQueues whose last record ends below the CommitLog's min offset and
// makes the CommitLog forget their next offset (the queue restarts at 0,
// as in Java); it does so under the put lock only when every offset given
// out is dispatched. CleanUnusedTopics deletes the queues of topics the
// caller does not keep.
//
// Role (role.go): a slave's store (Config.Slave) refuses puts and takes
// replicated bytes (AppendRaw); a master's takes puts and refuses
// replicated bytes (ErrNotSlave). BecomeSlave switches at runtime: new
// puts are refused at once and it returns when the puts already admitted
// have left the store (written whole and answered). BecomeMaster waits
// until dispatch has caught up with the CommitLog's end, rebuilds the
// next-queue-offset table from the ConsumeQueues (as Open does) and then
// takes puts. Store.roleMu serializes the switches.
//
// Epoch file (epoch.go, Java's EpochFileCache in controller mode):
// <Dir>/epochFileCheckpoint, Java's CheckpointFile text format, "\n"
// line ends:
//
//	2             number of entries
//	773307083     CRC-32 (IEEE) of the entry lines, sign bit cleared (UtilAll.crc32); 0: unchecked
//	7-7000        epoch-startOffset, one line per entry, ascending
//	8-8000
//
// Epoch e's master wrote the CommitLog from its start offset to the next
// entry's (the last one is open). A master appends an entry when it takes
// an epoch (a larger epoch, a start not below the last; an epoch that
// wrote nothing is replaced, where Java would refuse the append);
// ConsistentPoint (Java's findConsistentPoint) gives the end of the newest
// epoch two logs hold from the same offset. Every change rewrites the
// file: the current version is copied to epochFileCheckpoint.bak, then
// the new one replaces the file atomically (write, fsync, rename, fsync
// the directory; Java writes in place), so a crash leaves either version.
// Retention drops the entries that end at or before the CommitLog's new
// first offset - 1 (Java's truncateEpochFilePrefix).
// A reader takes the .bak when the file is missing, empty or damaged
// (Java's read). No entries: both files are removed (Java cannot write
// an empty list and would read the .bak back).
//
// Truncation (truncate.go, Java's truncateFiles): TruncateTo cuts a
// running slave's store back to a record boundary before it replicates
// from a new master (the consistent point of the two epoch files): it
// holds dispatch between rounds, lowers and writes the checkpoint's
// physic and logics times to the last kept record's store time, cuts the
// ConsumeQueues, then the CommitLog (later segments unlinked from the
// last one down, each directory change synced, the prepared next segment
// first; the zeroed tail synced), then the epoch file, and resumes
// dispatch at the cut. A crash at any point recovers to the store before,
// after, or a prefix in between with consistent queues; Open drops epoch
// entries that start past the recovered end. The key index is not cut
// (nor is Java's): its entries past the cut are candidates that the
// key check of a query drops. Store.roleMu serializes it with the role
// switches; the flush loop's checkpoint advance takes Store.ckptMu.
//
// Lock order: Store.putGate -> commitlog locks; the dispatcher's state is
// owned by its goroutine; consumequeue and segment locks are leaves.
package store
