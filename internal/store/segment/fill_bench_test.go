package segment

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// BenchmarkFillInterference measures what a concurrent zero-fill does to a
// SYNC_FLUSH writer on the real disk: a loop of 64 KiB WriteAt + Sync (the
// group commit's pattern) on a prepared file, while the next file (256 MiB)
// is zero-filled. It reports the writer's sync latency (p50, p99, max) and
// its rate during the fill, and the fill's duration; "none" runs the
// writer for a second without a fill. It is the tool for tuning the fill
// (span size, pacing): the sends' hiccup while the next segment is
// prepared comes from this interference.
//
//	go test -run '^$' -bench FillInterference -benchtime 1x -count 3 ./internal/store/segment/
func BenchmarkFillInterference(b *testing.B) {
	const fillSize = 256 << 20
	variants := []struct {
		name string
		fill func(vfs.File, int64) error
	}{
		{"none", nil},
		{"zerofill", zeroFill},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			var lat []time.Duration
			var fillTime, runTime time.Duration
			for i := 0; i < b.N; i++ {
				l, ft, rt := fillInterference(b, v.fill, fillSize)
				lat = append(lat, l...)
				fillTime += ft
				runTime += rt
			}
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
			b.ReportMetric(float64(len(lat))/runTime.Seconds(), "syncs/s")
			b.ReportMetric(ms(fillTime)/float64(b.N), "fill-ms")
		})
	}
}

func fillInterference(b *testing.B, fill func(vfs.File, int64) error, fillSize int64) (lat []time.Duration, fillTime, runTime time.Duration) {
	dir := b.TempDir()
	fs := vfs.Default
	const logSize = 64 << 20
	w, err := fs.Create(filepath.Join(dir, "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := zeroFill(w, logSize); err != nil {
		b.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	began := time.Now()
	go func() {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		for i := range buf {
			buf[i] = byte(i)
		}
		var off int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			if _, err := w.WriteAt(buf, off); err != nil {
				b.Error(err)
				return
			}
			if err := w.Sync(); err != nil {
				b.Error(err)
				return
			}
			lat = append(lat, time.Since(t0))
			off = (off + int64(len(buf))) % logSize
		}
	}()
	if fill == nil {
		time.Sleep(time.Second)
	} else {
		f, err := fs.Create(filepath.Join(dir, "next"))
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := f.Truncate(fillSize); err != nil {
			b.Fatal(err)
		}
		if err := fill(f, fillSize); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		fillTime = time.Since(t0)
		_ = f.Close()
	}
	close(stop)
	wg.Wait()
	return lat, fillTime, time.Since(began)
}
