package commitlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// blindDisk is a small sparse disk whose statfs can be made to fail, so
// that the space guard keeps its last (good) view while the disk fills
// behind its back: writes then meet ENOSPC, the case the guard exists to
// avoid and the rollback to survive.
type blindDisk struct {
	*vfs.SparseFS
	blind atomic.Bool
	// enospc fails every write with ENOSPC: a zero-filled (SYNC_FLUSH)
	// segment has its blocks already, so only another kind of file system
	// (copy-on-write, thin-provisioned) fails there.
	enospc atomic.Bool
	// slow delays writes so that puts pile up in the ring and a write
	// carries several records (a short write then cuts whole ones off).
	slow atomic.Bool
}

func newBlindDisk() (*blindDisk, vfs.FS) {
	d := &blindDisk{SparseFS: vfs.NewSparse(vfs.NewMem(), 0)}
	return d, vfs.NewErrorFS(d.SparseFS, vfs.InjectorFunc(func(op vfs.Op) error {
		switch {
		case op.Kind == vfs.OpDiskUsage && d.blind.Load():
			return errors.New("statfs unavailable")
		case op.Kind == vfs.OpWrite && d.enospc.Load():
			return syscall.ENOSPC
		case op.Kind == vfs.OpWrite && d.slow.Load():
			time.Sleep(time.Millisecond)
		}
		return nil
	}))
}

type ackedPut struct {
	queue       int32
	queueOffset int64
	offset      int64
	body        string
}

// putAll runs writers goroutines putting each records until stop is
// closed or each puts are done, and returns the acknowledged ones; every
// answer must be PUT_OK or SERVICE_NOT_AVAILABLE.
func putAll(t *testing.T, l *Log, writers, each int, tag string) []ackedPut {
	t.Helper()
	var mu sync.Mutex
	var acked []ackedPut
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := fmt.Sprintf("%s-%d-%d-%s", tag, w, i, strings.Repeat("x", 200+(i*37)%900))
				res := l.Put(context.Background(), newRecord("Full", int32(w%4), []byte(body), "KEYS\x01k"), PutOptions{})
				switch res.Status {
				case PutOK:
					mu.Lock()
					acked = append(acked, ackedPut{int32(w % 4), res.QueueOffset, res.WroteOffset, body})
					mu.Unlock()
				case ServiceNotAvailable:
				default:
					t.Errorf("put: %v (want PUT_OK or SERVICE_NOT_AVAILABLE)", res.Status)
				}
			}
		}()
	}
	wg.Wait()
	return acked
}

// checkLog reads the whole log from its first segment and checks that it
// holds exactly the acknowledged records: each at its offset with its
// queue offset and body, queue offsets contiguous from 0, nothing else.
func checkLog(t *testing.T, l *Log, acked []ackedPut) {
	t.Helper()
	byOffset := map[int64]ackedPut{}
	perQueue := map[int32][]int64{}
	for _, a := range acked {
		if _, dup := byOffset[a.offset]; dup {
			t.Fatalf("offset %d acknowledged twice", a.offset)
		}
		byOffset[a.offset] = a
		perQueue[a.queue] = append(perQueue[a.queue], a.queueOffset)
	}
	for q, offs := range perQueue {
		slices.Sort(offs)
		for i, o := range offs {
			if o != int64(i) {
				t.Fatalf("queue %d: acknowledged queue offsets %v... not contiguous from 0 (hole or reuse at %d)", q, offs[:min(len(offs), 10)], i)
			}
		}
		if next := l.QueueOffset("Full", q); next != int64(len(offs)) {
			t.Fatalf("queue %d: next offset %d, %d acknowledged", q, next, len(offs))
		}
	}
	found := 0
	for off := l.MinOffset(); off < l.Committed(); {
		rec, buf, err := l.ReadRecordAt(off)
		if errors.Is(err, message.ErrBlank) {
			off += l.SegmentSize() - off%l.SegmentSize()
			continue
		}
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		a, ok := byOffset[off]
		if !ok {
			t.Fatalf("record at %d (%q...) was never acknowledged", off, rec.Body[:min(len(rec.Body), 20)])
		}
		if string(rec.Body) != a.body || rec.QueueID != a.queue || rec.QueueOffset != a.queueOffset {
			t.Fatalf("record at %d: queue %d/%d body %q..., acknowledged as %d/%d %q...",
				off, rec.QueueID, rec.QueueOffset, rec.Body[:20], a.queue, a.queueOffset, a.body[:20])
		}
		found++
		off += int64(message.RecordTotalSize(buf.Bytes))
		buf.Release()
	}
	if found != len(acked) {
		t.Fatalf("log holds %d of %d acknowledged records", found, len(acked))
	}
}

