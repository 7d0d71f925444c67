// Package txn is the broker's transactional-message service (Java's
// TransactionalMessageService, EndTransactionProcessor back end and
// TransactionalMessageCheckService; rocketmq-spec.md §11, go-client-wire.md
// §8): half messages, their commit or rollback, and the check-back of half
// messages nobody settled.
//
// # Topics
//
//	RMQ_SYS_TRANS_HALF_TOPIC     queue 0: half messages (prepared sends, and
//	                             the copies re-appended by each check)
//	RMQ_SYS_TRANS_OP_HALF_TOPIC  queue 0: op records, one per settled half
//	TRANS_CHECK_MAX_TIME_TOPIC   queue 0: half messages checked too often
//	                             (created on first use, 1 queue, perm 6)
//
// # Half message
//
// A send whose properties carry TRAN_MSG=true is rewritten before the put:
// REAL_TOPIC and REAL_QID get the requested topic and queue id, the
// transaction bits of the sysflag are reset to NOT_TYPE (so the record is
// dispatched, into the half queue), topic = RMQ_SYS_TRANS_HALF_TOPIC,
// queue = 0. A DELAY property is not acted on while the message is half.
// The producer receives the half record's offset msgId and half-queue
// offset; it echoes both in END_TRANSACTION.
//
// # Op record (the settlement of a half message)
//
//	topic      RMQ_SYS_TRANS_OP_HALF_TOPIC, queue 0
//	properties TAGS=d, WAIT=true (what Java's new Message(topic, "d", body) carries)
//	body       ASCII decimal of the settled half message's queue offset in the
//	           half topic, e.g. "17" (4.9.8: one offset, no separator)
//
// The reader also accepts the 5.x body: several offsets each followed by
// ',' ("17,18,21,"); empty pieces are skipped, and an op record whose tag is
// not "d" or whose body does not parse settles nothing.
//
// # END_TRANSACTION
//
// The half record is found by commitLogOffset and must be in the half topic,
// carry PGROUP = producerGroup and sit at tranStateTableOffset /
// commitLogOffset (SYSTEM_ERROR with Java's remarks otherwise). Commit
// stores the record again under REAL_TOPIC/REAL_QID with the transaction
// bits = COMMIT (dispatched to the real queue) and PreparedTransactionOffset =
// the half record's CommitLog offset; its property string is the half's,
// unchanged (TRAN_MSG, PGROUP, REAL_TOPIC, REAL_QID stay, as Java stores
// them; consumers read the transaction id through TRAN_MSG). Then the op
// record is written. Rollback writes only the op record.
//
// A transaction that may exist as several half records (a copy re-appended
// by a check, or an original the check walk already passed) is settled at
// most once per process: the service remembers its UNIQ_KEY (for
// (CheckMax+2) × CheckInterval + Timeout, after which no copy of it can
// still be checked) and answers a repeated END_TRANSACTION SUCCESS without
// storing anything; the walk skips remembered transactions. Java has no
// such guard; without it a producer's late answer about an older copy, or
// answers to checks of two copies, would deliver a committed message twice.
// A transaction ended before the walk reached it is not remembered (its op
// record is enough, and memory must not grow with the send rate): a
// producer repeating such an END stores the message again, as with Java.
// After a restart, op records naming half offsets the walk had passed mark
// their transactions settled again (their UNIQ_KEY is read from the half
// record).
//
// # Check-back (one goroutine, every CheckInterval)
//
// Progress is kept as consumer offsets of group CID_RMQ_SYS_TRANS on the
// half and the op topic (consumerOffset.json, persisted after every round
// that moved), so a restart resumes where the last round stopped. A round:
//
//  1. read the op records from the op progress to the op queue's end (kept
//     in memory between rounds, compactly: a bitset of the settled half
//     offsets from the half progress on, and per op record the largest
//     half offset it names);
//  2. walk the half queue from the half progress up to its end as seen when
//     the round began:
//     - settled (op record, or END seen by this process)   -> skip
//     - TRANSACTION_CHECK_TIMES >= CheckMax, or born more than
//     FileReservedTime ago                                  -> copy to TRANS_CHECK_MAX_TIME_TOPIC
//     - carries CHECK_IMMUNITY_TIME_IN_SECONDS and is younger than that
//     (and than Timeout): re-append it unchecked with
//     TRAN_PREPARED_QUEUE_OFFSET = its first half offset (or skip it when
//     an op record names that offset), and go on
//     - otherwise younger than Timeout                      -> stop
//     - otherwise: TRANSACTION_CHECK_TIMES += 1 (first check: 1), re-append
//     the record to the half queue, send CHECK_TRANSACTION_STATE (one-way)
//     to a live connection of the PGROUP producer group with the new
//     offsets and the record (REAL_TOPIC/REAL_QID restored) as body (a
//     group without a live connection is not asked, but the check counts,
//     as in Java); a message whose copy cannot be stored for good (the
//     added property would exceed 32767 bytes) is parked instead;
//  3. store the new half progress, and the op progress advanced over every
//     op record whose half offsets are all below the new half progress.
//
// The producer answers with END_TRANSACTION (fromTransactionCheck=true)
// naming the re-appended copy.
//
// # Open half messages (CountLive)
//
// CountLive counts, per REAL_TOPIC, the transactions a round would still
// find open: a half record from the half progress on that no op record
// from the op progress on settles, each UNIQ_KEY once, a key settled
// through an older copy below the progress excluded. The broker calls it
// at start after a crash to rebuild rocketmq_half_messages (Observer's
// counts); it reads both queues from their progress to their end (about
// one CheckInterval of half messages plus the open ones).
package txn
