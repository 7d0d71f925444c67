package commitlog

import (
	"context"
	"fmt"
	"testing"
	"time"

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
	time.Sleep(30 * time.Millisecond)
	if l.Busy() {
		t.Fatal("busy with the lock free")
	}
	if st := l.Put(context.Background(), newRecord("T", 0, nil, ""), PutOptions{}).Status; st != PutOK {
		t.Fatalf("put after an idle period: %v", st)
	}
}
