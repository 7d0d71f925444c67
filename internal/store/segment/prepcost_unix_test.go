//go:build unix

package segment

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// BenchmarkPrepareCost measures, in process CPU time (not wall time: it
// does not depend on what else runs on the machine), what a segment costs
// to prepare and then to write in the ASYNC_FLUSH committer's pattern
// (1 MiB WriteAt calls, no fsync), for a file only sized with Truncate
// (sparse, today's ASYNC_FLUSH preparation) and for a zero-filled one
// (SYNC_FLUSH's). Files are prepCostSize bytes and kept (with their page
// cache) until the benchmark ends, as a broker's CommitLog keeps them.
// Each iteration prepares and writes one file of each variant, in
// alternating order. It reports per variant prep-cpu-ms (the allocator's
// work), write-cpu-ms (the committer's), their sum and prep-ms (the
// preparation's wall time), and the bytes a zero-fill writes to disk.
//
// What it showed (2026-12-03, 2-vCPU VM, ext4): the cost is
// the page cache growing into memory the guest had not touched recently
// (2-2.5 s of CPU per GiB), paid by whoever writes a page first. A
// zero-fill moves it from the committer to the allocator without reducing
// it (sum 541 vs 644 ms per 256 MiB, write-cpu-ms 21 vs 644) and writes
// the segment to disk once more. When the pages were freed recently (the
// files of the run before deleted) both are cheap and the fill costs more
// in total (sum 140 vs 96 ms): the first -count of a run shows the
// fresh-memory case, later ones the recycled one.
//
//	go test -run '^$' -bench PrepareCost -benchtime 4x -count 2 ./internal/store/segment/
func BenchmarkPrepareCost(b *testing.B) {
	dir := b.TempDir()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	var prepCPU, writeCPU, prepWall [2]time.Duration
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		// Both variants each iteration, in alternating order: the page
		// cache's state drifts as the files accumulate.
		for k := range 2 {
			zero := (i+k)%2 == 1
			v := 0
			if zero {
				v = 1
			}
			f, err := vfs.Default.Create(filepath.Join(dir, fmt.Sprintf("seg%d-%d", i, v)))
			if err != nil {
				b.Fatal(err)
			}
			c0, w0 := processCPU(), time.Now()
			if err := f.Truncate(prepCostSize); err != nil {
				b.Fatal(err)
			}
			if zero {
				if err := zeroFill(f, prepCostSize); err != nil {
					b.Fatal(err)
				}
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			prepCPU[v] += processCPU() - c0
			prepWall[v] += time.Since(w0)
			c1 := processCPU()
			for off := int64(0); off < prepCostSize; off += int64(len(buf)) {
				if _, err := f.WriteAt(buf, off); err != nil {
					b.Fatal(err)
				}
			}
			writeCPU[v] += processCPU() - c1
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	for v, name := range []string{"sparse", "zerofill"} {
		b.ReportMetric(ms(prepCPU[v]), name+"-prep-cpu-ms")
		b.ReportMetric(ms(writeCPU[v]), name+"-write-cpu-ms")
		b.ReportMetric(ms(prepCPU[v]+writeCPU[v]), name+"-sum-cpu-ms")
		b.ReportMetric(ms(prepWall[v]), name+"-prep-ms")
	}
	b.ReportMetric(float64(prepCostSize>>20), "zerofill-disk-MiB")
}

// prepCostSize is BenchmarkPrepareCost's file size.
const prepCostSize = 256 << 20

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
