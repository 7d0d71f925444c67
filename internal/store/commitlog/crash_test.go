package commitlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/vfs"
)

// ackedRecord is a record a put answered PUT_OK for, with its exact bytes.
type ackedRecord struct {
	offset int64
	bytes  []byte
}

// crashWorkload puts a fixed sequence of messages (crossing several
// segments, with a batch) with SYNC_FLUSH and returns those acknowledged.
// It stops at the first refused put.
func crashWorkload(l *Log) []ackedRecord {
	rng := rand.New(rand.NewPCG(7, 7))
	var acked []ackedRecord
	for i := 0; i < 40; i++ {
		if i == 20 {
			recs := make([]message.Record, 3)
			for j := range recs {
				recs[j] = *newRecord("Batch", 1, []byte(fmt.Sprintf("batch-%d", j)), "")
			}
			res := l.PutBatch(context.Background(), recs, PutOptions{})
			if res.Status != PutOK {
				return acked
			}
			for j := range recs {
				acked = append(acked, ackedRecord{recs[j].PhysicalOffset, message.AppendRecord(nil, &recs[j])})
			}
			continue
		}
		body := make([]byte, rng.IntN(12000))
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		r := newRecord("Crash", int32(i%3), body, "UNIQ_KEY\x01k"+fmt.Sprint(i))
		res := l.Put(context.Background(), r, PutOptions{})
		if res.Status != PutOK {
			return acked
		}
		acked = append(acked, ackedRecord{res.WroteOffset, message.AppendRecord(nil, r)})
	}
	return acked
}

// recoveredImage opens and recovers a log on fs and returns its end and all
// bytes up to it (segment by segment).
func recoveredImage(t *testing.T, fs vfs.FS, from int64) (int64, []byte, *Log) {
	t.Helper()
	l, err := Open(testConfig(fs, true))
	if err != nil {
		t.Fatal(err)
	}
	end, err := l.Recover(from, nil)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for off := l.MinOffset(); off < end; {
		buf, err := l.ReadRaw(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, buf.Bytes...)
		off += int64(len(buf.Bytes))
		buf.Release()
	}
	return end, all, l
}

