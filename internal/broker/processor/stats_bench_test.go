//go:build unix

package processor_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// BenchmarkSendStats is SEND_MESSAGE (1 KiB, async flush, several
// goroutines on 4 queues) with the statistics counted (stats=on, the
// broker's setting, sampler running) and not (stats=off, nil Stats).
// cpu-ns/op is the process CPU per message (clients and broker), which the
// machine's other load inflates less than ns/op. Compare the two by
// alternating runs of a compiled test binary, e.g.
//
//	go test -c -o /tmp/p.test ./internal/broker/processor
//	for i in $(seq 10); do for m in off on; do
//	  /tmp/p.test -test.run x -test.bench "SendStats/stats=$m" -test.benchtime 5000x
//	done; done | benchstat -col /stats -
//
// The goal is stats=on within 3 % of stats=off.
func BenchmarkSendStats(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "stats=off"
		if on {
			name = "stats=on"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, func(bc *config.BrokerConfig, d *processor.Deps) {
				if on {
					st := stats.New(stats.Config{Cluster: bc.BrokerClusterName})
					b.Cleanup(func() { _ = st.Close() })
					d.Stats = st
				}
			})
			e.createTopic("T", 4)
			body := make([]byte, 1024)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.SetParallelism(8)
			runtime.GC()
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req := remoting.NewRequest(protocol.SendMessage, protocol.Ext(sendHeader("T", -1, "TAGS\x01a")), body)
				for pb.Next() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					r, err := e.rc.Invoke(ctx, e.addr, req)
					cancel()
					if err != nil || r.Code != protocol.Success {
						b.Errorf("send: %v %v", err, r)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
