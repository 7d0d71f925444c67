package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store/checkpoint"
	"github.com/rocketd/rocketd/internal/store/commitlog"
	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// ack is a put the store acknowledged with PUT_OK under SYNC_FLUSH.
type ack struct {
	topic       string
	queueID     int32
	i           int // message number: the body is bodyFor(i, size)
	size        int
	offset      int64
	wroteBytes  int32
	queueOffset int64
}

// crashConfig is a tiny SYNC_FLUSH store: 4 KiB segments roll every few
// messages.
func crashConfig(fs vfs.FS) Config {
	cfg := testConfig(fs)
	cfg.SegmentSize = 4096
	cfg.MaxMessageSize = 2048
	cfg.FlushSync = true
	cfg.SyncFlushTimeout = 2 * time.Second
	cfg.CQUnitsPerFile = 1 // many queue files per queue
	return cfg
}

// putWorkload puts from a few writers at once (so group commit batches
// them) and returns the acknowledged puts. Failures are expected: the file
// system may "crash" at any point.
func putWorkload(s *Store, writers, perWriter int) []ack {
	var mu sync.Mutex
	var acks []ack
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := 0; j < perWriter; j++ {
				i := w*perWriter + j
				size := 100 + (i*397)%900
				topic := fmt.Sprintf("Crash%d", i%2)
				qid := int32(w % 3)
				r := newRecord(topic, qid, bodyFor(i, size), map[string]string{"TAGS": "k"})
				res := s.PutMessage(context.Background(), r, PutOptions{})
				// Anything but PUT_OK is not acknowledged: it may or may not survive.
				if res.Status == PutOK {
					mu.Lock()
					acks = append(acks, ack{topic, qid, i, size, res.WroteOffset, res.WroteBytes, res.QueueOffset})
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	return acks
}

// verifyAcked reopens nothing: it checks on an open store that every
// acknowledged message is readable at its offset with identical bytes, and
// through its queue.
func verifyAcked(t testing.TB, s *Store, acks []ack) {
	t.Helper()
	for _, a := range acks {
		rec, buf, err := s.LookMessageByOffset(a.offset)
		if err != nil {
			t.Fatalf("acked message %d at %d lost: %v", a.i, a.offset, err)
		}
		if !bytes.Equal(rec.Body, bodyFor(a.i, a.size)) || rec.Topic != a.topic || rec.QueueID != a.queueID ||
			rec.QueueOffset != a.queueOffset || len(buf.Bytes) != int(a.wroteBytes) {
			buf.Release()
			t.Fatalf("acked message %d at %d changed: topic %s queue %d offset %d", a.i, a.offset, rec.Topic, rec.QueueID, rec.QueueOffset)
		}
		buf.Release()
		r, err := s.GetMessage("g", a.topic, a.queueID, a.queueOffset, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != Found || r.Messages[0].PhysicalOffset != a.offset {
			st, got := r.Status, int64(-1)
			if len(r.Messages) > 0 {
				got = r.Messages[0].PhysicalOffset
			}
			r.Release()
			t.Fatalf("acked message %d (at %d) not found through %s/%d@%d: %s at %d", a.i, a.offset, a.topic, a.queueID, a.queueOffset, st, got)
		}
		r.Release()
	}
}

// TestCrashAtEveryWrite crashes the file system at the k-th mutating
// operation for every k through a workload, then reopens the post-crash
// image: every acknowledged put is there, no queue unit points past the
// CommitLog end, and recovering again (after another crash right after
// recovery) gives the same state.
func TestCrashAtEveryWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop")
	}
	totalAcked := 0
	k := int64(0)
	for ; ; k++ {
		mem := vfs.NewMem()
		trig := vfs.CrashAt(vfs.OpMutating, k)
		var acks []ack
		s, err := Open(crashConfig(vfs.NewErrorFS(mem, trig)))
		if err == nil {
			acks = putWorkload(s, 3, 10)
			s.Close()
		}
		totalAcked += len(acks)
		// Odd k: some unsynced pages reach the disk anyway (torn writes).
		opts := vfs.CrashOptions{}
		if k%2 == 1 {
			opts = vfs.CrashOptions{UnsyncedPagePercent: 50, Rand: rand.New(rand.NewPCG(uint64(k), 7))}
		}
		image := mem.CrashCloneWith(opts)
		s1, err := Open(crashConfig(image))
		if err != nil {
			t.Fatalf("k=%d: reopen after crash: %v", k, err)
		}
		verifyAcked(t, s1, acks)
		checkNoUnitPastEnd(t, s1)
		st1 := captureState(t, s1)
		// A second crash right after recovery; recover again.
		s2, err := Open(crashConfig(image.CrashClone()))
		if err != nil {
			t.Fatalf("k=%d: second recovery: %v", k, err)
		}
		compareStates(t, st1, captureState(t, s2))
		verifyAcked(t, s2, acks)
		s2.Close()
		s1.Close()
		if !trig.Fired() {
			break
		}
	}
	t.Logf("crash points: %d, acknowledged puts verified: %d", k+1, totalAcked)
	if k < 50 {
		t.Fatalf("only %d crash points: the workload did not run", k)
	}
}

// TestFsyncFailureRefusesPuts: once an fsync fails, the store never claims
// success again: the put in flight gets FLUSH_DISK_TIMEOUT (stored, not
// durable), later puts SERVICE_NOT_AVAILABLE; reads of acknowledged data
// still work.
func TestFsyncFailureRefusesPuts(t *testing.T) {
	var failSync atomic.Bool
	efs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if failSync.Load() && op.Kind == vfs.OpSync && strings.Contains(op.Path, "/commitlog/") {
			return vfs.ErrInjected
		}
		return nil
	}))
	cfg := crashConfig(efs)
	s := openStore(t, cfg)
	var acks []ack
	for i := 0; i < 5; i++ {
		res := put(t, s, newRecord("T", 0, bodyFor(i, 200), nil))
		acks = append(acks, ack{"T", 0, i, 200, res.WroteOffset, res.WroteBytes, res.QueueOffset})
	}
	failSync.Store(true)
	res := s.PutMessage(context.Background(), newRecord("T", 0, bodyFor(5, 200), nil), PutOptions{})
	if res.Status == PutOK {
		t.Fatal("put acknowledged although its fsync failed")
	}
	failSync.Store(false)
	for i := 0; i < 5; i++ {
		res := s.PutMessage(context.Background(), newRecord("T", 0, bodyFor(6+i, 200), nil), PutOptions{})
		if res.Status != ServiceNotAvailable {
			t.Fatalf("put after a failed fsync: %s", res.Status)
		}
	}
	if s.RefusalReason() == "" {
		t.Fatal("no refusal reason")
	}
	waitDispatched(t, s)
	verifyAcked(t, s, acks)
	if err := s.Close(); err == nil {
		t.Fatal("Close hid the fsync failure")
	}
}

