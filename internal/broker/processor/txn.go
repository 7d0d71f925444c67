package processor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/internal/broker/txn"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// isHalf applies Java's rule for a prepared send: TRAN_MSG true (any
// case), except a message a consumer re-sends for redelivery (reconsume
// times > 0 with a delay level), which still carries the TRAN_MSG of the
// committed message it copies.
func isHalf(rec *message.Record) bool {
	if !txn.IsHalf(rec.Properties) {
		return false
	}
	if rec.ReconsumeTimes <= 0 {
		return true
	}
	level, _ := message.Property(rec.Properties, message.PropertyDelayTimeLevel)
	n, err := strconv.Atoi(level)
	return err != nil || n <= 0
}

// sendHalf stores a prepared send (TRAN_MSG=true) as a half message
// (rocketmq-spec.md §11.2 step 1): refused with NO_PERMISSION when
// rejectTransactionMessage is set or the broker has no transaction
// service. The response carries the half record's msgId and half-queue
// offset with the queue id the producer asked for.
func (s *sendFamily) sendHalf(resp *remoting.Command, rec *message.Record, opts store.PutOptions) *remoting.Command {
	if s.live().RejectTransactionMessage || s.txn == nil {
		return fail(resp, protocol.NoPermission, fmt.Sprintf(
			"the broker[%s] sending transaction message is forbidden", s.cfg.BrokerIP1))
	}
	queueID := rec.QueueID
	began := time.Now()
	res := s.txn.PutHalf(context.Background(), rec, opts)
	s.countPut(rec.Topic, res, began)
	return s.putResponse(resp, res, queueID)
}

// handleEndTransaction serves END_TRANSACTION (37): commit or rollback of a
// half message, from the producer after its local transaction or as the
// answer to a check (§11.2 step 2). Unknown (0) is not acted on and not
// answered; clients send the request one-way anyway.
func (s *sendFamily) handleEndTransaction(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.EndTransactionRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	// Java's decoder refuses a header without its @CFNotNull fields
	// (SYSTEM_ERROR); without this a half-built request sent two-way would
	// fall into the unanswered "unknown" case below and hang its sender.
	for _, k := range [...]string{"producerGroup", "tranStateTableOffset", "commitLogOffset", "commitOrRollback", "msgId"} {
		if _, ok := req.ExtFields[k]; !ok {
			return remoting.NewResponse(protocol.SystemError, "the custom field <"+k+"> is null")
		}
	}
	if !s.isMaster() {
		// Java answers without a remark and logs "end transaction is
		// forbidden" on a slave.
		return remoting.NewResponse(protocol.SlaveNotAvailable, "")
	}
	switch h.CommitOrRollback {
	case protocol.TransactionCommitType, protocol.TransactionRollbackType:
	default:
		if h.CommitOrRollback != protocol.TransactionNotType {
			s.log.Debug("end transaction: unknown commitOrRollback", "value", h.CommitOrRollback)
		}
		return nil
	}
	if s.txn == nil {
		return remoting.NewResponse(protocol.NoPermission, "the broker has no transaction service")
	}
	code, remark := s.txn.End(context.Background(), &h)
	if code != protocol.Success {
		s.log.Warn("end transaction refused", "group", h.ProducerGroup, "commitLogOffset", h.CommitLogOffset,
			"tranStateTableOffset", h.TranStateTableOffset, "fromCheck", h.FromTransactionCheck, "code", code, "remark", remark)
	}
	return remoting.NewResponse(code, remark)
}
