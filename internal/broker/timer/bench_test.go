package timer

import (
	"context"
	"flag"
	"io/fs"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// benchPending is the number of timer messages of BenchmarkTimerHour. CI
// runs the small default; the figure is taken with
//
//	go test -run '^$' -bench BenchmarkTimerHour -benchtime 1x \
//	    ./internal/broker/timer/ -timer.pending 1000000
var (
	benchPending = flag.Int("timer.pending", 20000, "timer messages of BenchmarkTimerHour")
	benchSpread  = flag.Duration("timer.spread", time.Hour, "BenchmarkTimerHour spreads its messages over [1m, this]")
)

// benchSample is the short-delay sample whose lateness is measured.
const benchSample = 1000

// BenchmarkTimerHour schedules -timer.pending messages spread uniformly
// over the next hour plus a sample of 1000 messages due within 1-3 s, and
// reports:
//
//	puts/s        send-path rate (Hold + CommitLog put) of the held messages
//	enqueue/s     rate at which the service files them into buckets
//	heapB/msg     Go heap growth per pending message once all are filed
//	diskB/msg     bucket-file bytes per pending message
//	p50-ms p99-ms lateness of the sample (store time of the delivered
//	              message - requested time)
func BenchmarkTimerHour(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		runTimerHour(b, *benchPending)
	}
}

func runTimerHour(b *testing.B, pending int) {
	dir := b.TempDir()
	st, err := store.Open(store.Config{
		Dir: dir, FS: vfs.Default, SegmentSize: 256 << 20, CQUnitsPerFile: 300000, MaxMessageSize: 64 << 10,
		StoreHost:     netip.MustParseAddrPort("127.0.0.1:10911"),
		FlushInterval: 200 * time.Millisecond, CQFlushInterval: 200 * time.Millisecond, CleanInterval: time.Hour,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := New(Config{Store: st, Dir: filepath.Join(dir, "timerbuckets")})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := svc.Start(); err != nil {
		b.Fatal(err)
	}
	defer svc.Close()

	r := rand.New(rand.NewPCG(7, 7))
	body := make([]byte, 64)
	policy := Policy{Enabled: true, MaxDelay: *benchSpread + time.Hour}
	put := func(topic string, deliverMs int64, now time.Time) {
		rec := message.Record{Topic: topic, QueueID: 0, Body: body, BornTimestamp: now.UnixMilli(),
			Properties: message.SetProperty("TAGS\x01t", message.PropertyTimerDeliverMS, strconv.FormatInt(deliverMs, 10))}
		if Hold(&rec, now, policy) != Held {
			b.Fatal("not held")
		}
		if res := st.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true}); !res.Status.Stored() {
			b.Fatalf("put: %v", res.Status)
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := range pending {
		now := time.Now()
		put("Far", now.Add(time.Minute+time.Duration(r.Int64N(int64(*benchSpread-time.Minute)))).UnixMilli(), now)
		if i%(pending/benchSample+1) == 0 {
			// The sample goes in among the far messages.
			put("Near", now.Add(time.Second+time.Duration(r.Int64N(int64(2*time.Second)))).UnixMilli(), now)
		}
	}
	putDur := time.Since(start)
	total := int64(pending + pending/(pending/benchSample+1) + 1)
	wait.For(b, time.Minute, "every timer message enqueued", func() bool { return svc.Stats().Enqueued >= total })
	enqDur := time.Since(start)
	b.StopTimer()

	nearWant := int(total) - pending
	var lateness []int64
	deadline := time.Now().Add(time.Minute)
	for len(lateness) < nearWant {
		if time.Now().After(deadline) {
			b.Fatalf("sample: %d of %d delivered", len(lateness), nearWant)
		}
		time.Sleep(100 * time.Millisecond)
		lateness = sampleLateness(b, st)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	disk := int64(0)
	_ = filepath.WalkDir(filepath.Join(dir, "timerbuckets"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != checkpointName {
			if info, err := d.Info(); err == nil {
				disk += info.Size()
			}
		}
		return nil
	})
	slices.Sort(lateness)
	b.ReportMetric(float64(pending)/putDur.Seconds(), "puts/s")
	b.ReportMetric(float64(total)/enqDur.Seconds(), "enqueue/s")
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(pending), "heapB/msg")
	b.ReportMetric(float64(disk)/float64(pending), "diskB/msg")
	b.ReportMetric(float64(svc.Stats().InMemory), "in-heap")
	b.ReportMetric(float64(lateness[len(lateness)/2]), "p50-ms")
	b.ReportMetric(float64(lateness[len(lateness)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// sampleLateness returns store time - TIMER_OUT_MS of the delivered
// sample messages.
func sampleLateness(b *testing.B, st *store.Store) []int64 {
	var out []int64
	for off := int64(0); ; {
		res, err := st.GetMessage("", "Near", 0, off, 32, nil)
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != store.Found {
			res.Release()
			return out
		}
		for _, m := range res.Messages {
			r, _, err := message.DecodeRecordNoCopy(m.Bytes, false)
			if err != nil {
				b.Fatal(err)
			}
			v, _ := message.Property(r.Properties, message.PropertyTimerOutMS)
			due, _ := strconv.ParseInt(v, 10, 64)
			out = append(out, r.StoreTimestamp-due)
		}
		off = res.NextBeginOffset
		res.Release()
	}
}