func TestCrashAtEveryWrite(t *testing.T) {
	for k := int64(0); ; k++ {
		mem := vfs.NewMem()
		trig := vfs.CrashAt(vfs.OpMutating, k)
		fs := vfs.NewErrorFS(mem, trig)
		var acked []ackedRecord
		if l, err := Open(testConfig(fs, true)); err == nil {
			if _, err := l.Recover(NormalRecovery, nil); err == nil && l.Start() == nil {
				acked = crashWorkload(l)
			}
			_ = l.Close()
		}
		if !trig.Fired() {
			if len(acked) != 42 {
				t.Fatalf("clean run acknowledged %d of 42", len(acked))
			}
			t.Logf("crashed at each of %d mutating operations", k)
			return
		}
		opts := vfs.CrashOptions{}
		if k%2 == 1 {
			// Let some unsynced pages reach the disk: torn writes.
			opts = vfs.CrashOptions{UnsyncedPagePercent: 50, Rand: rand.New(rand.NewPCG(uint64(k), 3))}
		}
		img := mem.CrashCloneWith(opts)

		end, data, l := recoveredImage(t, img, 0)
		for _, a := range acked {
			buf, err := l.Read(a.offset, int32(len(a.bytes)))
			if err != nil {
				t.Fatalf("k=%d: acknowledged record at %d lost (end %d): %v", k, a.offset, end, err)
			}
			if !bytes.Equal(buf.Bytes, a.bytes) {
				t.Fatalf("k=%d: acknowledged record at %d changed", k, a.offset)
			}
			buf.Release()
		}
		if err := l.Close(); err != nil {
			t.Fatalf("k=%d: close: %v", k, err)
		}
		// Recovering again (normal recovery this time) finds the same state.
		end2, data2, l2 := recoveredImage(t, img, NormalRecovery)
		if end2 != end || !bytes.Equal(data, data2) {
			t.Fatalf("k=%d: second recovery: end %d vs %d", k, end2, end)
		}
		// And the log accepts new puts after the recovered end.
		if err := l2.Start(); err != nil {
			t.Fatal(err)
		}
		res := l2.Put(context.Background(), newRecord("After", 0, []byte("x"), ""), PutOptions{})
		if res.Status != PutOK || res.WroteOffset < end {
			t.Fatalf("k=%d: put after recovery: %v at %d (end %d)", k, res.Status, res.WroteOffset, end)
		}
		if err := l2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// writeOnDisk puts n records on a real directory and closes the log.
func writeOnDisk(t *testing.T, dir string, n int) []PutResult {
	t.Helper()
	cfg := testConfig(vfs.Default, true)
	cfg.Dir = dir
	l := openLog(t, cfg)
	var out []PutResult
	for i := 0; i < n; i++ {
		res := l.Put(context.Background(), newRecord("Disk", 0, bytes.Repeat([]byte{byte(i)}, 3000), ""), PutOptions{})
		if res.Status != PutOK {
			t.Fatal(res.Status)
		}
		out = append(out, res)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func recoverOnDisk(t *testing.T, dir string) (int64, int) {
	t.Helper()
	cfg := testConfig(vfs.Default, true)
	cfg.Dir = dir
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := 0
	end, err := l.Recover(NormalRecovery, func(*message.Record, int64, int32) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return end, n
}

// TestTornTail: a bad last record, recovered with Recover (no durability
// knowledge: a crash with no checkpoint), is a torn tail and cut. After a
// clean shutdown or below the checkpoint it would be corruption
// (TestLogEndsBeforeCheckpoint, TestCorruptionAfterCleanShutdown).
func TestTornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "commitlog")
	res := writeOnDisk(t, dir, 30) // 3000-byte bodies: two segments
	last := res[len(res)-1]
	seg := filepath.Join(dir, segment.Name(last.WroteOffset/testSegment*testSegment))
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a body byte of the last record: its CRC no longer matches.
	pos := last.WroteOffset%testSegment + int64(last.WroteBytes) - 100
	if _, err := f.WriteAt([]byte{0xFF}, pos); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	end, n := recoverOnDisk(t, dir)
	if end != last.WroteOffset || n != len(res)-1 {
		t.Fatalf("torn tail: end %d (want %d), %d records", end, last.WroteOffset, n)
	}
	// The truncation is persistent and a second recovery agrees.
	if end2, _ := recoverOnDisk(t, dir); end2 != end {
		t.Fatalf("second recovery end %d", end2)
	}
}

func TestHalfTruncatedLastSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "commitlog")
	res := writeOnDisk(t, dir, 30)
	lastSeg := res[len(res)-1].WroteOffset / testSegment * testSegment
	path := filepath.Join(dir, segment.Name(lastSeg))
	if err := os.Truncate(path, testSegment/2); err != nil {
		t.Fatal(err)
	}
	// Records wholly in the first half survive; the one cut in two and all
	// after it are gone.
	wantEnd, wantN := int64(0), 0
	for _, r := range res {
		if r.WroteOffset+int64(r.WroteBytes) <= lastSeg+testSegment/2 {
			wantEnd, wantN = r.WroteOffset+int64(r.WroteBytes), wantN+1
		}
	}
	end, n := recoverOnDisk(t, dir)
	if end != wantEnd {
		t.Fatalf("end %d, want %d", end, wantEnd)
	}
	if n != wantN {
		t.Fatalf("%d records, want %d", n, wantN)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != testSegment {
		t.Fatalf("last segment not restored to full size: %v", err)
	}
}

// TestStaleRecordNotResurrected: after a crash, records after a torn one
// are cut by recovery; an append of exactly the torn record's length must
// not make the next cut record valid again. (The same damage after a clean
// shutdown is corruption: recovery refuses, see corrupt_test.go.)
func TestStaleRecordNotResurrected(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem, true)
	l := openLog(t, cfg)
	a := putBody(t, l, 500, 1)
	b := putBody(t, l, 500, 2)
	putBody(t, l, 500, 3)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Tear b: flip a body byte.
	f, err := mem.OpenReadWrite(filepath.Join(cfg.Dir, segment.Name(0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xEE}, b.WroteOffset+200); err != nil {
		t.Fatal(err)
	}
	_ = f.Sync()
	_ = f.Close()

	// Had the shutdown been clean, c after the bad b would be corruption.
	lc, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cerr *CorruptionError
	if _, err := lc.RecoverWith(RecoverOptions{From: NormalRecovery, CleanShutdown: true}); !errors.As(err, &cerr) || cerr.Offset != b.WroteOffset {
		t.Fatalf("recover after a clean shutdown: %v, want corruption at %d", err, b.WroteOffset)
	}
	_ = lc.Close()

	// After a crash with nothing known durable past a, b is a torn tail.
	l2, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := l2.RecoverWith(RecoverOptions{From: NormalRecovery, DurableTimestamp: a.StoreTimestamp}); err != nil || res.End != b.WroteOffset {
		t.Fatalf("recover: end %d, want %d: %v", res.End, b.WroteOffset, err)
	}
	if err := l2.Start(); err != nil {
		t.Fatal(err)
	}
	d := putBody(t, l2, 500, 4) // same length as b, at b's offset
	if d.WroteOffset != b.WroteOffset || d.WroteBytes != b.WroteBytes {
		t.Fatalf("d at %d size %d", d.WroteOffset, d.WroteBytes)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	want := []PutResult{a, d}
	checkRecovered(t, mem, cfg, want, d.WroteOffset+int64(d.WroteBytes))
}
