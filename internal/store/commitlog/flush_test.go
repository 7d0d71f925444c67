package commitlog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// syncProbe is an injector watching Syncs of segment files (not of
// preallocations, which are "<name>.tmp" when synced): it counts them, can
// block them on a gate and can fail them.
type syncProbe struct {
	syncs atomic.Int64
	fail  atomic.Bool
	mu    sync.Mutex
	gate  chan struct{} // when non-nil, segment syncs wait for it to close
}

func (p *syncProbe) MaybeError(op vfs.Op) error {
	if op.Kind != vfs.OpSync || strings.HasSuffix(op.Path, ".tmp") {
		return nil
	}
	p.syncs.Add(1)
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if p.fail.Load() {
		return errors.New("disk on fire")
	}
	return nil
}

func (p *syncProbe) setGate(g chan struct{}) {
	p.mu.Lock()
	p.gate = g
	p.mu.Unlock()
}

func (l *Log) waiterCount() int {
	l.waiters.Lock()
	defer l.waiters.Unlock()
	return len(l.waiters.list)
}

func TestGroupCommitOneSyncForManyWaiters(t *testing.T) {
	probe := &syncProbe{}
	l := openLog(t, testConfig(vfs.NewErrorFS(vfs.NewMem(), probe), true))
	defer l.Close()
	gate := make(chan struct{})
	probe.setGate(gate)

	const writers = 64
	statuses := make(chan PutStatus, writers)
	put := func(i int) {
		statuses <- l.Put(context.Background(), newRecord("T", 0, []byte(fmt.Sprint(i)), ""), PutOptions{}).Status
	}
	go put(0)
	wait.For(t, 10*time.Second, "probe.syncs.Load() == 1", func() bool { return probe.syncs.Load() == 1 }) // the first flush is stuck in Sync
	for i := 1; i < writers; i++ {
		go put(i)
	}
	wait.For(t, 10*time.Second, "l.waiterCount() == writers", func() bool { return l.waiterCount() == writers })
	probe.setGate(nil)
	close(gate)
	for i := 0; i < writers; i++ {
		if st := <-statuses; st != PutOK {
			t.Fatalf("status %v", st)
		}
	}
	// One sync for the first put, one for the 63 that queued behind it.
	if n := probe.syncs.Load(); n != 2 {
		t.Fatalf("%d syncs for %d puts, want 2", n, writers)
	}
	if l.Flushed() != l.MaxOffset() {
		t.Fatalf("flushed %d, max %d", l.Flushed(), l.MaxOffset())
	}
}

func TestSyncFlushTimeout(t *testing.T) {
	probe := &syncProbe{}
	cfg := testConfig(vfs.NewErrorFS(vfs.NewMem(), probe), true)
	cfg.SyncFlushTimeout = 50 * time.Millisecond
	l := openLog(t, cfg)
	gate := make(chan struct{})
	probe.setGate(gate)
	res := l.Put(context.Background(), newRecord("T", 0, []byte("slow"), ""), PutOptions{})
	if res.Status != FlushDiskTimeout {
		t.Fatalf("status %v", res.Status)
	}
	// The message is stored: readable once committed.
	rec, buf, err := l.ReadRecordAt(res.WroteOffset)
	if err != nil || string(rec.Body) != "slow" {
		t.Fatalf("read: %v", err)
	}
	buf.Release()
	// A NoWait put does not wait at all.
	if st := l.Put(context.Background(), newRecord("T", 0, nil, ""), PutOptions{NoWait: true}).Status; st != PutOK {
		t.Fatalf("no-wait put: %v", st)
	}
	// A cancelled context ends the wait too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if st := l.Put(ctx, newRecord("T", 0, nil, ""), PutOptions{}).Status; st != FlushDiskTimeout {
		t.Fatalf("cancelled put: %v", st)
	}
	probe.setGate(nil)
	close(gate)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSyncFailureRefusesPuts(t *testing.T) {
	for _, syncMode := range []bool{true, false} {
		t.Run(fmt.Sprintf("sync=%v", syncMode), func(t *testing.T) {
			probe := &syncProbe{}
			mem := vfs.NewMem()
			cfg := testConfig(vfs.NewErrorFS(mem, probe), syncMode)
			cfg.FlushInterval = 5 * time.Millisecond
			cfg.FlushThoroughInterval = 5 * time.Millisecond
			l := openLog(t, cfg)
			ok := l.Put(context.Background(), newRecord("T", 0, []byte("durable"), ""), PutOptions{})
			if ok.Status != PutOK {
				t.Fatal(ok.Status)
			}
			if !syncMode {
				wait.For(t, 10*time.Second, "l.Flushed() == l.MaxOffset()", func() bool { return l.Flushed() == l.MaxOffset() })
			}
			probe.fail.Store(true)
			st := l.Put(context.Background(), newRecord("T", 0, []byte("lost"), ""), PutOptions{}).Status
			if syncMode && st != FlushDiskTimeout {
				t.Fatalf("put during failing sync: %v", st)
			}
			wait.For(t, 10*time.Second, "l.Err() != nil", func() bool { return l.Err() != nil })
			probe.fail.Store(false) // the disk "recovers": the log must stay failed
			for i := 0; i < 3; i++ {
				if st := l.Put(context.Background(), newRecord("T", 0, nil, ""), PutOptions{}).Status; st != ServiceNotAvailable {
					t.Fatalf("put after sync failure: %v", st)
				}
			}
			if err := l.Close(); err == nil {
				t.Fatal("Close hid the sync failure")
			}
			// What was acknowledged survives a crash.
			img := mem.CrashClone()
			l2, err := Open(testConfig(img, syncMode))
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			if _, err := l2.Recover(NormalRecovery, nil); err != nil {
				t.Fatal(err)
			}
			rec, buf, err := l2.ReadRecordAt(ok.WroteOffset)
			if err != nil || string(rec.Body) != "durable" {
				t.Fatalf("acknowledged record lost: %v", err)
			}
			buf.Release()
		})
	}
}

