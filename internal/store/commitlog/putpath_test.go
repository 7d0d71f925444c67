package commitlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

func TestQueueTableManyQueuesAndRemoval(t *testing.T) {
	l := openLog(t, testConfig(vfs.NewMem(), false))
	defer l.Close()
	put := func(topic string, qid int32) int64 {
		t.Helper()
		res := l.Put(context.Background(), newRecord(topic, qid, []byte("x"), ""), PutOptions{})
		if res.Status != PutOK {
			t.Fatal(res.Status)
		}
		return res.QueueOffset
	}
	// Queues created one after another, interleaved with puts to the older
	// ones: cells move from the dirty map to the read map along the way.
	const queues = 50
	for q := 0; q < queues; q++ {
		for i := 0; i <= q; i++ {
			topic := fmt.Sprintf("T%d", i%7)
			if got, want := put(topic, int32(i)), int64(q-i); got != want {
				t.Fatalf("round %d: %s/%d at %d, want %d", q, topic, i, got, want)
			}
		}
	}
	for i := 0; i < queues; i++ {
		if got := l.QueueOffset(fmt.Sprintf("T%d", i%7), int32(i)); got != int64(queues-i) {
			t.Fatalf("queue %d: next %d, want %d", i, got, queues-i)
		}
	}
	// A removed topic starts over; a put holding a cell looked up before
	// the removal must not advance the forgotten cell.
	key := queueKey{"T0", 0}
	stale := l.queues.lookup(key)
	l.RemoveQueueOffsets("T0")
	if stale == nil || !stale.removed {
		t.Fatal("removed cell not marked")
	}
	if got := put("T0", 0); got != 0 {
		t.Fatalf("after removal: %d", got)
	}
	l.mu.Lock()
	c := l.queues.cellLocked(key, stale)
	l.mu.Unlock()
	if c == stale || c.next != 1 {
		t.Fatalf("stale cell reused (next %d)", c.next)
	}
	if got := l.QueueOffset("T1", 1); got != queues-1 {
		t.Fatalf("other topic after removal: %d", got)
	}
	// SetQueueOffset creates and sets.
	l.SetQueueOffset("New", 3, 42)
	if got := put("New", 3); got != 42 {
		t.Fatalf("after SetQueueOffset: %d", got)
	}
}

func TestPutClockFollowsWallClock(t *testing.T) {
	c := newPutClock(time.Now, true)
	before := time.Now().UnixMilli()
	r := c.read()
	after := time.Now().UnixMilli()
	if r.ms < before || r.ms > after || r.mono < 1 {
		t.Fatalf("reading %d ms not in [%d, %d] (mono %d)", r.ms, before, after, r.mono)
	}
	// An anchor older than reanchorEvery is replaced: a wall-clock step
	// (here: an anchor claiming 1970) shows within that time.
	c.anchor.Store(&clockAnchor{mono: r.mono - int64(2*reanchorEvery), wallNs: 0})
	before = time.Now().UnixMilli()
	r2 := c.read()
	after = time.Now().UnixMilli()
	if r2.ms < before || r2.ms > after || r2.mono < r.mono {
		t.Fatalf("after re-anchoring: %d ms not in [%d, %d]", r2.ms, before, after)
	}
	// An injected clock is used as is.
	fixed := newPutClock(func() time.Time { return time.UnixMilli(1234) }, false)
	if got := fixed.read().ms; got != 1234 {
		t.Fatalf("injected clock: %d", got)
	}
}

func TestNotBusyAfterRelease(t *testing.T) {
	// lockedSince outlives the unlock: an old value with the lock free is
	// not busy.
	cfg := testConfig(vfs.NewMem(), false)
	cfg.OSPageCacheBusyTimeout = 20 * time.Millisecond
	l := openLog(t, cfg)
	defer l.Close()
	l.lock()
	l.unlock()
	if l.busyAt(l.lockedSince.Load() + 2*int64(cfg.OSPageCacheBusyTimeout)) {
		t.Fatal("busy with the lock free")
	}
	if st := l.Put(context.Background(), newRecord("T", 0, nil, ""), PutOptions{}).Status; st != PutOK {
		t.Fatalf("put after an idle period: %v", st)
	}
}

// slowWrites delays every file write, so that puts outrun the committer.
func slowWrites(d time.Duration) vfs.Injector {
	return vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpWrite {
			time.Sleep(d)
		}
		return nil
	})
}

func TestPutWithRingFull(t *testing.T) {
	// Slow writes: puts outrun the committer, fill the ring and commit
	// inline (back-pressure); every record still lands whole and in order.
	cfg := testConfig(vfs.NewErrorFS(vfs.NewMem(), slowWrites(2*time.Millisecond)), false)
	cfg.MaxMessageSize = 4 << 10
	cfg.RingSize = 1           // raised to the minimum: 2 x (4 KiB + 64 KiB)
	cfg.SegmentSize = 16 << 20 // a roll commits the ring inline: rare here
	l := openLog(t, cfg)
	defer l.Close()
	if len(l.ring) >= 1<<20 {
		t.Fatalf("ring %d bytes: too large for the test", len(l.ring))
	}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	offs := make([][]int64, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := bytes.Repeat([]byte{byte(w)}, 3000+i)
				res := l.Put(context.Background(), newRecord("Full", int32(w), body, ""), PutOptions{})
				if res.Status != PutOK {
					errs <- fmt.Errorf("writer %d put %d: %v", w, i, res.Status)
					return
				}
				offs[w] = append(offs[w], res.WroteOffset)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "l.Committed() == l.MaxOffset()", func() bool { return l.Committed() == l.MaxOffset() })
	if total := l.MaxOffset(); total < 4*int64(len(l.ring)) {
		t.Fatalf("wrote %d bytes: the ring (%d) never filled", total, len(l.ring))
	}
	for w := range writers {
		for i, off := range offs[w] {
			rec, buf, err := l.ReadRecordAt(off)
			if err != nil {
				t.Fatal(err)
			}
			if rec.QueueID != int32(w) || rec.QueueOffset != int64(i) || len(rec.Body) != 3000+i || rec.Body[0] != byte(w) {
				t.Fatalf("writer %d record %d: queue %d offset %d body %d", w, i, rec.QueueID, rec.QueueOffset, len(rec.Body))
			}
			buf.Release()
		}
	}
}

func TestRingFullPutReturnsOnWriteFailure(t *testing.T) {
	// Writes fail while puts keep the ring full: every writer is refused
	// (SERVICE_NOT_AVAILABLE) instead of waiting for space.
	var fail atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind != vfs.OpWrite {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
		if fail.Load() && strings.Contains(op.Path, "commitlog") {
			return errors.New("EIO")
		}
		return nil
	})
	cfg := testConfig(vfs.NewErrorFS(vfs.NewMem(), inj), false)
	cfg.MaxMessageSize = 4 << 10
	cfg.RingSize = 1
	cfg.SegmentSize = 16 << 20
	l := openLog(t, cfg)
	const writers = 4
	var wg sync.WaitGroup
	var refused atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				if i == 100 && w == 0 {
					fail.Store(true)
				}
				st := l.Put(context.Background(), newRecord("Fail", int32(w), make([]byte, 4000), ""), PutOptions{}).Status
				if st != PutOK {
					refused.Add(1)
					if st != ServiceNotAvailable {
						t.Errorf("status %v", st)
					}
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("puts still waiting after the committer failed")
	}
	if refused.Load() != writers {
		t.Fatalf("%d of %d writers refused", refused.Load(), writers)
	}
	if err := l.Close(); err == nil {
		t.Fatal("Close after a failed write returned nil")
	}
}
