package grpc

import (
	"errors"
	"fmt"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TransactionProducer is a gRPC producer as the broker's transaction
// check-back sees a producer connection (txn.Producer): the
// CHECK_TRANSACTION_STATE it is sent goes out on the producer's telemetry
// stream as a RecoverOrphanedTransactionCommand (Java's
// GrpcClientChannel), which the SDK answers with EndTransaction (source
// SERVER_CHECK).
type TransactionProducer struct{ stream *telemetryStream }

// PickProducer returns a producer with an open telemetry stream that
// publishes to group, the topic (SendMessage's producer group is the
// topic).
func (s *Server) PickProducer(group string) (*TransactionProducer, bool) {
	ts, ok := s.clients.producerStream(group)
	if !ok {
		return nil, false
	}
	return &TransactionProducer{stream: ts}, true
}

// RemoteAddr is the producer's address.
func (p *TransactionProducer) RemoteAddr() string { return p.stream.remote }

// InvokeOneway sends a CHECK_TRANSACTION_STATE request (header and the
// half message's record) as a RecoverOrphanedTransactionCommand whose
// transaction id names the half message's latest copy.
func (p *TransactionProducer) InvokeOneway(req *remoting.Command) error {
	if req.Code != protocol.CheckTransactionState {
		return fmt.Errorf("grpc: producer cannot be sent request %d", req.Code)
	}
	var h protocol.CheckTransactionStateRequestHeader
	if err := h.Decode(req.Ext()); err != nil {
		return fmt.Errorf("grpc: check transaction header: %w", err)
	}
	if len(req.Body) == 0 {
		return errors.New("grpc: check transaction request without a message")
	}
	rec, _, err := message.DecodeRecord(req.Body, false)
	if err != nil {
		return fmt.Errorf("grpc: check transaction message: %w", err)
	}
	m := grpcMessage(rec.Topic, &rec, "", rec.ReconsumeTimes, 0)
	return p.stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_RecoverOrphanedTransactionCommand{
		RecoverOrphanedTransactionCommand: &v2.RecoverOrphanedTransactionCommand{
			Message: m, TransactionId: transactionID(h.OffsetMsgID, h.TranStateTableOffset),
		},
	}})
}
