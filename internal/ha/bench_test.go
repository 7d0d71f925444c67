package ha

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// BenchmarkProduce64 compares put throughput of an ASYNC_MASTER and a
// SYNC_MASTER, each replicating to a slave over loopback, with 64
// concurrent producers (256-byte bodies), in the same run, in the classic
// and the AutoSwitch protocol:
//
//	go test -run '^$' -bench Produce64 -benchtime 3s ./internal/ha/
//
// SYNC_MASTER answers each put only after the slave acked it (one ack
// completes every put it covers). At this level an ASYNC_MASTER put is a
// memory copy (~0.5-1.5 M puts/s on 2 CPUs) while every SYNC_MASTER put
// waits for a loopback round trip through both stores (~60-200 k/s), so
// the ratio here is not the issue's; the end-to-end comparison, where both
// roles also pay the client round trip, is BenchmarkBrokerProduce64 in
// internal/broker.
func BenchmarkProduce64(b *testing.B) {
	for _, mode := range []struct {
		name       string
		sync, auto bool
	}{{"ASYNC_MASTER", false, false}, {"SYNC_MASTER", true, false},
		{"ASYNC_MASTER/autoswitch", false, true}, {"SYNC_MASTER/autoswitch", true, true}} {
		b.Run(mode.name, func(b *testing.B) {
			big := func(c *store.Config) { c.SegmentSize = 256 << 20 }
			// AutoSwitch: the SyncStateSet holds the master (0) and the
			// slave (1), every put waits for it (allAckInSyncStateSet).
			m, srv := newMaster(b, b.TempDir(), ServerConfig{Sync: mode.sync, AutoSwitch: mode.auto, AllAckInSyncStateSet: mode.auto}, big)
			s := newSlaveStore(b, b.TempDir(), big)
			if mode.auto {
				if err := m.Epochs().Append(1, 0); err != nil {
					b.Fatal(err)
				}
				startASClient(b, s, srv.Addr().String(), 1, nil)
				srv.SetSyncStateSet([]int64{0, 1})
			} else {
				startClient(b, s, srv.Addr().String(), nil)
			}
			wait.For(b, 10*time.Second, "slave in sync", srv.slaveInSync)
			rec := record("Bench", 0, 1)
			rec.Body = make([]byte, 256)
			b.SetBytes(int64(len(rec.Body)))
			b.ReportAllocs()
			b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := *rec
				for pb.Next() {
					if st := m.PutMessage(context.Background(), &r, store.PutOptions{}).Status; st != store.PutOK {
						b.Errorf("put: %v", st)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
