package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// BenchmarkTransactionalSend compares, in one run against one in-process
// broker (ASYNC_FLUSH, 1 KiB bodies, 8 senders sharing rocketd's remoting
// client), plain sends with transactional ones: a half message
// (SEND_MESSAGE with TRAN_MSG) and its END_TRANSACTION commit (one-way, as
// the clients send it). The timed part ends when every committed message
// is in the real topic's queue. msgs/s is the figure to compare:
//
//	go test -run '^$' -bench BenchmarkTransactionalSend -benchtime 2s ./internal/broker
func BenchmarkTransactionalSend(b *testing.B) {
	c := startCluster(b, nil)
	body := make([]byte, 1024)
	addr := c.b.Addr()
	send := func(b *testing.B, topic, props string) *remoting.Command {
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: props}
		// A loaded machine may answer SYSTEM_BUSY (send queue wait over
		// waitTimeMillsInSendQueue): retried, as the clients do.
		for attempt := 0; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), body))
			cancel()
			if err == nil && r.Code == protocol.SystemBusy && attempt < 5 {
				continue
			}
			if err != nil || r.Code != protocol.Success {
				if r != nil {
					b.Errorf("send: %v code %d %s", err, r.Code, r.Remark)
				} else {
					b.Errorf("send: %v", err)
				}
				return nil
			}
			return r
		}
	}
	run := func(b *testing.B, topic string, one func(b *testing.B)) {
		c.createTopic(topic, 1)
		base := c.b.Store().MaxOffset(topic, 0)
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		b.SetParallelism(4) // 8 senders on 2 CPUs
		start := time.Now()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one(b)
			}
		})
		wait.For(b, 30*time.Second, "every message in "+topic, func() bool {
			return c.b.Store().MaxOffset(topic, 0)-base >= int64(b.N)
		})
		b.StopTimer()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	}
	b.Run("plain", func(b *testing.B) {
		run(b, "BenchPlain", func(b *testing.B) { send(b, "BenchPlain", "TAGS\x01a") })
	})
	b.Run("txn", func(b *testing.B) {
		props := "TAGS\x01a\x02TRAN_MSG\x01true\x02PGROUP\x01pg"
		run(b, "BenchTxn", func(b *testing.B) {
			r := send(b, "BenchTxn", props)
			if r == nil {
				return
			}
			var sh protocol.SendMessageResponseHeader
			if err := sh.Decode(r.ExtFields); err != nil {
				b.Error(err)
				return
			}
			_, off, err := message.ParseOffsetMsgID(sh.MsgID)
			if err != nil {
				b.Error(err)
				return
			}
			eh := protocol.EndTransactionRequestHeader{ProducerGroup: "pg", TranStateTableOffset: sh.QueueOffset,
				CommitLogOffset: off, CommitOrRollback: protocol.TransactionCommitType, MsgID: sh.MsgID}
			if err := c.rc.InvokeOneway(addr, remoting.NewRequest(protocol.EndTransaction, protocol.Ext(&eh), nil)); err != nil {
				b.Error(err)
			}
		})
	})
}
