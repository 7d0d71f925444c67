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
