package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
)

// Key index benchmarks on the real disk, with Java's default index
// dimensions (5,000,000 slots, 20,000,000 items: a 420 MB sparse file):
//
//	go test -run '^$' -bench 'PutIndex|QueryMessage' -benchtime 200000x ./internal/store/
//
// BenchmarkPutIndex puts 1 KiB messages, each with its own UNIQ_KEY and
// one KEYS entry (two index items), from 16 writers, and counts a message
// done once dispatched (ConsumeQueue unit and index items written): the
// index=off/index=on ratio is the index's cost on the put path.
func BenchmarkPutIndex(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run("index="+map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			cfg := benchConfig(b.TempDir(), false)
			cfg.MessageIndexDisabled = !on
			s, err := Open(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			body := bodyFor(3, 1024)
			b.SetBytes(1024)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var next, failed atomic.Int64
			var wg sync.WaitGroup
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						r := newRecord("BenchTopic", int32(i%8), body, nil)
						r.Properties = "UNIQ_KEY\x01C0A80107000078E6A2C0" + strconv.FormatInt(i, 16) +
							"\x02KEYS\x01order-" + strconv.FormatInt(i, 10) + "\x02"
						if s.PutMessage(context.Background(), r, PutOptions{}).Status != PutOK {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			waitDispatched(b, s)
			elapsed := time.Since(start)
			b.StopTimer()
			if failed.Load() > 0 {
				b.Fatalf("%d puts failed", failed.Load())
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
		})
	}
}

// BenchmarkQueryMessage looks up one key among 100,000 indexed messages
// (index chain walk plus reading the record): QUERY_MESSAGE's latency
// without the network.
func BenchmarkQueryMessage(b *testing.B) {
	s, err := Open(benchConfig(b.TempDir(), false))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 100_000
	body := bodyFor(3, 512)
	for i := 0; i < n; i++ {
		r := newRecord("BenchTopic", int32(i%8), body, map[string]string{message.PropertyKeys: "order-" + strconv.Itoa(i)})
		if res := s.PutMessage(context.Background(), r, PutOptions{}); res.Status != PutOK {
			b.Fatal(res.Status)
		}
	}
	waitDispatched(b, s)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := fmt.Sprintf("order-%d", (i*7919)%n)
		r, err := s.QueryMessage("BenchTopic", key, 32, 0, 1<<62)
		if err != nil || r.Count != 1 {
			b.Fatalf("%s: %d found, %v", key, r.Count, err)
		}
	}
}