// TestWriteFailureNeverAcknowledged: the disk fills under writers while
// the guard cannot see it; the committer's write fails with ENOSPC (short
// writes included). No put that was not written is answered PUT_OK, the
// log's end and the queue offsets roll back (acknowledged offsets stay
// contiguous, none reused), puts are refused while the disk is full and
// resume by themselves once space is back, and a reopened log holds
// exactly the acknowledged records (the partial write was zeroed).
func TestWriteFailureNeverAcknowledged(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			disk, fs := newBlindDisk()
			cfg := testConfig(fs, sync)
			cfg.SegmentSize = 4 << 20
			l := openLog(t, cfg)

			acked := putAll(t, l, 8, 50, "before")
			if len(acked) != 400 {
				t.Fatalf("%d of 400 acknowledged before the disk filled", len(acked))
			}
			// The disk fills behind the guard's back: a few more KiB fit.
			disk.blind.Store(true)
			if sync {
				disk.enospc.Store(true)
			} else {
				disk.SetCapacity(disk.Used() + 10<<10 + 1234)
			}
			acked = append(acked, putAll(t, l, 8, 100, "full")...)
			if st := l.DiskStatus(); !st.Full || !strings.Contains(st.Reason, "disk full") {
				t.Fatalf("after ENOSPC: %+v", st)
			}
			if st := l.Put(context.Background(), newRecord("Full", 0, []byte("refused"), ""), PutOptions{}).Status; st != ServiceNotAvailable {
				t.Fatalf("put on a full disk: %v", st)
			}
			if l.Err() != nil {
				t.Fatalf("a full disk made the log sticky-failed: %v", l.Err())
			}
			if l.MaxOffset() != l.Committed() {
				t.Fatalf("end %d not rolled back to the committed %d", l.MaxOffset(), l.Committed())
			}
			checkLog(t, l, acked)

			// Space comes back: puts resume by themselves.
			disk.blind.Store(false)
			disk.enospc.Store(false)
			disk.SetCapacity(0)
			wait.For(t, 10*time.Second, "!l.DiskStatus().Full", func() bool { return !l.DiskStatus().Full })
			acked = append(acked, putAll(t, l, 8, 20, "after")...)
			checkLog(t, l, acked)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// Reopened: exactly the acknowledged records.
			l = reopenLog(t, cfg)
			checkLog(t, l, acked)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}

			// Again, reopening right after the failure: the bytes the failed
			// write left behind the end must not come back as records.
			l = reopenLog(t, cfg)
			disk.blind.Store(true)
			disk.slow.Store(true)
			if sync {
				disk.enospc.Store(true)
			} else {
				disk.SetCapacity(disk.Used() + 20<<10 + 4321)
			}
			acked = append(acked, putAll(t, l, 8, 100, "full2")...)
			if !l.DiskStatus().Full {
				t.Fatal("the disk did not fill")
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			disk.blind.Store(false)
			disk.enospc.Store(false)
			disk.slow.Store(false)
			disk.SetCapacity(0)
			l = reopenLog(t, cfg)
			defer l.Close()
			checkLog(t, l, acked)
		})
	}
}

// reopenLog opens and recovers the log of cfg, rebuilding the queue
// offsets of topic Full from the recovered records, and starts it.
func reopenLog(t *testing.T, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	next := map[int32]int64{}
	if _, err := l.Recover(0, func(rec *message.Record, _ int64, _ int32) error {
		next[rec.QueueID] = rec.QueueOffset + 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for q, n := range next {
		l.SetQueueOffset("Full", q, n)
	}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSpaceGuardRefusesBeforeTheDiskFills: with the disk visible, the
// guard refuses puts above DiskFullPercent before any write fails, with a
// reason that says the disk is full, and accepts them again at or below
// DiskResumePercent.
func TestSpaceGuardRefusesBeforeTheDiskFills(t *testing.T) {
	disk := vfs.NewSparse(vfs.NewMem(), 0)
	cfg := testConfig(disk, false)
	cfg.DiskFullPercent, cfg.DiskResumePercent = 90, 85
	l := openLog(t, cfg)
	defer l.Close()
	putAll(t, l, 1, 20, "x")
	used := disk.Used()
	disk.SetCapacity(used * 100 / 95) // 95 % used
	wait.For(t, 10*time.Second, "l.DiskStatus().Full", func() bool { return l.DiskStatus().Full })
	st := l.DiskStatus()
	if !strings.Contains(st.Reason, "disk full") || !strings.Contains(st.Reason, "90%") {
		t.Fatalf("reason %q", st.Reason)
	}
	if res := l.Put(context.Background(), newRecord("Full", 0, []byte("no"), ""), PutOptions{}); res.Status != ServiceNotAvailable {
		t.Fatalf("put above the limit: %v", res.Status)
	}
	disk.SetCapacity(used * 100 / 80) // 80 %: back below the resume level
	wait.For(t, 10*time.Second, "!l.DiskStatus().Full", func() bool { return !l.DiskStatus().Full })
	if res := l.Put(context.Background(), newRecord("Full", 0, []byte("yes"), ""), PutOptions{}); res.Status != PutOK {
		t.Fatalf("put after space came back: %v", res.Status)
	}
}
