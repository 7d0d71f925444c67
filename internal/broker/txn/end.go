package txn

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
)

// Remarks of END_TRANSACTION refusals (Java's EndTransactionProcessor).
const (
	remarkNotFound    = "Find prepared transaction message failed"
	remarkGroupWrong  = "The producer group wrong"
	remarkQueueWrong  = "The transaction state table offset wrong"
	remarkOffsetWrong = "The commit log offset wrong"
)

// End settles the half message h names: commit (TransactionCommitType) or
// rollback (TransactionRollbackType). Any other CommitOrRollback is a
// caller error (END_TRANSACTION with 0 is not answered at all, see the
// processor). The result is the response code and remark.
func (s *Service) End(ctx context.Context, h *protocol.EndTransactionRequestHeader) (int32, string) {
	half, release, code, remark := s.lookHalf(h)
	if code != protocol.Success {
		return code, remark
	}
	// half aliases the read buffer until the puts below have encoded it.
	defer release()
	now := s.cfg.Now()
	key := ""
	if s.mayHaveCopies(&half) {
		key = strings.Clone(settleKey(&half))
		if !s.markSettled(key, now) {
			// Already committed or rolled back by this process: the
			// answer to an older copy's check, or a repeated END. Storing
			// again would deliver twice.
			s.log.Debug("txn: end of a settled transaction ignored", "key", key,
				"commitLogOffset", h.CommitLogOffset, "commit", h.CommitOrRollback == protocol.TransactionCommitType)
			return protocol.Success, ""
		}
	}
	if h.CommitOrRollback == protocol.TransactionCommitType {
		r := committed(&half)
		res := s.cfg.Store.PutMessage(ctx, &r, store.PutOptions{NoWait: true})
		if code, remark := finalStatus(res.Status); code != protocol.Success {
			if key != "" {
				s.unmarkSettled(key)
			}
			return code, remark
		}
		if s.cfg.Committed != nil {
			s.cfg.Committed(r.Topic, int(max(res.MsgNum, 1)), int(res.WroteBytes))
		}
	}
	op := s.opRecord(half.QueueOffset, now.UnixMilli())
	if res := s.cfg.Store.PutMessage(ctx, &op, store.PutOptions{NoWait: true}); res.Status != store.PutOK {
		// The transaction is settled (and, on commit, delivered); without
		// the op record a check may still ask the producer, whose answer
		// the settled set absorbs while this process lives.
		s.log.Warn("txn: op record not stored", "halfOffset", half.QueueOffset, "status", res.Status)
	}
	if s.cfg.Observer != nil {
		topic, _ := message.Property(half.Properties, message.PropertyRealTopic)
		s.cfg.Observer.Finished(topic, h.CommitOrRollback == protocol.TransactionCommitType, half.BornTimestamp, now.UnixMilli())
	}
	return protocol.Success, ""
}

// mayHaveCopies reports whether the transaction of half may exist as more
// than one half record: half is itself a copy a check re-appended, or the
// check walk already passed it (and so re-appended or parked it). Only
// those settlements are remembered: a transaction ended before the walk
// reached it has one record, whose op record the walk will see, and
// remembering every transaction would cost memory in proportion to the
// send rate.
func (s *Service) mayHaveCopies(half *message.Record) bool {
	if _, ok := message.Property(half.Properties, message.PropertyTransactionCheckTimes); ok {
		return true
	}
	if _, ok := message.Property(half.Properties, message.PropertyTransactionPreparedQueueOff); ok {
		return true
	}
	return half.QueueOffset < s.halfProgress.Load()
}

