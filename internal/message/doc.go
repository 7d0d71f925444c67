// Package message is the RocketMQ message model and its byte formats: the
// commit-log record (which is also every message of a pull/query/view
// response body), the end-of-file blank, the property string, the batch send
// body, sysflag bits, message ids and the tag code. Everything here is a pure
// function of bytes; the store, the processors and the tests share it.
//
// All integers are big-endian, signed as in Java unless noted. Nothing in
// these layouts may change: Java and Go clients and Java brokers read them.
//
// # Commit-log record (spec §5.1)
//
// Offsets for IPv4 born and store hosts and the v1 magic:
//
//	 off size field
//	   0   4  TOTALSIZE        int32, whole record including this field
//	   4   4  MAGICCODE        0xDAA320A7 v1 (1-byte topic length)
//	                           0xDAA320AB v2 (RocketMQ 5.x, 2-byte topic length)
//	   8   4  BODYCRC          CRC-32/IEEE of BODY & 0x7FFFFFFF (BodyCRC)
//	  12   4  QUEUEID          int32
//	  16   4  FLAG             int32, the producer's flag
//	  20   8  QUEUEOFFSET      consume-queue (logical) offset; 0 for prepared/rollback
//	  28   8  PHYSICALOFFSET   commit-log offset of this record
//	  36   4  SYSFLAG          bits below
//	  40   8  BORNTIMESTAMP    producer time, ms
//	  48   8  BORNHOST         4-byte IPv4 + int32 port   (16 + 4 if SYSFLAG & 0x10)
//	  56   8  STORETIMESTAMP   broker time, ms            (at 68 if the born host is IPv6)
//	  64   8  STOREHOST        4-byte IPv4 + int32 port   (16 + 4 if SYSFLAG & 0x20)
//	  72   4  RECONSUMETIMES   int32
//	  76   8  PREPAREDTRANSACTIONOFFSET  half-message offset for a commit record, else 0
//	  84   4  BODYLENGTH       int32
//	  88   n  BODY             as sent (compressed if SYSFLAG & 0x1)
//	   .   1  TOPICLENGTH      v1: signed byte (topic <= 127 bytes); v2: int16
//	   .   t  TOPIC            UTF-8
//	   .   2  PROPERTIESLENGTH int16 (<= 32767)
//	   .   p  PROPERTIES       property string, below
//
//	TOTALSIZE = 91 + n + t + p  (+12 per IPv6 host, +1 for the v2 magic)
//
// The commit log encodes a record before taking its lock and patches
// QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP under it (PatchQueueOffset,
// PatchPhysicalOffset, PatchStoreTimestamp). AppendRecord writes v1 unless the
// topic is longer than 127 bytes; decoding accepts v1 and v2 (Java 5.x stores).
//
// # End-of-file blank (spec §5.2)
//
// A record is written only if recordLen + 8 <= bytes left in the segment.
// Otherwise the writer puts this 8-byte filler at the write position and
// continues at the start of the next segment; the bytes after it stay zero:
//
//	off size field
//	  0   4  bytes left in the segment (int32)
//	  4   4  0xCBD43194 (MagicBlank)
//
// # Record checker outcomes (spec §7)
//
// DecodeRecord and Scanner answer one of: a record; ErrBlank (go to the next
// segment); ErrZeroed (TOTALSIZE and magic zero: end of written data);
// ErrTruncated (the buffer ends inside the record); ErrCorrupt (unknown magic,
// TOTALSIZE below 91, a length running past TOTALSIZE, fields not adding up
// to TOTALSIZE, or a body CRC mismatch when checked). Recovery stops at the
// first outcome that is not a record or a blank and truncates there.
//
// # Property string (spec §5.3)
//
//	name \x01 value \x02 name \x01 value [\x02]
//
// RocketMQ 4.9.8 writes no trailing \x02, 5.2+ and the Go client write one;
// both parse the same. An entry needs a non-empty name and value (others are
// skipped); the name ends at the first \x01; a repeated name: the last wins.
// Keys are the Property* constants (§5.4).
//
// # Batch send body (spec §5.5)
//
// The body of SEND_BATCH_MESSAGE is items back to back:
//
//	off size field
//	  0   4  TOTALSIZE        int32, this item (22 + n + p)
//	  4   4  MAGICCODE        0, ignored
//	  8   4  BODYCRC          0, ignored (the broker computes it)
//	 12   4  FLAG             int32
//	 16   4  BODYLENGTH       int32
//	 20   n  BODY
//	  .   2  PROPERTIESLENGTH int16
//	  .   p  PROPERTIES       this item's property string
//
// Each item is stored as a full record whose properties are the item's, a
// \x02 if both parts are non-empty and the item's do not end with one, and
// the batch-level properties (BatchRecordProperties).
//
// # SYSFLAG bits (spec §5.6)
//
//	0x001 compressed body           0x010 born host IPv6
//	0x002 multi tags                0x020 store host IPv6
//	0x00C transaction type mask:    0x040 need unwrap (5.x inner batch)
//	      0x0 not, 0x4 prepared,    0x080 inner batch (5.x)
//	      0x8 commit, 0xC rollback  0x700 compression type: 0x100 LZ4,
//	                                      0x200 ZSTD, 0x300 zlib (0: zlib)
//
// Only not-transactional and commit records are dispatched to consume queues.
//
// # Message ids (spec §5.8)
//
// The offset message id is uppercase hex of the store host address (4 or 16
// bytes), its port (int32) and the record's commit-log offset (int64): 32
// characters for IPv4, 56 for IPv6. 127.0.0.1:10911 at offset 0 is
// 7F00000100002A9F0000000000000000.
//
// The client unique id (UNIQ_KEY) is uppercase hex of the client address (4
// or 16 bytes), pid (int16), a per-process hash (int32), the milliseconds
// since the start of the month in local time (int32) and a counter (int16):
// 32 or 56 characters. The broker stores and indexes it as an opaque string;
// UniqIDTime recovers the approximate time as the Java broker does.
//
// # Tag code (spec §5.9)
//
// The consume-queue tags code is Java's String.hashCode of the TAGS value
// (h = 31*h + c over UTF-16 code units, int32 wrap-around) sign-extended to
// int64, 0 without a tag. Records in SCHEDULE_TOPIC_XXXX store their delivery
// time instead.
//
// # Slice lifetimes
//
// Decoders alias their input: Record.Body, BatchItem.Body and
// BatchItem.Properties point into the decoded buffer and are valid while it
// is unchanged. DecodeRecord copies Topic and Properties (one allocation for
// both); DecodeRecordNoCopy and Scanner.NoCopy alias them too and must not be
// kept beyond the buffer's life.
package message
