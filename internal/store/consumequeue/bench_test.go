package consumequeue

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// Benchmarks of the queue's own work, on the in-memory file system so that
// they measure the queue and not the disk:
//
//	go test -run '^$' -bench . ./internal/store/consumequeue/

func openBenchSet(b *testing.B, perFile int) *Set {
	b.Helper()
	s, err := OpenSet("/cq", Options{FS: vfs.NewMem(), UnitsPerFile: perFile})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Recover(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAppendCommit appends batches of 32 units and commits each batch
// (the dispatcher's work per batch), rolling a file every 1,000 units.
// Every 32,000 units, outside the timer, the queue is flushed and its old
// files deleted (as the store's flusher and retention do), so that the
// in-memory file system stays small however long the run.
func BenchmarkAppendCommit(b *testing.B) {
	q := openBenchSet(b, 1000).GetOrCreate("T", 0)
	b.SetBytes(32 * UnitSize)
	b.ReportAllocs()
	b.ResetTimer()
	off := int64(0)
	for i := 0; i < b.N; i++ {
		for k := 0; k < 32; k++ {
			q.Append(off, unitFor(off))
			off++
		}
		if err := q.Commit(); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			b.StopTimer()
			if err := q.Flush(0); err != nil {
				b.Fatal(err)
			}
			if _, err := q.DeleteBelow(unitFor(off).Offset); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
}

// BenchmarkRead reads 32 units per call from a queue of 100,000 (a pull's
// queue read).
func BenchmarkRead(b *testing.B) {
	const n = 100_000
	q := openBenchSet(b, 10_000).GetOrCreate("T", 0)
	for off := int64(0); off < n; off++ {
		q.Append(off, unitFor(off))
	}
	if err := q.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		us, err := q.Read(int64(i*32)%(n-32), 32)
		if err != nil || us.Len() == 0 {
			b.Fatalf("read: %v %d", err, us.Len())
		}
		us.Release()
	}
}

// BenchmarkNewQueue creates a queue and commits its first unit (its file
// is created): the cost of a topic's first message per queue. It reports
// the heap each queue keeps (bytes/queue).
func BenchmarkNewQueue(b *testing.B) {
	s := openBenchSet(b, 1000)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := s.GetOrCreate(fmt.Sprintf("T%d", i), 0)
		q.Append(0, unitFor(0))
		if err := q.Commit(); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			// Outside the timer: the in-memory file system's record of
			// unsynced writes would otherwise grow with the run.
			b.StopTimer()
			if err := s.Flush(0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "bytes/queue")
}

// BenchmarkRecover reopens and recovers a set of 1,000 queues of 3 files.
func BenchmarkRecover(b *testing.B) {
	mem := vfs.NewMem()
	s, err := OpenSet("/cq", Options{FS: mem, UnitsPerFile: 100})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		q := s.GetOrCreate(fmt.Sprintf("T%d", i), 0)
		for off := int64(0); off < 250; off++ {
			q.Append(off, unitFor(off))
		}
		if err := q.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Flush(0); err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := OpenSet("/cq", Options{FS: mem, UnitsPerFile: 100})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Recover(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