// lookHalf reads and validates the half message h names. The record
// aliases a read buffer, which the caller frees with release.
func (s *Service) lookHalf(h *protocol.EndTransactionRequestHeader) (_ message.Record, release func(), _ int32, _ string) {
	r, buf, err := s.cfg.Store.LookMessageByOffset(h.CommitLogOffset)
	if err != nil && s.waitCommitted(h.CommitLogOffset) {
		r, buf, err = s.cfg.Store.LookMessageByOffset(h.CommitLogOffset)
	}
	if err != nil {
		return message.Record{}, nil, protocol.SystemError, remarkNotFound
	}
	remark := ""
	switch {
	case r.Topic != meta.TransHalfTopic:
		remark = remarkNotFound
	case !propertyIs(r.Properties, message.PropertyProducerGroup, h.ProducerGroup):
		remark = remarkGroupWrong
	case r.QueueOffset != h.TranStateTableOffset:
		remark = remarkQueueWrong
	case r.PhysicalOffset != h.CommitLogOffset:
		remark = remarkOffsetWrong
	}
	if remark != "" {
		buf.Release()
		return message.Record{}, nil, protocol.SystemError, remark
	}
	return r, buf.Release, protocol.Success, ""
}

// propertyIs reports whether props has key with value v.
func propertyIs(props, key, v string) bool {
	got, ok := message.Property(props, key)
	return ok && got == v
}

// commitWait bounds how long END_TRANSACTION waits for the half record to
// become readable.
const commitWait = time.Second

// waitCommitted waits up to commitWait until the record at offset is
// readable (store.WaitReadable): a fast producer's END_TRANSACTION can
// arrive before the committer wrote the half. False when offset was never
// written or the wait timed out.
func (s *Service) waitCommitted(offset int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), commitWait)
	defer cancel()
	return s.cfg.Store.WaitReadable(ctx, offset)
}

// settleKey identifies a transaction across the copies the checks
// re-append: its UNIQ_KEY, else (a producer that sets none) the CommitLog
// offset of this copy.
func settleKey(r *message.Record) string {
	if k, ok := message.Property(r.Properties, message.PropertyUniqClientMessageIDKeyIdx); ok && k != "" {
		return k
	}
	return "@" + strconv.FormatInt(r.PhysicalOffset, 10)
}

// committed builds the message a commit stores (Java's
// endMessageTransaction): the real topic and queue, the half's body, flag,
// born info and reconsume times, the COMMIT transaction bits, and the
// half's property string unchanged.
func committed(half *message.Record) message.Record {
	topic, _ := message.Property(half.Properties, message.PropertyRealTopic)
	qid, _ := message.Property(half.Properties, message.PropertyRealQueueID)
	q, err := strconv.ParseInt(qid, 10, 32)
	if err != nil || q < 0 {
		q = 0
	}
	return message.Record{
		Topic:                     topic,
		QueueID:                   int32(q),
		Flag:                      half.Flag,
		SysFlag:                   message.WithTransactionType(half.SysFlag, message.TransactionCommitType),
		BornTimestamp:             half.BornTimestamp,
		BornHost:                  half.BornHost,
		ReconsumeTimes:            half.ReconsumeTimes,
		PreparedTransactionOffset: half.PhysicalOffset,
		Body:                      half.Body,
		Properties:                half.Properties,
	}
}

// finalStatus maps the status of a commit's put to END_TRANSACTION's
// answer (Java's sendFinalMessage): stored, even if not yet flushed or
// replicated, is SUCCESS.
func finalStatus(st store.PutStatus) (int32, string) {
	switch st {
	case store.PutOK, store.FlushDiskTimeout, store.FlushSlaveTimeout, store.SlaveNotAvailable:
		return protocol.Success, ""
	case store.CreateMappedFileFailed:
		return protocol.SystemError, "Create mapped file failed."
	case store.MessageIllegal, store.PropertiesSizeExceeded:
		return protocol.MessageIllegal, "The message is illegal, maybe msg body or properties length not matched."
	case store.ServiceNotAvailable:
		return protocol.ServiceNotAvailable, "Service not available now."
	case store.OSPageCacheBusy:
		return protocol.SystemError, "OS page cache busy, please try another machine"
	case store.InSyncReplicasNotEnough:
		return protocol.SystemError, "in-sync replicas not enough"
	default:
		return protocol.SystemError, fmt.Sprintf("UNKNOWN_ERROR (%v)", st)
	}
}
