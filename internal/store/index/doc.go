// Package index implements RocketMQ's key index (rocketmq-spec.md §6.4;
// Java's IndexService / IndexFile / IndexHeader): a hash index from
// "topic#key" to CommitLog offsets, for QUERY_MESSAGE by KEYS and by
// UNIQ_KEY (the client's message id).
//
// # Files
//
// <root>/index/<yyyyMMddHHmmssSSS>: the name is the local time the file was
// created (Java's UtilAll.timeMillisToHumanString); names sort in creation
// order. Every file has exactly
//
//	40 + maxHashSlotNum×4 + maxIndexNum×20 bytes
//
// (420,000,040 with the defaults 5,000,000 / 20,000,000), created sparse.
// All integers are big-endian; do not change the layout, Java brokers read
// these files and this package reads theirs.
//
// Header (40 bytes):
//
//	+------------------+----------------+------------------+----------------+---------------+------------+
//	| beginTimestamp 8 | endTimestamp 8 | beginPhyOffset 8 | endPhyOffset 8 | hashSlotCnt 4 | indexCnt 4 |
//	+------------------+----------------+------------------+----------------+---------------+------------+
//	0                  8                16                 24               32              36           40
//
// Header fields:
//
//   - begin/end timestamp: store time of the first / last indexed message
//     (a new file starts with both set to the previous file's end).
//   - begin/end phy offset: CommitLog offset of the first / last indexed
//     message (same rule).
//   - hashSlotCount: slots that are in use.
//   - indexCount: the next index number; it starts at 1 (item 0 is never
//     used, so 0 means "none"); the file is full at indexCount >= maxIndexNum.
//
// Slot table: maxHashSlotNum int32 at offset 40. Slot s holds the index
// number of the newest item whose key hashes to s (0: empty).
//
// Items: item n (n >= 1) is at 40 + maxHashSlotNum×4 + n×20:
//
//	+-------------+-----------------+-------------+-------------+
//	| keyHash (4) | phyOffset (8)   | timeDiff(4) | prevIndex(4)|
//	+-------------+-----------------+-------------+-------------+
//	0             4                 12            16            20
//
// Item fields:
//
//   - keyHash: abs(Java String.hashCode("topic#key")) (over UTF-16 units;
//     Integer.MIN_VALUE gives 0); slot = keyHash % maxHashSlotNum.
//   - phyOffset: the record's CommitLog offset.
//   - timeDiff: (storeTimestamp - header.beginTimestamp) / 1000, in
//     seconds, clamped to [0, MaxInt32]; 0 while beginTimestamp is unset.
//   - prevIndex: the item the slot pointed at before (the chain to older
//     items with the same slot); 0 ends the chain.
//
// A lookup walks the chain of the key's slot from newest to oldest, keeps
// items whose hash equals the key's and whose time (begin + timeDiff×1000)
// is inside [begin, end], and stops at a chain end, a prevIndex that is out
// of range or points at itself, or an item older than begin. A hash hit is
// only a candidate: the caller (QUERY_MESSAGE's client) checks the keys of
// the records it gets. Files are searched newest first while their time
// range meets the query's.
//
// # What is indexed
//
// For every record the dispatcher reads (any transaction type except
// ROLLBACK, as Java's buildIndex), when messageIndexEnable is set: the
// UNIQ_KEY property if present, then each non-empty space-separated entry
// of KEYS. A record whose offset is below the current file's endPhyOffset
// was indexed already (re-dispatch after recovery) and is skipped.
//
// # Writing and durability
//
// The dispatcher stages a chunk's keys (Stage) and applies them with
// Commit: the slot table of the file being written is kept in memory (it
// is read from disk when an existing file is continued), the new items
// wait in memory (queries read them there) and are written with one WriteAt
// by the Commit that finds 64 KiB of them. The slot table and header reach the
// file when the file fills up (then it is synced, and the checkpoint's
// indexMsgTimestamp is set to its endTimestamp through Options.OnSealed) and
// at Close (Flush). A crash therefore loses the current file's slots; as in
// Java, after an abnormal exit every file whose endTimestamp is newer than
// the checkpoint's indexMsgTimestamp is deleted at Open, and the store
// re-dispatches from its recovery start (bounded by indexMsgTimestamp as
// well when messageIndexSafe is set, which makes the index complete again).
// On-disk slots or prevIndex values beyond the header's indexCount (a file
// whose header is older than its items) are treated as empty, as in Java.
//
// # Retention
//
// DeleteBelow(commitlogMinOffset) deletes, oldest first and never the
// newest file, the files whose endPhyOffset is below the CommitLog's min
// offset (Java's deleteExpiredFile).
package index