// TestTornAndTruncatedLastSegment damages the last segment after a clean
// or an unclean stop and reopens. After a crash with no checkpoint past the
// damage it is a torn tail; after a clean stop the damaged records were
// synced, so it is corruption: refused, then opened with the truncate
// action. Either way, once open: the valid prefix survives, the damaged
// tail is cut, no queue unit points past it, and new puts continue the
// queue offsets from there.
func TestTornAndTruncatedLastSegment(t *testing.T) {
	for _, clean := range []bool{true, false} {
		for _, damage := range []string{"torn", "half"} {
			t.Run(fmt.Sprintf("%s/clean=%v", damage, clean), func(t *testing.T) {
				mem := vfs.NewMem()
				cfg := crashConfig(mem)
				cfg.SegmentSize = 16 << 10
				// The checkpoint stays at Open's until a clean Close: after
				// the crash nothing is known durable.
				cfg.CQFlushInterval = time.Hour
				clock := newSteppedClock() // every record its own store time
				cfg.Clock = clock.Now
				s, err := Open(cfg)
				if err != nil {
					t.Fatal(err)
				}
				var acks []ack
				for i := 0; i < 40; i++ {
					clock.Advance(time.Millisecond)
					res := put(t, s, newRecord("T", 0, bodyFor(i, 700), nil))
					acks = append(acks, ack{"T", 0, i, 700, res.WroteOffset, res.WroteBytes, res.QueueOffset})
				}
				waitDispatched(t, s)
				var image *vfs.MemFS
				if clean {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					image = mem
				} else {
					image = mem.CrashClone()
					s.Close()
				}
				last := acks[len(acks)-1]
				segStart := last.offset - last.offset%cfg.SegmentSize
				path := testDir + "/commitlog/" + segment.Name(segStart)
				// A preallocated successor (all zeros) would make the
				// damaged file not the last one; drop it.
				names, _ := image.List(testDir + "/commitlog")
				for _, n := range names {
					if start, err := segment.ParseName(n); err == nil && start > segStart {
						image.Remove(testDir + "/commitlog/" + n)
					}
				}
				f, err := image.OpenReadWrite(path)
				if err != nil {
					t.Fatal(err)
				}
				var cut int64 // records starting at or after cut are damaged
				switch damage {
				case "torn":
					// Garbage in the middle of the last record's body.
					cut = last.offset
					f.WriteAt([]byte("garbage!"), last.offset-segStart+int64(last.wroteBytes)/2)
				case "half":
					// The file loses its second half: cut inside a record.
					half := cfg.SegmentSize / 2
					f.Truncate(half)
					cut = segStart + half
				}
				f.Sync()
				f.Close()
				var want []ack
				for _, a := range acks {
					if a.offset+int64(a.wroteBytes) <= cut {
						want = append(want, a)
					}
				}
				cfg.FS = image
				if clean {
					if _, err := Open(cfg); !errors.As(err, new(*commitlog.CorruptionError)) {
						t.Fatalf("damage after a clean stop: %v, want corruption", err)
					}
					cfg.CommitLogCorruptionAction = commitlog.CorruptionTruncate
				}
				s2 := openStore(t, cfg)
				if s2.CommitLogMaxOffset() > cut {
					t.Fatalf("commitlog end %d past the damage at %d", s2.CommitLogMaxOffset(), cut)
				}
				verifyAcked(t, s2, want)
				checkNoUnitPastEnd(t, s2)
				if got := s2.MaxOffset("T", 0); got != int64(len(want)) {
					t.Fatalf("queue max %d, want %d", got, len(want))
				}
				res := put(t, s2, newRecord("T", 0, []byte("after"), nil))
				if res.QueueOffset != int64(len(want)) {
					t.Fatalf("next queue offset %d, want %d", res.QueueOffset, len(want))
				}
			})
		}
	}
}

