package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSegmentRoll measures what segment preparation costs the sends
// of a fresh store on the real disk: each iteration opens an empty store
// (open-ms: the first segment is prepared inside Open), times its first
// put (first-put-ms), then has W writers put 4 KiB messages through
// segRollOver rollovers of segRollSize segments. It reports the longest
// time a roll waited for its segment to be prepared (max-roll-wait-ms,
// the first put's roll included), the longest put that opened a segment
// (max-roll-put-ms: that wait plus its flush) and the longest put of all
// (max-put-ms: also the writers queued behind a roll and the zero-fill's
// I/O interference with the flushes). The goal: no put waits more
// than 50 ms for segment preparation.
//
//	go test -run '^$' -bench SegmentRoll -benchtime 1x ./internal/store/
func BenchmarkSegmentRoll(b *testing.B) {
	for _, syncFlush := range []bool{true, false} {
		mode := map[bool]string{true: "sync", false: "async"}[syncFlush]
		for _, writers := range []int{16} {
			b.Run(fmt.Sprintf("%s/writers=%d", mode, writers), func(b *testing.B) {
				benchSegmentRoll(b, syncFlush, writers)
			})
		}
	}
}

const (
	segRollSize = 64 << 20 // large enough that a zero-fill takes a while
	segRollOver = 3        // rollovers per iteration
	segRollBody = 4096
)

func benchSegmentRoll(b *testing.B, syncFlush bool, writers int) {
	tmpl := benchRecord(segRollBody)
	recSize := int64(tmpl.Size())
	var open, firstPut, maxRoll, maxPut, maxWait time.Duration
	var puts int64
	var putTime time.Duration
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cfg := benchConfig(filepath.Join(b.TempDir(), "store"), syncFlush)
		cfg.SegmentSize = segRollSize
		began := time.Now()
		s, err := Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		open += time.Since(began)

		r := *tmpl
		began = time.Now()
		if res := s.PutMessage(context.Background(), &r, PutOptions{}); res.Status != PutOK {
			b.Fatal(res.Status)
		}
		firstPut = max(firstPut, time.Since(began))

		end := int64(segRollOver+1) * segRollSize // into the last segment
		var wg sync.WaitGroup
		var failed atomic.Int64
		var mu sync.Mutex
		began = time.Now()
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var roll, worst time.Duration
				var n int64
				for s.CommitLogMaxOffset() < end-segRollSize/2 {
					rr := *tmpl
					rr.QueueID = int32(w % 8)
					t0 := time.Now()
					res := s.PutMessage(context.Background(), &rr, PutOptions{})
					d := time.Since(t0)
					if res.Status != PutOK {
						failed.Add(1)
						return
					}
					n++
					worst = max(worst, d)
					// The put that opened a segment wrote its first record.
					if res.WroteOffset%segRollSize < recSize {
						roll = max(roll, d)
					}
				}
				mu.Lock()
				maxRoll, maxPut, puts = max(maxRoll, roll), max(maxPut, worst), puts+n
				mu.Unlock()
			}()
		}
		wg.Wait()
		putTime += time.Since(began)
		b.StopTimer()
		maxWait = max(maxWait, s.log.RollStats().MaxWait)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		if failed.Load() > 0 {
			b.Fatalf("%d puts failed", failed.Load())
		}
		b.StartTimer()
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(open)/float64(b.N), "open-ms")
	b.ReportMetric(ms(firstPut), "first-put-ms")
	b.ReportMetric(ms(maxWait), "max-roll-wait-ms")
	b.ReportMetric(ms(maxRoll), "max-roll-put-ms")
	b.ReportMetric(ms(maxPut), "max-put-ms")
	b.ReportMetric(float64(puts)/putTime.Seconds(), "msgs/s")
}
