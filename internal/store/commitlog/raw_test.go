package commitlog

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

func TestReplicateRaw(t *testing.T) {
	master := openLog(t, testConfig(vfs.NewMem(), false))
	defer master.Close()
	for i := 0; i < 100; i++ {
		putBody(t, master, 1500+i*7, byte(i))
	}
	wait.For(t, 10*time.Second, "master.Committed() == master.MaxOffset()", func() bool { return master.Committed() == master.MaxOffset() })

	slaveFS := vfs.NewMem()
	slave := openLog(t, testConfig(slaveFS, true))
	var off int64
	for off < master.Committed() {
		buf, err := master.ReadRaw(off, 5000) // chunks that end mid-record
		if err != nil {
			t.Fatal(err)
		}
		if err := slave.AppendRaw(off, buf.Bytes); err != nil {
			t.Fatal(err)
		}
		off += int64(len(buf.Bytes))
		buf.Release()
	}
	if empty, err := master.ReadRaw(off, 100); err != nil || len(empty.Bytes) != 0 {
		t.Fatalf("read at the end: %d bytes, %v", len(empty.Bytes), err)
	}
	if err := slave.AppendRaw(off+1, []byte{1}); !errors.Is(err, ErrOffsetMismatch) {
		t.Fatalf("append at a gap: %v", err)
	}
	if slave.MaxOffset() != master.MaxOffset() {
		t.Fatalf("slave max %d, master %d", slave.MaxOffset(), master.MaxOffset())
	}
	if err := slave.Close(); err != nil {
		t.Fatal(err)
	}
	// The slave's files recover to the same records.
	l, err := Open(testConfig(slaveFS, true))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := 0
	end, err := l.Recover(0, func(rec *message.Record, off int64, size int32) error {
		mrec, buf, err := master.ReadRecordAt(off)
		if err != nil {
			return err
		}
		defer buf.Release()
		if !bytes.Equal(mrec.Body, rec.Body) {
			return errors.New("body differs")
		}
		n++
		return nil
	})
	if err != nil || end != master.MaxOffset() || n != 100 {
		t.Fatalf("slave recovery: end %d, %d records, %v", end, n, err)
	}
}

func TestSlaveStartsMidLog(t *testing.T) {
	// An empty slave accepts data starting at the master's current segment.
	slave := openLog(t, testConfig(vfs.NewMem(), false))
	defer slave.Close()
	master := openLog(t, testConfig(vfs.NewMem(), false))
	defer master.Close()
	for master.MaxOffset() < 2*testSegment+100 {
		putBody(t, master, 3000, 1)
	}
	wait.For(t, 10*time.Second, "master.Committed() == master.MaxOffset()", func() bool { return master.Committed() == master.MaxOffset() })
	start := master.MaxOffset() / testSegment * testSegment
	buf, err := master.ReadRaw(start, testSegment)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	if err := slave.AppendRaw(start, buf.Bytes); err != nil {
		t.Fatal(err)
	}
	if slave.MinOffset() != start || slave.MaxOffset() != master.MaxOffset() {
		t.Fatalf("slave [%d,%d), master max %d", slave.MinOffset(), slave.MaxOffset(), master.MaxOffset())
	}
}

func TestReadErrorsAndRetention(t *testing.T) {
	mem := vfs.NewMem()
	l := openLog(t, testConfig(mem, true))
	defer l.Close()
	var res []PutResult
	for l.MaxOffset() < 4*testSegment {
		res = append(res, putBody(t, l, 4000, 1))
	}
	if _, err := l.Read(l.Committed(), 10); !errors.Is(err, ErrOffsetNotAvailable) {
		t.Fatalf("read past committed: %v", err)
	}
	if _, err := l.Read(testSegment-10, 20); !errors.Is(err, ErrOffsetNotAvailable) {
		t.Fatalf("read across segments: %v", err)
	}
	if _, err := l.Read(0, 0); !errors.Is(err, ErrOffsetNotAvailable) {
		t.Fatalf("empty read: %v", err)
	}
	// A BLANK is not a record.
	blank := res[0]
	for _, r := range res {
		if r.WroteOffset >= testSegment {
			break
		}
		blank = r
	}
	if _, _, err := l.ReadRecordAt(blank.WroteOffset + int64(blank.WroteBytes)); !errors.Is(err, message.ErrBlank) {
		t.Fatalf("ReadRecordAt(BLANK): %v", err)
	}

	// A reader holding a buffer is unaffected by retention.
	held, err := l.Read(res[0].WroteOffset, res[0].WroteBytes)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := l.DeleteExpired(time.Now().Add(time.Hour), false, 2)
	if err != nil || rm.Files != 2 || rm.Unexpired != 0 {
		t.Fatalf("deleted %+v: %v", rm, err)
	}
	if l.MinOffset() != 2*testSegment {
		t.Fatalf("min offset %d", l.MinOffset())
	}
	if _, err := l.Read(res[0].WroteOffset, res[0].WroteBytes); !errors.Is(err, ErrOffsetNotAvailable) {
		t.Fatalf("read of deleted data: %v", err)
	}
	if rec, _, err := message.DecodeRecord(held.Bytes, true); err != nil || rec.PhysicalOffset != 0 {
		t.Fatalf("held buffer: %v", err)
	}
	held.Release()
	held.Release() // idempotent

	// Truncate drops the tail; puts continue from there.
	cut := res[len(res)-3].WroteOffset
	if err := l.Truncate(cut); err != nil {
		t.Fatal(err)
	}
	if l.MaxOffset() != cut || l.Committed() != cut || l.Flushed() > cut {
		t.Fatalf("after truncate: max %d committed %d flushed %d", l.MaxOffset(), l.Committed(), l.Flushed())
	}
	next := putBody(t, l, 10, 2)
	if next.WroteOffset != cut {
		t.Fatalf("put after truncate at %d, want %d", next.WroteOffset, cut)
	}
}