func TestNeverPutOKAfterFailedSync(t *testing.T) {
	// Many writers; the 6th segment sync fails. Every PUT_OK must be
	// durable (present after a crash), whatever the interleaving.
	probe := &failNthSync{n: 5}
	mem := vfs.NewMem()
	l := openLog(t, testConfig(vfs.NewErrorFS(mem, probe), true))
	var mu sync.Mutex
	var acked []PutResult
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				res := l.Put(context.Background(), newRecord("T", 0, []byte(fmt.Sprintf("w%d-%d", w, i)), ""), PutOptions{})
				if res.Status == PutOK {
					mu.Lock()
					acked = append(acked, res)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	_ = l.Close()
	if l.Err() == nil {
		t.Fatal("sync failure not seen")
	}
	l2, err := Open(testConfig(mem.CrashClone(), true))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	end, err := l2.Recover(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acked {
		if a.WroteOffset+int64(a.WroteBytes) > end {
			t.Fatalf("PUT_OK record at %d is past the recovered end %d", a.WroteOffset, end)
		}
		if _, buf, err := l2.ReadRecordAt(a.WroteOffset); err != nil {
			t.Fatalf("PUT_OK record at %d unreadable: %v", a.WroteOffset, err)
		} else {
			buf.Release()
		}
	}
}

type failNthSync struct {
	n     int64
	count atomic.Int64
}

func (f *failNthSync) MaybeError(op vfs.Op) error {
	if op.Kind != vfs.OpSync || strings.HasSuffix(op.Path, ".tmp") {
		return nil
	}
	if f.count.Add(1)-1 == f.n {
		return errors.New("injected sync failure")
	}
	return nil
}

func TestAsyncFlushPersistsOnClose(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem, false)
	cfg.FlushInterval = time.Hour
	cfg.FlushThoroughInterval = time.Hour
	l := openLog(t, cfg)
	var want []PutResult
	for i := 0; i < 300; i++ {
		res := l.Put(context.Background(), newRecord("T", 0, make([]byte, 500), ""), PutOptions{NoWait: true})
		if res.Status != PutOK {
			t.Fatal(res.Status)
		}
		want = append(want, res)
	}
	end := l.MaxOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l.Flushed() != end {
		t.Fatalf("flushed %d, end %d", l.Flushed(), end)
	}
	img := mem.CrashClone()
	l2, err := Open(testConfig(img, false))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	got, err := l2.Recover(0, func(rec *message.Record, off int64, size int32) error {
		if off != want[n].WroteOffset {
			return fmt.Errorf("record %d at %d", n, off)
		}
		n++
		return nil
	})
	if err != nil || got != end || n != len(want) {
		t.Fatalf("after crash: end %d want %d, %d records: %v", got, end, n, err)
	}
	_ = l2.Close()
}

// TestAsyncFlushRound drives the periodic flusher's rounds itself (the
// loop's interval is an hour): fewer than FlushLeastPages dirty pages wait
// for a thorough round, more are flushed by any round.
func TestAsyncFlushRound(t *testing.T) {
	cfg := testConfig(vfs.NewMem(), false)
	cfg.FlushInterval = time.Hour
	cfg.FlushLeastPages = 4
	l := openLog(t, cfg)
	defer l.Close()
	committed := func() {
		t.Helper()
		wait.For(t, 10*time.Second, "the committer to write every put", func() bool { return l.Committed() == l.MaxOffset() })
	}
	l.Put(context.Background(), newRecord("T", 0, make([]byte, 100), ""), PutOptions{})
	committed()
	l.asyncFlushRound(false)
	if l.Flushed() != 0 {
		t.Fatalf("flushed %d with < 4 dirty pages", l.Flushed())
	}
	l.asyncFlushRound(true)
	if l.Flushed() != l.MaxOffset() {
		t.Fatalf("thorough round flushed %d of %d", l.Flushed(), l.MaxOffset())
	}
	for l.MaxOffset() < l.Flushed()+5*4096 {
		l.Put(context.Background(), newRecord("T", 0, make([]byte, 1000), ""), PutOptions{})
	}
	committed()
	l.asyncFlushRound(false)
	if l.Flushed() != l.MaxOffset() {
		t.Fatalf("round with 5 dirty pages flushed %d of %d", l.Flushed(), l.MaxOffset())
	}
}

// TestAsyncFlushPeriodic: the loop runs the rounds on its interval.
func TestAsyncFlushPeriodic(t *testing.T) {
	probe := &syncProbe{}
	cfg := testConfig(vfs.NewErrorFS(vfs.NewMem(), probe), false)
	cfg.FlushInterval = 5 * time.Millisecond
	cfg.FlushThoroughInterval = time.Hour
	cfg.FlushLeastPages = 4
	l := openLog(t, cfg)
	defer l.Close()
	for l.MaxOffset() < 5*4096 {
		l.Put(context.Background(), newRecord("T", 0, make([]byte, 1000), ""), PutOptions{})
	}
	wait.For(t, 10*time.Second, "l.Flushed() >= 4*4096", func() bool { return l.Flushed() >= 4*4096 })
}

// TestGroupCommitStats checks the flusher's counters on the shape of
// TestGroupCommitOneSyncForManyWaiters: one put whose sync is held, 63
// that queue behind it, then two rounds.
func TestGroupCommitStats(t *testing.T) {
	probe := &syncProbe{}
	l := openLog(t, testConfig(vfs.NewErrorFS(vfs.NewMem(), probe), true))
	defer l.Close()
	gate := make(chan struct{})
	probe.setGate(gate)

	const writers = 64
	statuses := make(chan PutStatus, writers)
	put := func(i int) {
		statuses <- l.Put(context.Background(), newRecord("T", 0, []byte(fmt.Sprint(i)), ""), PutOptions{}).Status
	}
	go put(0)
	wait.For(t, 10*time.Second, "the first flush held in Sync", func() bool { return probe.syncs.Load() == 1 })
	for i := 1; i < writers; i++ {
		go put(i)
	}
	wait.For(t, 10*time.Second, "every put waiting", func() bool { return l.waiterCount() == writers })
	probe.setGate(nil)
	close(gate)
	for i := 0; i < writers; i++ {
		if st := <-statuses; st != PutOK {
			t.Fatalf("status %v", st)
		}
	}
	s := l.GroupCommitStats()
	if s.Syncs != 2 || s.Waiters != writers {
		t.Fatalf("%+v: want 2 syncs answering %d puts", s, writers)
	}
	// The 63 waited behind the held round, then for their own. Whether
	// the first round began idle depends on whether the flusher was
	// already waiting when the first put came: not asserted.
	if s.Behind <= 0 || s.Own <= 0 || s.SyncTime <= 0 || s.IdleStarts > s.Syncs {
		t.Fatalf("%+v", s)
	}

	async := openLog(t, testConfig(vfs.NewMem(), false))
	defer async.Close()
	if st := async.Put(context.Background(), newRecord("T", 0, []byte("a"), ""), PutOptions{}).Status; st != PutOK {
		t.Fatal(st)
	}
	if s := async.GroupCommitStats(); s != (GroupCommitStats{}) {
		t.Fatalf("ASYNC_FLUSH: %+v, want zero", s)
	}
}
