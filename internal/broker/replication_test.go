package broker_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/ha"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// startSlave starts a slave of c's master (same brokerName, brokerId 1)
// in this process; it learns the master's addresses from the NameServer.
func (c *cluster) startSlave(t testing.TB) *broker.Broker {
	t.Helper()
	bc := c.brokerConfig()
	bc.BrokerID = 1
	bc.BrokerRole = config.Slave
	bc.StorePathRootDir = filepath.Join(c.dir, "slave-store")
	s, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0", SlaveSyncInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("slave shutdown: %v", err)
		}
		c.rc.CloseConn(s.Addr())
	})
	wait.For(t, 10*time.Second, "the slave to replicate", func() bool { return s.HAStatus().State == ha.Replicating || c.b.HAServer().Acked() >= 0 })
	return s
}

func TestSyncMasterWithSlave(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.BrokerRole = config.SyncMaster })
	const topic = "ReplTopic"
	// Without a slave a SYNC_MASTER answers SLAVE_NOT_AVAILABLE (stored).
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 2, BornTimestamp: time.Now().UnixMilli(), Properties: "TAGS\x01a"}
	if r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte("alone")); r.Code != protocol.SlaveNotAvailable {
		t.Fatalf("send without slave: %d %s, want SLAVE_NOT_AVAILABLE", r.Code, r.Remark)
	}
	c.createTopic(topic, 2)
	// The master's delayOffset.json (the schedule service may rewrite it;
	// the slave must end up with whatever the master has).
	mdelay := filepath.Join(c.dir, "store", "config", "delayOffset.json")
	if _, err := os.Stat(mdelay); os.IsNotExist(err) {
		if err := os.WriteFile(mdelay, []byte(`{"offsetTable":{1:5,3:9}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := c.startSlave(t)
	wait.For(t, 10*time.Second, "SEND_OK with the slave", func() bool {
		return c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte("first")).Code == protocol.Success
	})
	for i := range 50 {
		if r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte{byte(i)}); r.Code != protocol.Success {
			t.Fatalf("send %d: %d %s", i, r.Code, r.Remark)
		}
	}
	// A slave refuses sends and topic changes.
	if r := c.invoke(s.Addr(), protocol.SendMessage, &h, []byte("x")); r.Code != protocol.ServiceNotAvailable {
		t.Fatalf("send to slave: %d %s, want SERVICE_NOT_AVAILABLE", r.Code, r.Remark)
	}
	th := protocol.CreateTopicRequestHeader{Topic: "OnSlave", DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	if r := c.invoke(s.Addr(), protocol.UpdateAndCreateTopic, &th, nil); r.Code != protocol.SystemError {
		t.Fatalf("create topic on slave: %d %s, want SYSTEM_ERROR", r.Code, r.Remark)
	}
	// The slave's CommitLog and queues follow the master's.
	wait.For(t, 10*time.Second, "the slave's queues", func() bool {
		return s.Store().CommitLogMaxOffset() == c.b.Store().CommitLogMaxOffset() &&
			s.Store().MaxOffset(topic, 0)+s.Store().MaxOffset(topic, 1) == c.b.Store().MaxOffset(topic, 0)+c.b.Store().MaxOffset(topic, 1)
	})
	// Metadata: a consumer offset committed on the master reaches the
	// slave, and so does the topic config.
	uh := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 1, CommitOffset: 7}
	if r := c.invoke(c.b.Addr(), protocol.UpdateConsumerOffset, &uh, nil); r.Code != protocol.Success {
		t.Fatalf("update offset: %d %s", r.Code, r.Remark)
	}
	wait.For(t, 10*time.Second, "the offset on the slave", func() bool {
		r := c.invoke(s.Addr(), protocol.QueryConsumerOffset, &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 1}, nil)
		var oh protocol.OffsetResponseHeader
		return r.Code == protocol.Success && oh.Decode(r.ExtFields) == nil && oh.Offset == 7
	})
	wait.For(t, 10*time.Second, "the slave's delayOffset.json", func() bool {
		m, err1 := os.ReadFile(mdelay)
		sl, err2 := os.ReadFile(filepath.Join(c.dir, "slave-store", "config", "delayOffset.json"))
		return err1 == nil && err2 == nil && bytes.Equal(m, sl)
	})
	r := c.invoke(s.Addr(), protocol.GetAllTopicConfig, nil, nil)
	if r.Code != protocol.Success || !bytes.Contains(r.Body, []byte(topic)) {
		t.Fatalf("slave topics: %d %s", r.Code, r.Body)
	}
	// The slave serves pulls of the replicated messages.
	ph := protocol.PullMessageRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 0, MaxMsgNums: 32,
		SysFlag: protocol.PullFlagSubscription, Subscription: "*"}
	if r := c.invoke(s.Addr(), protocol.PullMessage, &ph, nil); r.Code != protocol.Success || len(r.Body) == 0 {
		t.Fatalf("pull from slave: %d %s", r.Code, r.Remark)
	}
	// A slave does not move a consumer's offset: beyond its end it answers
	// PULL_RETRY_IMMEDIATELY at the same offset (the master would answer
	// PULL_OFFSET_MOVED).
	ph.QueueOffset = 1000
	r = c.invoke(s.Addr(), protocol.PullMessage, &ph, nil)
	var prh protocol.PullMessageResponseHeader
	if err := prh.Decode(r.ExtFields); err != nil || r.Code != protocol.PullRetryImmediately || prh.NextBeginOffset != 1000 {
		t.Fatalf("pull beyond the end on the slave: code %d next %d (%v)", r.Code, prh.NextBeginOffset, err)
	}
	if r := c.invoke(c.b.Addr(), protocol.PullMessage, &ph, nil); r.Code != protocol.PullOffsetMoved {
		t.Fatalf("pull beyond the end on the master: code %d, want PULL_OFFSET_MOVED", r.Code)
	}
}

// BenchmarkBrokerProduce64 is SEND_MESSAGE throughput with 64 concurrent
// senders (256-byte bodies) through rocketd's remoting client against an
// in-process ASYNC_MASTER and SYNC_MASTER, each with an in-process slave,
// in the same run:
//
//	go test -run '^$' -bench BrokerProduce64 -benchtime 3s ./internal/broker/
//
// Goal: SYNC_MASTER >= 50% of ASYNC_MASTER (replication pipelines).
func BenchmarkBrokerProduce64(b *testing.B) {
	for _, role := range []config.BrokerRole{config.AsyncMaster, config.SyncMaster} {
		b.Run(string(role), func(b *testing.B) {
			c := startCluster(b, func(bc *config.BrokerConfig) { bc.BrokerRole = role })
			c.createTopic("Bench", 4)
			c.startSlave(b)
			h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "Bench", DefaultTopic: "TBW102",
				DefaultTopicQueueNums: 4, QueueID: -1, BornTimestamp: time.Now().UnixMilli(), Properties: "TAGS\x01a"}
			body := make([]byte, 256)
			addr := c.b.Addr()
			wait.For(b, 10*time.Second, "SEND_OK", func() bool {
				return c.invoke(addr, protocol.SendMessage, &h, body).Code == protocol.Success
			})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			var busy atomic.Int64
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req := remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), body)
				for pb.Next() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					r, err := c.rc.Invoke(ctx, addr, req)
					cancel()
					switch {
					case err == nil && r.Code == protocol.SystemBusy:
						busy.Add(1) // fast failure on a loaded machine; clients retry
					case err != nil || r.Code != protocol.Success:
						b.Errorf("send: %v %v", err, r)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N-int(busy.Load()))/time.Since(start).Seconds(), "msgs/s")
			b.ReportMetric(float64(busy.Load())/float64(b.N), "busy/op")
		})
	}
}
