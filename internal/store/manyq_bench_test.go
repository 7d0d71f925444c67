package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// BenchmarkManyQueues puts 1 KiB messages from 16 writers round-robin over
// N queues, in one topic or in topics of 8 queues, and counts a message
// done when its ConsumeQueue unit is visible (dispatch included): the
// store's part of the scale curve "10k queues >= 80 % of the 8-queue
// throughput" (issue 18), without the network. Every queue gets one
// message before the timer starts, so the queue files exist and are synced
// (their creation is BenchmarkNewQueuesOnDisk).
// Compare the sub-benchmarks of one run:
//
//	go test -run '^$' -bench ManyQueues -benchtime 200000x -count 5 ./internal/store/
func BenchmarkManyQueues(b *testing.B) {
	for _, c := range []struct {
		queues, perTopic int
	}{{8, 8}, {10_000, 10_000}, {10_000, 8}} {
		layout := "topic"
		if c.perTopic < c.queues {
			layout = "topics8"
		}
		b.Run(fmt.Sprintf("layout=%s/queues=%d", layout, c.queues), func(b *testing.B) {
			benchManyQueues(b, c.queues, c.perTopic)
		})
	}
}

func benchManyQueues(b *testing.B, queues, perTopic int) {
	const writers = 16
	cfg := benchConfig(filepath.Join(b.TempDir(), "store"), false)
	cfg.MaxOpenCQFiles = max(1024, 2*queues) // the broker's default with ulimit -n >= 4*queues
	s, err := Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tmpl := benchRecord(1024)
	topics := make([]string, (queues+perTopic-1)/perTopic)
	for i := range topics {
		topics[i] = "BenchTopic" + strconv.Itoa(i)
	}
	target := func(i int) (string, int32) {
		q := i % queues
		return topics[q/perTopic], int32(q % perTopic)
	}
	// Every queue exists, with a file, before the timer.
	for i := 0; i < queues; i++ {
		r := *tmpl
		r.Topic, r.QueueID = target(i)
		if res := s.PutMessage(context.Background(), &r, PutOptions{}); res.Status != PutOK {
			b.Fatal(res.Status)
		}
	}
	wait.For(b, 5*time.Minute, "warm-up dispatch", func() bool { return s.DispatchedOffset() >= s.CommitLogMaxOffset() })
	// The new files and directories synced before the timer too: the first
	// flush after creating 10,000 queues (a directory sync each) would
	// otherwise fall into the measurement, some runs more than others.
	if err := s.flushQueuesAndCheckpoint(0); err != nil {
		b.Fatal(err)
	}

	b.SetBytes(int64(tmpl.Size()))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				r := *tmpl
				r.Topic, r.QueueID = target(int(i))
				if s.PutMessage(context.Background(), &r, PutOptions{}).Status != PutOK {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	wait.For(b, 5*time.Minute, "dispatch", func() bool { return s.DispatchedOffset() >= s.CommitLogMaxOffset() })
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d puts failed", failed.Load())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// BenchmarkNewQueuesOnDisk puts the first message of b.N new queues (one
// topic) on the real disk and waits for their dispatch: what a run that
// creates its queues while it measures pays per queue (the queue's
// directory and file), next to the steady state of BenchmarkManyQueues.
//
//	go test -run '^$' -bench NewQueuesOnDisk -benchtime 10000x ./internal/store/
func BenchmarkNewQueuesOnDisk(b *testing.B) {
	cfg := benchConfig(filepath.Join(b.TempDir(), "store"), false)
	cfg.MaxOpenCQFiles = max(1024, 2*b.N)
	s, err := Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tmpl := benchRecord(1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := *tmpl
		r.QueueID = int32(i)
		if res := s.PutMessage(context.Background(), &r, PutOptions{}); res.Status != PutOK {
			b.Fatal(res.Status)
		}
	}
	wait.For(b, 10*time.Minute, "dispatch", func() bool { return s.DispatchedOffset() >= s.CommitLogMaxOffset() })
}
