package timer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(store.Config{
		Dir: dir, FS: vfs.Default, SegmentSize: 64 << 20, CQUnitsPerFile: 100000, MaxMessageSize: 64 << 10,
		StoreHost:     netip.MustParseAddrPort("127.0.0.1:10911"),
		FlushInterval: 20 * time.Millisecond, CQFlushInterval: 20 * time.Millisecond, CleanInterval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newService(t testing.TB, st Store, dir string, now func() time.Time) *Service {
	t.Helper()
	s, err := New(Config{Store: st, Dir: filepath.Join(dir, "timerbuckets"), BucketWidth: time.Second,
		CheckpointInterval: 50 * time.Millisecond, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// putHeld sends a timer message the way the send path does.
func putHeld(t testing.TB, st *store.Store, topic string, deliverMs int64, body string, now time.Time) {
	t.Helper()
	props := message.SetProperty("", message.PropertyTags, "TagA")
	props = message.SetProperty(props, message.PropertyTimerDeliverMS, strconv.FormatInt(deliverMs, 10))
	rec := message.Record{Topic: topic, QueueID: 1, Body: []byte(body), Properties: props,
		BornHost: netip.MustParseAddrPort("10.0.0.1:5000"), BornTimestamp: now.UnixMilli()}
	if st := Hold(&rec, now, Policy{Enabled: true, MaxDelay: 400 * 24 * time.Hour}); st != Held {
		t.Fatalf("hold: %v", st)
	}
	if res := st.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true}); res.Status != store.PutOK {
		t.Fatalf("put: %v", res.Status)
	}
}

func delivered(t testing.TB, st *store.Store, topic string) []message.Record {
	t.Helper()
	// A delivery is a put: its ConsumeQueue entry is written by the
	// store's dispatch, after the put returned.
	wait.For(t, 5*time.Second, "the store's dispatch", func() bool { return st.DispatchedOffset() >= st.CommitLogMaxOffset() })
	var out []message.Record
	for off := int64(0); ; {
		res, err := st.GetMessage("", topic, 1, off, 32, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != store.Found {
			res.Release()
			return out
		}
		for _, m := range res.Messages {
			r, _, err := message.DecodeRecord(m.Bytes, true)
			if err != nil {
				t.Fatal(err)
			}
			r.Body = bytes.Clone(r.Body) // the read buffer goes back to its pool
			out = append(out, r)
		}
		off = res.NextBeginOffset
		res.Release()
	}
}

func TestDeliversOnTime(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	svc := newService(t, st, dir, nil)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	now := time.Now()
	due := map[string]int64{}
	for i, d := range []time.Duration{2500, 300, 1200, 800, 1900, 300} { // ms, across 1 s buckets
		body := "m" + strconv.Itoa(i)
		due[body] = now.Add(d * time.Millisecond).UnixMilli()
		putHeld(t, st, "T", due[body], body, now)
	}
	wait.For(t, 6*time.Second, "6 deliveries", func() bool { return len(delivered(t, st, "T")) == 6 })
	var last int64
	for _, r := range delivered(t, st, "T") {
		body := string(r.Body)
		if r.StoreTimestamp < due[body] {
			t.Errorf("%s delivered at %d, before due %d", body, r.StoreTimestamp, due[body])
		}
		if r.StoreTimestamp > due[body]+1000 {
			t.Errorf("%s delivered at %d, more than 1 s after due %d", body, r.StoreTimestamp, due[body])
		}
		if due[body] < last {
			t.Errorf("%s out of delivery-time order", body)
		}
		last = due[body]
		if _, ok := message.Property(r.Properties, message.PropertyRealTopic); ok || r.Topic != "T" || r.QueueID != 1 {
			t.Errorf("%s: not restored: %s/%d %q", body, r.Topic, r.QueueID, r.Properties)
		}
		if v, _ := message.Property(r.Properties, message.PropertyTags); v != "TagA" {
			t.Errorf("%s: tags lost", body)
		}
	}
	if s := svc.Stats(); s.Enqueued != 6 || s.Delivered != 6 {
		t.Errorf("stats %+v", s)
	}
}

// TestCrashAndCleanRestart: held messages survive a clean stop (no
// duplicate) and a crash (the goroutine stopped without the final save;
// at most what was delivered after the last save comes twice).
func TestCrashAndCleanRestart(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run("crash="+strconv.FormatBool(crash), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st := openStore(t, dir)
			defer st.Close()
			svc := newService(t, st, dir, nil)
			if err := svc.Start(); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			const n = 40
			for i := range n {
				putHeld(t, st, "T", now.Add(time.Duration(200+i*40)*time.Millisecond).UnixMilli(), "m"+strconv.Itoa(i), now)
			}
			wait.For(t, 5*time.Second, "some deliveries", func() bool { return len(delivered(t, st, "T")) >= 5 })
			if crash {
				svc.loop.Close() // the goroutine stops; no final save
			} else if err := svc.Close(); err != nil {
				t.Fatal(err)
			}
			before := len(delivered(t, st, "T"))
			if before >= n {
				t.Fatalf("all delivered before the restart: the test proves nothing")
			}
			svc2 := newService(t, st, dir, nil)
			if err := svc2.Start(); err != nil {
				t.Fatal(err)
			}
			defer svc2.Close()
			seen := map[string]int{}
			wait.For(t, 5*time.Second, "all deliveries", func() bool {
				clear(seen)
				for _, r := range delivered(t, st, "T") {
					seen[string(r.Body)]++
				}
				return len(seen) == n
			})
			dups := 0
			for _, c := range seen {
				dups += c - 1
			}
			if !crash && dups != 0 {
				t.Errorf("clean restart delivered %d duplicates", dups)
			}
			// Crash bound: deliveries of one checkpoint interval (50 ms
			// here, messages 40 ms apart) plus scheduling slack.
			if crash && dups > 5 {
				t.Errorf("crash restart delivered %d duplicates", dups)
			}
		})
	}
}

// fakeClock is a settable clock.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// The tests below drive the service's loop on the test goroutine instead
// of starting it: with a fake clock every round is one call, so "nothing
// happened" is checked after the round that would have done it, not after
// a sleep.

// catchUp is the loop's start: read the timer queue into buckets.
func catchUp(t *testing.T, s *Service) {
	t.Helper()
	for {
		n, err := s.enqueue()
		if err != nil {
			t.Fatal(err)
		}
		if n < enqueueBatch {
			return
		}
	}
}

// round is one round of the loop: read new held messages, then deliver
// what is due at the clock's time.
func round(t *testing.T, s *Service) {
	t.Helper()
	if _, err := s.enqueue(); err != nil {
		t.Fatal(err)
	}
	s.step()
}

// waitHeld waits until the store has dispatched n held messages to the
// timer queue, so that the next enqueue sees them.
func waitHeld(t *testing.T, st *store.Store, n int64) {
	t.Helper()
	wait.For(t, 5*time.Second, fmt.Sprintf("%d held messages dispatched", n), func() bool { return st.MaxOffset(Topic, 0) >= n })
}

func TestYearDelay(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	clock := &fakeClock{}
	clock.ms.Store(time.Now().UnixMilli())
	// Far messages are copied into their bucket: the CommitLog copy is not
	// read (it may be gone by then).
	svc := newService(t, noCommitLogReads{st}, dir, clock.now)
	defer svc.Close()
	start := clock.now()
	year := 365 * 24 * time.Hour
	putHeld(t, st, "Y", start.Add(year).UnixMilli(), "year", start)
	putHeld(t, st, "Y", start.Add(year/2).UnixMilli(), "half", start)
	waitHeld(t, st, 2)
	catchUp(t, svc)
	round(t, svc)
	if s := svc.Stats(); s.Enqueued != 2 || s.InMemory != 0 {
		t.Fatalf("stats %+v: want both enqueued, no far entry held in memory", s)
	}
	clock.add(year/2 - time.Second)
	round(t, svc)
	if n := svc.Stats().Delivered; n != 0 {
		t.Fatalf("%d delivered a second early", n)
	}
	clock.add(time.Second)
	round(t, svc)
	if n := svc.Stats().Delivered; n != 1 {
		t.Fatalf("%d delivered at the half year, want 1", n)
	}
	wait.For(t, 5*time.Second, "half-year delivery dispatched", func() bool { return len(delivered(t, st, "Y")) == 1 })
	clock.add(year / 2)
	round(t, svc)
	wait.For(t, 5*time.Second, "year delivery dispatched", func() bool { return len(delivered(t, st, "Y")) == 2 })
	// Delivered buckets are deleted once the watermark passed them (at
	// the next checkpoint).
	clock.add(2 * time.Second)
	round(t, svc)
	if names := timerFiles(t, dir); !slices.Equal(names, []string{checkpointName}) {
		t.Fatalf("timer directory %v after the deliveries, want only the checkpoint", names)
	}
}

// noCommitLogReads is a store whose CommitLog reads fail.
type noCommitLogReads struct{ *store.Store }

func (noCommitLogReads) ReadMessage(int64, int32) (store.Buffer, error) {
	return store.Buffer{}, errors.New("no CommitLog reads in this test")
}

// TestOutageBacklog: after the broker was down while many buckets came
// due, everything is delivered in time order, the backlog loaded a bucket
// at a time.
func TestOutageBacklog(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	clock := &fakeClock{}
	clock.ms.Store(time.Now().UnixMilli())
	svc := newService(t, st, dir, clock.now)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	start := clock.now()
	const n = 600
	for i := range n { // 20 one-second buckets, 30 messages each
		putHeld(t, st, "O", start.Add(time.Minute+time.Duration(i)*(20*time.Second/n)).UnixMilli(), strconv.Itoa(i), start)
	}
	wait.For(t, 5*time.Second, "enqueued", func() bool { return svc.Stats().Enqueued == n })
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	clock.add(2 * time.Minute) // down while all came due
	svc = newService(t, st, dir, clock.now)
	defer svc.Close()
	// Round by round, the in-memory heap is measured after each one
	// (not sampled by a racing goroutine, which could miss a peak).
	catchUp(t, svc)
	var maxHeap int64
	for rounds := 0; svc.Stats().Delivered < n; rounds++ {
		if rounds == 10*n {
			t.Fatalf("%d of %d delivered after %d rounds", svc.Stats().Delivered, n, rounds)
		}
		round(t, svc)
		maxHeap = max(maxHeap, svc.Stats().InMemory)
	}
	wait.For(t, 10*time.Second, "backlog dispatched", func() bool { return len(delivered(t, st, "O")) == n })
	got := delivered(t, st, "O")
	for i, r := range got {
		if string(r.Body) != strconv.Itoa(i) {
			t.Fatalf("delivery %d is %q: out of time order", i, r.Body)
		}
	}
	if m := maxHeap; m > 2*30 {
		t.Errorf("up to %d entries in memory: the backlog was not loaded a bucket at a time", m)
	}
}

func TestNotifyNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	svc := newService(t, st, dir, nil)
	for range 3 {
		svc.Notify() // not started: the wake-up is kept, the others dropped
	}
	if n := len(svc.loop.Kicked()); n != 1 {
		t.Fatalf("%d wake-ups pending", n)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHeapOrder(t *testing.T) {
	var h minHeap
	r := rand.New(rand.NewPCG(1, 2))
	var want []int64
	for i := range 5000 {
		ms := r.Int64N(1000)
		want = append(want, ms)
		h.push(entry{deliverMs: ms, phyOffset: int64(i)})
	}
	slices.Sort(want)
	for i, w := range want {
		if e := h.pop(); e.deliverMs != w {
			t.Fatalf("pop %d = %d, want %d", i, e.deliverMs, w)
		}
	}
}

func TestCheckpointCodec(t *testing.T) {
	p := progress{enqueueOffset: 77, watermarkMs: 1_700_000_000_123}
	data := encodeProgress(p)
	got, err := decodeProgress(data)
	if err != nil || got != p {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	data[3] ^= 1
	if _, err := decodeProgress(data); err == nil {
		t.Fatal("corrupt checkpoint accepted")
	}
	if _, err := decodeProgress(data[:5]); err == nil {
		t.Fatal("short checkpoint accepted")
	}
}

// TestIdleDoesNotRewriteCheckpoint: with nothing pending the checkpoint
// file is left alone (no fsync churn on an idle broker). The rounds are
// driven with a fake clock and the checkpoint writes counted.
func TestIdleDoesNotRewriteCheckpoint(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	clock := &fakeClock{}
	clock.ms.Store(time.Now().UnixMilli())
	var saves atomic.Int64
	fs := vfs.NewErrorFS(vfs.Default, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpRename && filepath.Base(op.Path) == checkpointName+".tmp" {
			saves.Add(1)
		}
		return nil
	}))
	svc, err := New(Config{Store: st, FS: fs, Dir: filepath.Join(dir, "timerbuckets"), BucketWidth: time.Second,
		CheckpointInterval: 50 * time.Millisecond, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	now := clock.now()
	putHeld(t, st, "T", now.Add(100*time.Millisecond).UnixMilli(), "m", now)
	waitHeld(t, st, 1)
	catchUp(t, svc)
	clock.add(200 * time.Millisecond)
	round(t, svc)
	if n := svc.Stats().Delivered; n != 1 {
		t.Fatalf("%d delivered, want 1", n)
	}
	// Settled means the delivered message's bucket has been deleted: that
	// needs one more checkpoint once the watermark passes the bucket's end
	// (up to a BucketWidth after the delivery), a write that is not churn.
	clock.add(2 * time.Second)
	round(t, svc)
	if names := timerFiles(t, dir); !slices.Equal(names, []string{checkpointName}) {
		t.Fatalf("timer directory %v once settled, want only the checkpoint", names)
	}
	settled := saves.Load()
	if settled == 0 {
		t.Fatal("no checkpoint written for the delivery: the count below proves nothing")
	}
	for range 6 { // six checkpoint intervals, idle
		clock.add(50 * time.Millisecond)
		round(t, svc)
	}
	if n := saves.Load() - settled; n != 0 {
		t.Fatalf("idle timer rewrote its checkpoint %d times in six intervals", n)
	}
}

// TestCheckpointReported: Checkpoint reports the saved progress: the
// enqueue offset past every filed message and a watermark past the
// delivered ones, with a save count that grows.
func TestCheckpointReported(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	svc := newService(t, st, dir, nil)
	before := svc.Checkpoint()
	if before.EnqueueOffset != 0 || before.Saves != 0 || before.WatermarkMs == 0 {
		t.Fatalf("checkpoint at start %+v", before)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	now := time.Now()
	due := now.Add(200 * time.Millisecond).UnixMilli()
	putHeld(t, st, "T", due, "a", now)
	putHeld(t, st, "T", due, "b", now)
	wait.For(t, 5*time.Second, "a saved checkpoint past both messages", func() bool {
		c := svc.Checkpoint()
		return c.EnqueueOffset == 2 && c.WatermarkMs > due && c.Saves > 0
	})
}

// TestMetricsCountPending: held messages are counted per real topic until
// delivered, and the counts survive a restart (saved with the checkpoint).
func TestMetricsCountPending(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	svc := newService(t, st, dir, nil)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	putHeld(t, st, "Soon", now.Add(200*time.Millisecond).UnixMilli(), "s", now)
	putHeld(t, st, "Later", now.Add(time.Hour).UnixMilli(), "l1", now)
	putHeld(t, st, "Later", now.Add(2*time.Hour).UnixMilli(), "l2", now)
	wait.For(t, 5*time.Second, "Soon delivered and Later counted", func() bool {
		m := svc.Metrics()
		return m["Later"].Count == 2 && m["Soon"].Count == 0 && svc.Stats().Delivered == 1 && m["Soon"].TimeStamp > 0
	})
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	svc = newService(t, st, dir, nil)
	if m := svc.Metrics(); m["Later"].Count != 2 || m["Soon"].Count != 0 {
		t.Fatalf("after a restart: %+v", m)
	}
}

// TestCorruptMetricsFileIsNotFatal: the counts are a statistic; an
// unreadable file (a crash right after its unsynced write) costs them, not
// the timer.
func TestCorruptMetricsFileIsNotFatal(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	if err := os.MkdirAll(filepath.Join(dir, "timerbuckets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "timerbuckets", metricsName), []byte("{trunc"), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := newService(t, st, dir, nil)
	if m := svc.Metrics(); len(m) != 0 {
		t.Fatalf("counts from a corrupt file: %v", m)
	}
}

// timerFiles lists the timer directory without the pending-count file
// (GET_TIMER_METRICS), which lives beside the checkpoint.
func timerFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := vfs.Default.List(filepath.Join(dir, "timerbuckets"))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return n == metricsName })
}