func TestRollFailureThenRecovery(t *testing.T) {
	// Creating the third segment fails (disk full) until the flag is cleared.
	var failCreate atomic.Bool
	var attempts atomic.Int64
	failCreate.Store(true)
	third := segment.Name(2 * testSegment)
	inj := vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpCreate && strings.Contains(op.Path, third) {
			attempts.Add(1)
			if failCreate.Load() {
				return syscall.ENOSPC
			}
		}
		return nil
	})
	clock := newManualClock()
	cfg := testConfig(vfs.NewErrorFS(vfs.NewMem(), inj), true)
	cfg.Now = clock.now
	var logs logLines
	cfg.Logger = logs.logger()
	l := openLog(t, cfg)
	defer l.Close()
	first := putBody(t, l, testSegment-2000, 1)
	putBody(t, l, testSegment-2000, 2) // rolls into the second segment
	for i := 0; i < 3; i++ {
		res := l.Put(context.Background(), newRecord("T", 0, make([]byte, testSegment-2000), ""), PutOptions{})
		if res.Status != CreateMappedFileFailed {
			t.Fatalf("put %d needing a third segment: %v", i, res.Status)
		}
	}
	if l.MaxOffset() != 2*testSegment {
		t.Fatalf("max offset %d after a failed roll, want the segment end %d", l.MaxOffset(), 2*testSegment)
	}
	// The allocator tried once (prefetching after the second roll) and
	// backs off: the failed puts did not try again.
	if n := attempts.Load(); n != 1 {
		t.Fatalf("%d attempts to create the third segment, want 1", n)
	}
	if err := l.RollErr(); !segment.IsDiskFull(err) {
		t.Fatalf("RollErr %v, want a disk-full error", err)
	}
	// One error line for the one attempt (the allocator writes it after
	// answering), none for the puts failing fast (written before they
	// returned).
	wait.For(t, 10*time.Second, `logs.count("level=ERROR") > 0`, func() bool { return logs.count("level=ERROR") > 0 })
	if n := logs.count("level=ERROR"); n != 1 {
		t.Fatalf("%d error lines, want 1:\n%s", n, logs.String())
	}
	// Space is back: after the back-off puts resume in the new segment.
	failCreate.Store(false)
	clock.advance(time.Second)
	res := l.Put(context.Background(), newRecord("T", 0, []byte("again"), ""), PutOptions{})
	if res.Status != PutOK || res.WroteOffset != 2*testSegment {
		t.Fatalf("put after the failure: %v at %d", res.Status, res.WroteOffset)
	}
	if err := l.RollErr(); err != nil {
		t.Fatalf("RollErr after success: %v", err)
	}
	if _, buf, err := l.ReadRecordAt(first.WroteOffset); err != nil {
		t.Fatal(err)
	} else {
		buf.Release()
	}
}

func TestRecoverRefusesMidSegmentStart(t *testing.T) {
	fs := vfs.NewMem()
	l := openLog(t, testConfig(fs, true))
	putBody(t, l, 100, 1)
	_ = l.Close()
	l2, err := Open(testConfig(fs, true))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if _, err := l2.Recover(50, nil); err == nil {
		t.Fatal("recovery from the middle of a segment accepted")
	}
}
