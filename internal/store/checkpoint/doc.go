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
//	    40    8 "rocketd\x01"         rocketd's extension (zero when absent, as Java writes it)
//	    48    8 resumeRecord         a CommitLog record offset: it and all before it are durable
//	                                 in the CommitLog and the ConsumeQueues
//	    56    8 guard physic         physicMsgTimestamp when the extension was written
//	    64    8 guard logics         logicsMsgTimestamp when the extension was written
//	    72 4024 zero
//
// The extension lets recovery scan from the resume record (the last
// record the flushers saw durable) instead of from a whole segment, which
// bounds the time from a crash to accepting sends by the unflushed tail,
// not by the segment size (store/recovery.go checks the record before
// trusting it). Java ignores bytes after 40 and rewrites only its own
// fields in place; a page it changed keeps a stale extension whose guard
// no longer matches the timestamps, so rocketd ignores it.
//
// Crash atomicity: RocketMQ updates the file in place through a mapping. We
// write the whole page to `checkpoint.tmp`, fsync it, rename it over
// `checkpoint` and fsync the directory, so after a crash the file holds
// either the previous or the new page, never a torn mix (a 4 KiB in-place
// write is only atomic when the device's atomic write unit covers it, which
// is not promised). A missing file loads as all zeros, which makes abnormal
// recovery start at the first segment: slow but safe.
package checkpoint
