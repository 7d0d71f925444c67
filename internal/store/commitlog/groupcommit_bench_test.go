package commitlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// BenchmarkGroupCommit models the broker's closed loop under SYNC_FLUSH
// (issue 18) on the real disk: each writer spends work of CPU between its
// puts (in the broker: decoding the request, the socket's system calls, the
// answer), so a put arrives about one round trip after its previous answer
// and puts arrive spread out, not all at once. Against the same loop under
// ASYNC_FLUSH and one fdatasync on the same disk, it reports the bound
// writers / (async round trip + fdatasync) and the sync rate's share of it
// ("x-bound"), as bench/compare does end to end, with the flusher's
// counters:
//
//	puts/sync  records per fdatasync
//	behind-us  a put's mean wait before the round that covered it began
//	own-us     its mean wait from then to the end of that round's fdatasync
//	round-us   a round's mean length (commit + fdatasync)
//	idle-%     the rounds that began with the flusher idle
//
//	go test -run '^$' -bench 'GroupCommit' -benchtime 20000x -count 3 ./internal/store/commitlog/
func BenchmarkGroupCommit(b *testing.B) {
	for _, work := range []time.Duration{0, 10 * time.Microsecond, 25 * time.Microsecond} {
		for _, writers := range []int{1, 64} {
			b.Run(fmt.Sprintf("work=%s/writers=%d", work, writers), func(b *testing.B) {
				benchGroupCommit(b, writers, work)
			})
		}
	}
}

func benchGroupCommit(b *testing.B, writers int, work time.Duration) {
	dir := b.TempDir()
	tmpl := benchRecord(1024)
	run := func(syncFlush bool, stats *GroupCommitStats) (elapsed, cpu time.Duration) {
		cfg := Config{
			Dir:         filepath.Join(dir, fmt.Sprintf("commitlog-%v", syncFlush)),
			FS:          vfs.Default,
			SegmentSize: benchSegment,
			FlushSync:   syncFlush,
			StoreHost:   testStoreHost,
		}
		l := openLog(b, cfg)
		warm := *tmpl
		if st := l.Put(context.Background(), &warm, PutOptions{}).Status; st != PutOK {
			b.Fatal(st)
		}
		prepared := filepath.Join(cfg.Dir, segment.Name(benchSegment))
		wait.For(b, time.Minute, "the first segment prepared", func() bool {
			_, err := os.Stat(prepared)
			return err == nil
		})
		before := l.GroupCommitStats()
		cpuStart := processCPU(b)
		start := time.Now()
		var next, failed atomic.Int64
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := *tmpl
				r.QueueID = int32(w % 8)
				for next.Add(1) <= int64(b.N) {
					spin(work)
					if l.Put(context.Background(), &r, PutOptions{}).Status != PutOK {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		elapsed = time.Since(start)
		cpu = processCPU(b) - cpuStart
		if stats != nil {
			after := l.GroupCommitStats()
			*stats = GroupCommitStats{
				Syncs:      after.Syncs - before.Syncs,
				IdleStarts: after.IdleStarts - before.IdleStarts,
				Waiters:    after.Waiters - before.Waiters,
				Behind:     after.Behind - before.Behind,
				Own:        after.Own - before.Own,
				SyncTime:   after.SyncTime - before.SyncTime,
			}
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d puts failed", n)
		}
		if err := os.RemoveAll(cfg.Dir); err != nil {
			b.Fatal(err)
		}
		return elapsed, cpu
	}
	b.StopTimer()
	asyncElapsed, _ := run(false, nil)
	fsync := medianFdatasync(b, dir, 200)
	b.ReportAllocs()
	b.StartTimer()
	var st GroupCommitStats
	elapsed, cpu := run(true, &st)
	b.StopTimer()

	rate := float64(b.N) / elapsed.Seconds()
	rtt := asyncElapsed.Seconds() * float64(writers) / float64(b.N)
	bound := float64(writers) / (rtt + fsync.Seconds())
	b.ReportMetric(rate, "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
	b.ReportMetric(rate/bound, "x-bound")
	b.ReportMetric(float64(fsync.Nanoseconds())/1e3, "fsync-us")
	if st.Syncs > 0 && st.Waiters > 0 {
		b.ReportMetric(float64(st.Waiters)/float64(st.Syncs), "puts/sync")
		b.ReportMetric(float64(st.Behind.Microseconds())/float64(st.Waiters), "behind-us")
		b.ReportMetric(float64(st.Own.Microseconds())/float64(st.Waiters), "own-us")
		b.ReportMetric(float64(st.SyncTime.Microseconds())/float64(st.Syncs), "round-us")
		b.ReportMetric(100*float64(st.IdleStarts)/float64(st.Syncs), "idle-%")
	}
}

// spin burns d of CPU on the calling goroutine.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}

// medianFdatasync is the median of n fdatasyncs, each after a 4 KiB write
// into a zero-filled, synced file in dir (as the CommitLog's prepared
// segments are written).
func medianFdatasync(b *testing.B, dir string, n int) time.Duration {
	const size = 4096
	path := filepath.Join(dir, "fsync-probe")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(path)
	defer f.Close()
	if _, err := f.Write(make([]byte, n*size)); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, size)
	times := make([]time.Duration, n)
	for i := range times {
		if _, err := f.WriteAt(buf, int64(i*size)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	return times[n/2]
}
