package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// END_TRANSACTION's answers that need no transaction service; the commit
// and rollback paths are tested in internal/broker/txn and, through the
// official client, in internal/broker.
func TestEndTransactionAnswers(t *testing.T) {
	end := func(how int32) map[string]string {
		return protocol.Ext(&protocol.EndTransactionRequestHeader{ProducerGroup: "pg", CommitLogOffset: 0,
			TranStateTableOffset: 0, CommitOrRollback: how, MsgID: "m"})
	}
	e := newEnv(t, nil)
	if r := e.call(protocol.EndTransaction, end(protocol.TransactionCommitType), nil); r.Code != protocol.NoPermission {
		t.Fatalf("without a transaction service: %d %s", r.Code, r.Remark)
	}
	if r := e.call(protocol.EndTransaction, map[string]string{"producerGroup": "pg", "commitLogOffset": "x"}, nil); r.Code != protocol.SystemError {
		t.Fatalf("malformed header: %d %s", r.Code, r.Remark)
	}
	// Unknown (0) is not answered at all.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if r, err := e.rc.Invoke(ctx, e.addr, remoting.NewRequest(protocol.EndTransaction, end(protocol.TransactionNotType), nil)); err == nil {
		t.Fatalf("END_TRANSACTION unknown answered: %d %s", r.Code, r.Remark)
	}

	slave := newEnv(t, func(bc *config.BrokerConfig, _ *processor.Deps) { bc.BrokerRole = config.Slave })
	if r := slave.call(protocol.EndTransaction, end(protocol.TransactionCommitType), nil); r.Code != protocol.SlaveNotAvailable {
		t.Fatalf("on a slave: %d %s", r.Code, r.Remark)
	}
}

// Which sends are half messages (Java's rule): TRAN_MSG true in any case,
// except a consumer's re-send for redelivery (reconsume times and a delay
// level), which copies TRAN_MSG from the committed message.
func TestHalfMessageRule(t *testing.T) {
	e := newEnv(t, nil) // no transaction service: a half message is refused
	e.createTopic("T", 4)
	upper := sendHeader("T", 0, "TRAN_MSG\x01TRUE\x02PGROUP\x01pg")
	if r := e.send(upper, "x"); r.Code != protocol.NoPermission {
		t.Fatalf("TRAN_MSG=TRUE: %d %s", r.Code, r.Remark)
	}
	resend := sendHeader("T", 0, "TRAN_MSG\x01true\x02PGROUP\x01pg\x02DELAY\x013")
	resend.ReconsumeTimes = protocol.Some[int32](1)
	if r := e.send(resend, "x"); r.Code != protocol.Success {
		t.Fatalf("re-sent transactional message: %d %s", r.Code, r.Remark)
	}
	noDelay := sendHeader("T", 0, "TRAN_MSG\x01true\x02PGROUP\x01pg")
	noDelay.ReconsumeTimes = protocol.Some[int32](1)
	if r := e.send(noDelay, "x"); r.Code != protocol.NoPermission {
		t.Fatalf("reconsumed without delay level is still a half message: %d %s", r.Code, r.Remark)
	}
}
