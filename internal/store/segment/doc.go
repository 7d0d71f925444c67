// Package segment holds fixed-size, offset-named data files and the ordered
// list of them: the storage unit of the CommitLog and of every ConsumeQueue
// (same naming scheme, smaller files).
//
// # Naming and sizes
//
// A segment covers the global byte range [start, start+size) of its log. Its
// file name is start formatted as a 20-digit zero-padded decimal, the same as
// Apache RocketMQ (UtilAll.offset2FileName):
//
//	commitlog/00000000000000000000   bytes [0, 1 GiB)
//	commitlog/00000000001073741824   bytes [1 GiB, 2 GiB)
//	commitlog/00000000002147483648   ...
//
// Every file of a queue has exactly the configured size (CommitLog: 1 GiB;
// tests use 64 KiB); Open refuses a directory holding a file of another size
// or a gap between consecutive files, because offsets could no longer be
// mapped to files. The one exception is a last file that is too short (cut
// by a crash or a half-truncated copy): it is extended with zeros, and
// recovery truncates the log at the end of its valid records. The files are contiguous: file i+1 starts at the end of
// file i. Files named "<20 digits>.tmp" are unfinished preallocations (a crash
// hit the allocator) and are removed on Open.
//
// # Positions
//
// A File tracks three positions relative to its start, all atomics so that
// readers never take a lock:
//
//	0 <= flushed <= committed <= wrote <= size
//
//	wrote      bytes handed to the file by the writer (the in-memory ring may
//	           still hold them)
//	committed  bytes written to the OS file (WriteAt done): readers may read them
//	flushed    bytes made durable by Sync
//
// The owner (the CommitLog) moves them; this package only stores them and
// resets them on Truncate. After Open every file claims to be full (as in
// RocketMQ); recovery then truncates the tail to the last valid record.
//
// # Life of a segment
//
//  1. Preallocated in the background by the allocator (RocketMQ's
//     AllocateMappedFileService): created as "<name>.tmp", sized with
//     Truncate, zero-filled and synced when Config.ZeroFill is set (SYNC_FLUSH:
//     later fdatasyncs then touch no metadata and no unwritten extents), synced,
//     renamed to "<name>" and the directory synced. Only then can it be seen.
//     The zeros are written with write-behind (4 MiB spans, at most two dirty
//     or in flight; vfs.Writeback), so that the fill never queues a whole
//     segment's writeback in front of the CommitLog's fdatasyncs.
//     The allocator prepares the file after the last one as soon as it starts
//     and again after every roll; Prepare has the first file of an empty
//     queue prepared before any roll asks (the CommitLog calls it at store
//     open, so that no put waits for a zero-fill). A zero-filled file is
//     only started when the disk has the file's size plus a margin (an
//     eighth of the file, at most 64 MiB) available; otherwise the attempt
//     fails before writing anything (DiskFullError, matching ENOSPC).
//     A failed attempt is retried by the allocator after a back-off (1 s,
//     doubling up to 30 s), earlier when files of the queue are deleted or
//     the failed free-space check passes again; meanwhile Roll fails at once
//     with a BackoffError wrapping the failure (IsDiskFull tells a full disk).
//  2. Taken by Roll when the previous file is full: appended to the Queue.
//  3. Written (WriteAt), read (ReadAt) and synced by the owner. A sync error
//     is sticky: every later write or sync of the file returns it. A write
//     error is not: the owner takes the unwritten bytes back (a full disk)
//     and may write there again.
//  4. Removed from the Queue by Truncate / TruncateDropEmpty (dirty tail) or DeleteExpired /
//     DeleteBelow (retention; DeleteExpired with force also removes head
//     files not yet expired, logged and counted as such). Readers that called Hold keep the file open:
//     the file is closed, and deleted from disk when it was removed, when the
//     last reference is released. Truncate deletes at once instead (readers
//     keep the unlinked file): first the prepared next file, then the cut
//     files from the last one down, syncing the directory after each, so a
//     crash leaves a contiguous prefix and a later file of the same name is
//     never deleted by a late release.
//
// # Many small queues
//
// A store has one queue per ConsumeQueue, 100,000 of them or more, each of
// a few small files. Three Config fields make a Queue cheap enough for
// that: Handles (files read and written through the owner's handles, say
// a descriptor cache that opens a file only while it is used; Open then
// only stats them), CreateInPlace (a new file is created and sized under
// its name by Roll, without the allocator, the ".tmp" rename or any sync:
// the owner syncs the directories, OnCreate telling it when an entry
// appears; a missing directory is an empty queue, and New makes one
// without listing) and AllowGaps (a file lost in the middle is logged and
// left as a hole that Find does not cover, as RocketMQ reads such a
// ConsumeQueue). A Queue whose Start is never called carries no allocator.
package segment
