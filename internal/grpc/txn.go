package grpc

import (
	"context"
	"strconv"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// transactionID is what SendMessage answers for a half message and
// EndTransaction reads back: the half message's offset message id (its
// commit-log offset) and its queue offset in RMQ_SYS_TRANS_HALF_TOPIC,
// which END_TRANSACTION needs. Java's proxy keeps the same pair in a
// table (TransactionDataManager); encoding it needs no state.
func transactionID(offsetMsgID string, queueOffset int64) string {
	return offsetMsgID + "-" + strconv.FormatInt(queueOffset, 10)
}

func parseTransactionID(id string) (commitLogOffset, queueOffset int64, ok bool) {
	msgID, qo, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	_, clo, err := message.ParseOffsetMsgID(msgID)
	if err != nil {
		return 0, 0, false
	}
	q, err := strconv.ParseInt(qo, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return clo, q, true
}

// EndTransaction follows EndTransactionActivity: COMMIT or ROLLBACK of a
// half message sent through this service, as END_TRANSACTION.
func (s *Server) EndTransaction(ctx context.Context, req *v2.EndTransactionRequest) (*v2.EndTransactionResponse, error) {
	topic := req.GetTopic().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.EndTransactionResponse{Status: st}, nil
	}
	clo, qo, ok := parseTransactionID(req.GetTransactionId())
	if !ok {
		return &v2.EndTransactionResponse{Status: status(v2.Code_INVALID_TRANSACTION_ID, "transaction id is invalid: "+strconv.Quote(req.GetTransactionId()))}, nil
	}
	var kind int32
	switch req.GetResolution() {
	case v2.TransactionResolution_COMMIT:
		kind = protocol.TransactionCommitType
	case v2.TransactionResolution_ROLLBACK:
		kind = protocol.TransactionRollbackType
	default:
		return &v2.EndTransactionResponse{Status: status(v2.Code_BAD_REQUEST, "transaction resolution must be COMMIT or ROLLBACK")}, nil
	}
	h := protocol.EndTransactionRequestHeader{
		ProducerGroup: topic, TranStateTableOffset: qo, CommitLogOffset: clo, CommitOrRollback: kind,
		FromTransactionCheck: req.GetSource() == v2.TransactionSource_SOURCE_SERVER_CHECK,
		MsgID:                req.GetMessageId(), TransactionID: req.GetTransactionId(), Topic: topic, BrokerName: s.cfg.Broker.BrokerName,
	}
	resp := s.cfg.Processor.LocalEndTransaction(remoting.NewRequest(protocol.EndTransaction, protocol.Ext(&h), nil))
	return &v2.EndTransactionResponse{Status: remotingStatus(resp.Code, resp.Remark)}, nil
}
