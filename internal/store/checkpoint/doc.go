// Package checkpoint reads and writes the store's `checkpoint` file
// (rocketmq-spec.md §6.6): the timestamps up to which the CommitLog, the
// ConsumeQueues and the index are known to be on disk. Abnormal recovery
// (spec §7) starts scanning the CommitLog from the first segment whose first
// record is older than min(physic, logics) - 3 s.
//
// Layout (4096 bytes, one page, big-endian like Java's ByteBuffer; the bytes
// after offset 40 are zero):
//
//	offset size field
//	     0    8 physicMsgTimestamp   store time (ms) of the last CommitLog data flushed
//	     8    8 logicsMsgTimestamp   store time (ms) of the last ConsumeQueue unit flushed
//	    16    8 indexMsgTimestamp    end time (ms) of the last full index file flushed
//	    24    8 masterFlushedOffset  (5.x) flushed offset of the master, for HA
//	    32    8 confirmPhyOffset     (5.x) confirmed CommitLog offset, for HA
//	    40 4056 zero
//
// Crash atomicity: RocketMQ updates the file in place through a mapping. We
// write the whole page to `checkpoint.tmp`, fsync it, rename it over
// `checkpoint` and fsync the directory, so after a crash the file holds
// either the previous or the new page, never a torn mix (a 4 KiB in-place
// write is only atomic when the device's atomic write unit covers it, which
// is not promised). A missing file loads as all zeros, which makes abnormal
// recovery start at the first segment: slow but safe.
package checkpoint