// TestAbnormalRecoveryRedispatches: queues that never reached the disk are
// rebuilt from the CommitLog after a crash.
func TestAbnormalRecoveryRedispatches(t *testing.T) {
	mem := vfs.NewMem()
	cfg := crashConfig(mem)
	cfg.CQFlushInterval = time.Hour // queues never flushed before the crash
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	acks := putWorkload(s, 2, 20)
	waitDispatched(t, s)
	image := mem.CrashClone() // units lost, commitlog durable
	s.Close()
	s2 := openStore(t, crashConfig(image))
	if s2.LastExitOK() {
		t.Fatal("abort file not seen")
	}
	verifyAcked(t, s2, acks)
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := image.Stat(testDir + "/" + AbortFile); !errors.Is(err, errNotExistForTest) {
		t.Fatalf("abort file after a clean close: %v", err)
	}
}

// TestAbnormalRecoveryIsBoundedByCheckpoint: with the checkpoint advanced
// by the running store, recovery after a crash starts at a late segment,
// not at the beginning of the log, and still loses nothing.
func TestAbnormalRecoveryIsBoundedByCheckpoint(t *testing.T) {
	mem := vfs.NewMem()
	clock := newSteppedClock()
	cfg := testConfig(mem)
	cfg.Clock = clock.Now
	// Thorough flushes often, so that the checkpoint can reach the last put.
	cfg.FlushThoroughInterval = 50 * time.Millisecond
	cfg.CQFlushThoroughInterval = 50 * time.Millisecond
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var acks []ack
	var lastTs int64
	for i := 0; i < 250; i++ { // ~4 segments of 64 KiB, 25 s of store time
		clock.Advance(100 * time.Millisecond)
		res := put(t, s, newRecord("B", int32(i%4), bodyFor(i, 1000), nil))
		acks = append(acks, ack{"B", int32(i % 4), i, 1000, res.WroteOffset, res.WroteBytes, res.QueueOffset})
		lastTs = res.StoreTimestamp
	}
	// The in-memory checkpoint moves before its file is durable: wait until
	// a crash image holds it (timestamps of the last put, file synced).
	// Both timestamps: the CommitLog flushes on its own schedule, and an
	// image taken before it reached the last put loses the unflushed tail
	// (ASYNC_FLUSH), which this test does not measure.
	var image *vfs.MemFS
	wait.For(t, 10*time.Second, "durable checkpoint", func() bool {
		image = mem.CrashClone()
		data, err := vfs.ReadFile(image, path.Join(cfg.Dir, checkpoint.FileName))
		if err != nil {
			return false
		}
		st, err := checkpoint.Parse(data)
		return err == nil && st.LogicsMsgTimestamp == lastTs && st.PhysicMsgTimestamp == lastTs
	})
	s.Close()

	var logs lockedBuffer
	cfg.FS = image
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s2 := openStore(t, cfg)
	if s2.LastExitOK() {
		t.Fatal("abort file not seen")
	}
	verifyAcked(t, s2, acks)
	m := regexp.MustCompile(`msg="store: abnormal recovery" from=(\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no abnormal recovery from a checkpointed segment in the log:\n%s", logs.String())
	}
	if from, _ := strconv.ParseInt(m[1], 10, 64); from < 2*cfg.SegmentSize {
		t.Fatalf("recovery started at %d: the checkpoint did not bound it", from)
	}
	if strings.Contains(logs.String(), "from the first segment") {
		t.Fatal("recovery scanned from the first segment despite the checkpoint")
	}
	// Finer than the segment: the scan starts at the checkpoint's resume
	// record, the last put (all of it was durable when the image was taken).
	m = regexp.MustCompile(`msg="store: abnormal recovery from the checkpoint's resume record" resumeRecord=(\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no recovery from the resume record in the log:\n%s", logs.String())
	}
	if rec, _ := strconv.ParseInt(m[1], 10, 64); rec != acks[len(acks)-1].offset {
		t.Fatalf("recovery resumed at record %d, want the last put at %d", rec, acks[len(acks)-1].offset)
	}
	// Dispatch resumed after it: each queue holds each message once.
	perQueue := map[int32]int64{}
	for _, a := range acks {
		perQueue[a.queueID]++
	}
	for q, n := range perQueue {
		if got := s2.MaxOffset("B", q); got != n {
			t.Fatalf("queue %d: max offset %d after recovery, want %d", q, got, n)
		}
	}
}

// TestCheckpointAdvancesUnderLoad: while puts never stop (so the CommitLog's
// flushed end always lags the dispatched end), both checkpoint timestamps
// still move forward.
func TestCheckpointAdvancesUnderLoad(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	cfg.SegmentSize = 1 << 20
	cfg.CQFlushThoroughInterval = 30 * time.Millisecond
	cfg.FlushThoroughInterval = 30 * time.Millisecond
	s := openStore(t, cfg)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.PutMessage(context.Background(), newRecord("L", int32(i%4), bodyFor(i, 200), nil), PutOptions{})
		}
	}()
	defer func() { close(stop); <-done }()
	wait.For(t, 10*time.Second, "first checkpoint", func() bool { st := s.Checkpoint(); return st.PhysicMsgTimestamp > 0 && st.LogicsMsgTimestamp > 0 })
	first := s.Checkpoint()
	wait.For(t, 10*time.Second, "checkpoint to advance", func() bool {
		st := s.Checkpoint()
		return st.PhysicMsgTimestamp > first.PhysicMsgTimestamp && st.LogicsMsgTimestamp > first.LogicsMsgTimestamp
	})
}

