package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Store-level benchmarks on the real disk (b.TempDir). The CommitLog's own
// put benchmarks (with the bare group-commit baseline) are in
// internal/store/commitlog; these add the store around it: the put gate and
// the dispatcher building ConsumeQueues, and the read path of a pull.
//
//	go test -run '^$' -bench . -benchtime 2s ./internal/store/

const benchSegment = 128 << 20

func benchConfig(dir string, syncFlush bool) Config {
	return Config{
		Dir:         dir,
		FS:          vfs.Default,
		SegmentSize: benchSegment,
		FlushSync:   syncFlush,
		StoreHost:   testStoreHost,
	}
}

func benchRecord(body int) *message.Record {
	r := newRecord("BenchTopic", 0, bodyFor(7, body), map[string]string{"TAGS": "bench", "UNIQ_KEY": "C0A8010700002A9F00000000000000000001"})
	return r
}

// BenchmarkGetMessage32 pulls 32 messages of 1 KiB per call from a queue of
// 20,000 (the pull path: ConsumeQueue read, 32 CommitLog reads into pooled
// buffers, result assembly and release).
func BenchmarkGetMessage32(b *testing.B) {
	s, err := Open(benchConfig(b.TempDir(), false))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 20_000
	tmpl := benchRecord(1024)
	for i := 0; i < n; i++ {
		r := *tmpl
		if res := s.PutMessage(context.Background(), &r, PutOptions{}); res.Status != PutOK {
			b.Fatal(res.Status)
		}
	}
	waitDispatched(b, s)
	filter := NewTagFilter(false, "bench")
	r, _ := s.GetMessage("g", "BenchTopic", 0, 0, 32, filter)
	b.SetBytes(int64(r.TotalSize))
	r.Release()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := int64(i*32) % (n - 32)
		r, err := s.GetMessage("g", "BenchTopic", 0, off, 32, filter)
		if err != nil || r.Status != Found || len(r.Messages) != 32 {
			b.Fatalf("get: %v %v", err, r.Status)
		}
		r.Release()
	}
}

// BenchmarkStorePut puts from W writers and counts a message done when
// its ConsumeQueue unit is visible (dispatch included). Async runs also
// report "x-raw": store MB/s over a raw sequential buffered write of the
// same bytes on the same disk in the same run.
func BenchmarkStorePut(b *testing.B) {
	for _, syncFlush := range []bool{false, true} {
		for _, writers := range []int{1, 16, 64} {
			for _, body := range []int{128, 1024, 4096} {
				mode := "async"
				if syncFlush {
					mode = "sync"
				}
				b.Run(fmt.Sprintf("%s/writers=%d/body=%d", mode, writers, body), func(b *testing.B) {
					benchStorePut(b, syncFlush, writers, body)
				})
			}
		}
	}
}

func benchStorePut(b *testing.B, syncFlush bool, writers, body int) {
	dir := b.TempDir()
	tmpl := benchRecord(body)
	var raw time.Duration
	if !syncFlush {
		b.StopTimer()
		raw = rawSequentialWrite(b, filepath.Join(dir, "raw"), b.N, tmpl.Size())
		b.StartTimer()
	}
	s, err := Open(benchConfig(filepath.Join(dir, "store"), syncFlush))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	warm := *tmpl
	if res := s.PutMessage(context.Background(), &warm, PutOptions{}); res.Status != PutOK {
		b.Fatal(res.Status)
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
			r := *tmpl
			r.QueueID = int32(w % 8)
			for next.Add(1) <= int64(b.N) {
				rr := r
				if s.PutMessage(context.Background(), &rr, PutOptions{}).Status != PutOK {
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
	if !syncFlush {
		// The faster of a baseline before and after the store: the ratio is
		// a lower bound despite write-back noise between runs.
		raw = min(raw, rawSequentialWrite(b, filepath.Join(dir, "raw"), b.N, tmpl.Size()))
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	if raw > 0 {
		b.ReportMetric(raw.Seconds()/elapsed.Seconds(), "x-raw")
	}
}

// rawSequentialWrite writes n records of size bytes with a 1 MiB buffered
// writer (no fsync): the page-cache rate of this disk.
func rawSequentialWrite(b *testing.B, path string, n, size int) time.Duration {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(path)
	defer f.Close()
	rec := make([]byte, size)
	w := bufio.NewWriterSize(f, 1<<20)
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}
