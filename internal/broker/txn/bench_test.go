package txn

import (
	"context"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
)

// BenchmarkHalfAndCommit is the broker side of one transaction: the half
// message put, then END_TRANSACTION commit (lookup, committed message, op
// record). 1 KiB body, ASYNC_FLUSH, no network.
func BenchmarkHalfAndCommit(b *testing.B) {
	b.Run("observer=off", func(b *testing.B) { benchHalfAndCommit(b, nil) })
	b.Run("observer=on", func(b *testing.B) {
		benchHalfAndCommit(b, func(c *Config) { c.Observer = &countingObserver{} })
	})
}

// countingObserver stands for metrics.Events (an atomic add per call).
type countingObserver struct{ n atomic.Int64 }

func (o *countingObserver) HalfPut(string)                      { o.n.Add(1) }
func (o *countingObserver) HalfDone(string)                     { o.n.Add(-1) }
func (o *countingObserver) Finished(string, bool, int64, int64) { o.n.Add(-1) }

func benchHalfAndCommit(b *testing.B, tune func(*Config)) {
	e := newEnv(b, tune)
	body := make([]byte, 1024)
	props := message.EncodeProperties(map[string]string{
		message.PropertyTransactionPrepared: "true", message.PropertyProducerGroup: "pg", message.PropertyTags: "a",
	})
	born := netip.MustParseAddrPort("10.0.0.1:5000")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := message.Record{Topic: "T", QueueID: 0, SysFlag: message.TransactionPreparedType, BornHost: born,
			Body: body, Properties: props}
		res := e.svc.PutHalf(context.Background(), &r, store.PutOptions{NoWait: true})
		if res.Status != store.PutOK {
			b.Fatal(res.Status)
		}
		code, remark := e.svc.End(context.Background(), &protocol.EndTransactionRequestHeader{ProducerGroup: "pg",
			CommitLogOffset: res.WroteOffset, TranStateTableOffset: res.QueueOffset, CommitOrRollback: protocol.TransactionCommitType})
		if code != protocol.Success {
			b.Fatal(code, remark)
		}
	}
}

// BenchmarkCheckRoundSettled is a check round over 1000 settled half
// messages (op records read, half queue walked, nothing checked): the
// steady cost of the check-back per round.
func BenchmarkCheckRoundSettled(b *testing.B) {
	e := newEnv(b, nil)
	const n = 1000
	for i := range n {
		res := e.putHalf("b", "U"+strconv.Itoa(i))
		if code, _ := e.end(res.WroteOffset, res.QueueOffset, protocol.TransactionRollbackType); code != protocol.Success {
			b.Fatal(code)
		}
	}
	e.waitDispatched()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.svc.ops.reset(0)
		e.offsets.Commit(meta.TransCheckGroup, meta.TransHalfTopic, 0, 0)
		e.offsets.Commit(meta.TransCheckGroup, meta.TransOpHalfTopic, 0, 0)
		e.svc.checkRound()
		if off, _ := e.offsets.Query(meta.TransCheckGroup, meta.TransHalfTopic, 0); off != n {
			b.Fatalf("progress %d", off)
		}
	}
}