// TestDispatchRetriesReadFailures: failed CommitLog reads delay dispatch;
// they lose no units and do not stop the store. While dispatch cannot read,
// puts are refused with the reason (what they stored would stay invisible);
// once a read succeeds, puts are accepted again.
func TestDispatchRetriesReadFailures(t *testing.T) {
	var failReads atomic.Int64
	efs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpRead && strings.Contains(op.Path, "/commitlog/") && failReads.Add(-1) >= 0 {
			return vfs.ErrInjected
		}
		return nil
	}))
	cfg := testConfig(efs)
	s := openStore(t, cfg)
	failReads.Store(3)
	stored := 0
	for i := 0; stored < 10; i++ {
		res := s.PutMessage(context.Background(), newRecord("R", 0, bodyFor(i, 100), nil), PutOptions{})
		switch {
		case res.Status == PutOK:
			stored++
		case res.Status != ServiceNotAvailable:
			t.Fatalf("put: %s", res.Status)
		default:
			wait.For(t, 10*time.Second, "dispatch to resume", func() bool { return s.RefusalReason() == "" })
		}
	}
	waitDispatched(t, s)
	if s.MaxOffset("R", 0) != 10 || s.RefusalReason() != "" {
		t.Fatalf("after transient failures: max %d, refusal %q", s.MaxOffset("R", 0), s.RefusalReason())
	}
	failReads.Store(1 << 40)
	put(t, s, newRecord("R", 0, []byte("stuck"), nil))
	wait.For(t, 10*time.Second, "dispatch to block", func() bool { return strings.Contains(s.RefusalReason(), "dispatch blocked") })
	if res := s.PutMessage(context.Background(), newRecord("R", 0, []byte("x"), nil), PutOptions{}); res.Status != ServiceNotAvailable {
		t.Fatalf("put while dispatch is blocked: %s", res.Status)
	}
	failReads.Store(0)
	wait.For(t, 10*time.Second, "dispatch to resume", func() bool { return s.RefusalReason() == "" })
	waitDispatched(t, s)
	if s.MaxOffset("R", 0) != 11 {
		t.Fatalf("max %d after resuming, want 11", s.MaxOffset("R", 0))
	}
	put(t, s, newRecord("R", 0, []byte("after"), nil))
}

// TestResumeRecordFallsBack: a checkpoint whose resume record does not
// name a record of the log (a log changed behind its back) is not
// trusted: recovery scans from the checkpoint's segment and loses nothing.
func TestResumeRecordFallsBack(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s := openStore(t, cfg)
	var acks []ack
	for i := 0; i < 40; i++ {
		res := put(t, s, newRecord("R", int32(i%2), bodyFor(i, 300), nil))
		acks = append(acks, ack{"R", int32(i % 2), i, 300, res.WroteOffset, res.WroteBytes, res.QueueOffset})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ckptPath := path.Join(cfg.Dir, checkpoint.FileName)
	data, err := vfs.ReadFile(mem, ckptPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := checkpoint.Parse(data)
	if err != nil || !st.HasResume || st.ResumeRecord != acks[len(acks)-1].offset {
		t.Fatalf("clean close: checkpoint %+v %v, want the resume record at the last put %d", st, err, acks[len(acks)-1].offset)
	}
	// A crash image whose resume record points into the middle of a record.
	s = openStore(t, cfg)
	image := mem.CrashClone()
	s.Close()
	st.ResumeRecord = acks[len(acks)-2].offset + 7
	if err := vfs.WriteFileAtomic(image, ckptPath, st.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	cfg.FS = image
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s2 := openStore(t, cfg)
	if s2.LastExitOK() {
		t.Fatal("abort file not seen")
	}
	if !strings.Contains(logs.String(), "resume record not found") {
		t.Fatalf("the bad resume record was not noticed:\n%s", logs.String())
	}
	verifyAcked(t, s2, acks)
	if got := s2.MaxOffset("R", 0) + s2.MaxOffset("R", 1); got != int64(len(acks)) {
		t.Fatalf("%d units after recovery, want %d", got, len(acks))
	}
}

// TestResumeRecordAdvancesUnderLoad: while puts never stop and queue flushes
// are partial (leastPages), some queue always holds unsynced units, so the
// logics time waits for the next thorough flush (an hour here); the resume
// record still moves, bounded by each queue's first unsynced unit, and a
// crash then recovers from it with every acknowledged put.
func TestResumeRecordAdvancesUnderLoad(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.SegmentSize = 1 << 20
	cfg.FlushSync = true // every acknowledged put is in the CommitLog's image
	cfg.CQFlushInterval = 5 * time.Millisecond
	cfg.CQFlushThoroughInterval = time.Hour
	cfg.CQFlushLeastPages = 1
	s := openStore(t, cfg)
	var mu sync.Mutex
	var acks []ack
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Queue 3 gets a put now and then: it stays below a page.
			q := int32(i % 3)
			if i%500 == 0 {
				q = 3
			}
			res := s.PutMessage(context.Background(), newRecord("U", q, bodyFor(i, 100), nil), PutOptions{})
			if res.Status != PutOK {
				continue
			}
			mu.Lock()
			acks = append(acks, ack{"U", q, i, 100, res.WroteOffset, res.WroteBytes, res.QueueOffset})
			mu.Unlock()
		}
	}()
	var first int64
	wait.For(t, 10*time.Second, "a first resume record", func() bool {
		st := s.Checkpoint()
		first = st.ResumeRecord
		return st.HasResume && first > 0
	})
	wait.For(t, 10*time.Second, "the resume record to advance", func() bool { return s.Checkpoint().ResumeRecord > first })
	var image *vfs.MemFS
	var acked []ack
	wait.For(t, 10*time.Second, "a durable checkpoint with a resume record past the first", func() bool {
		// What was acknowledged before the image: it must all be there.
		mu.Lock()
		acked = slices.Clone(acks)
		mu.Unlock()
		image = mem.CrashClone()
		data, err := vfs.ReadFile(image, path.Join(cfg.Dir, checkpoint.FileName))
		if err != nil {
			return false
		}
		st, err := checkpoint.Parse(data)
		return err == nil && st.HasResume && st.ResumeRecord > first
	})
	close(stop)
	<-done
	s.Close()
	var logs lockedBuffer
	cfg.FS = image
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s2 := openStore(t, cfg)
	if !strings.Contains(logs.String(), "from the checkpoint's resume record") {
		t.Fatalf("recovery did not start at the resume record:\n%s", logs.String())
	}
	verifyAcked(t, s2, acked)
}
