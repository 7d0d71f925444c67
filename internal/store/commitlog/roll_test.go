package commitlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

const testSegment = 64 << 10

// recordOverhead is the size of a record with an empty body for topic "T"
// and no properties (IPv4 hosts).
const recordOverhead = 91 + 1

func putBody(t *testing.T, l *Log, n int, fill byte) PutResult {
	t.Helper()
	res := l.Put(context.Background(), newRecord("T", 0, bytes.Repeat([]byte{fill}, n), ""), PutOptions{})
	if res.Status != PutOK {
		t.Fatalf("put %d bytes: %v", n, res.Status)
	}
	return res
}

func TestRollBoundary(t *testing.T) {
	const left = 1000 // space left in segment 0 before the probe record
	for delta := -10; delta <= 10; delta++ {
		t.Run(fmt.Sprintf("delta=%d", delta), func(t *testing.T) {
			fs := vfs.NewMem()
			l := openLog(t, testConfig(fs, delta%2 == 0))
			first := putBody(t, l, testSegment-left-recordOverhead, 1)
			if first.WroteOffset != 0 || l.MaxOffset() != testSegment-left {
				t.Fatalf("filler at %d, max %d", first.WroteOffset, l.MaxOffset())
			}
			// The probe fits iff size + 8 <= left.
			size := left - message.BlankLen + delta
			probe := putBody(t, l, size-recordOverhead, 2)
			after := putBody(t, l, 10, 3)
			fits := delta <= 0
			if fits {
				if probe.WroteOffset != testSegment-left {
					t.Fatalf("probe at %d, want %d", probe.WroteOffset, testSegment-left)
				}
			} else {
				if probe.WroteOffset != testSegment {
					t.Fatalf("probe at %d, want next segment %d", probe.WroteOffset, testSegment)
				}
				wait.For(t, 10*time.Second, "l.Committed() >= after.WroteOffset+int64(after.WroteBytes)", func() bool { return l.Committed() >= after.WroteOffset+int64(after.WroteBytes) })
				raw, err := l.ReadRaw(testSegment-left, 8)
				if err != nil {
					t.Fatal(err)
				}
				if got := binary.BigEndian.Uint32(raw.Bytes); got != left {
					t.Fatalf("BLANK length %d, want %d", got, left)
				}
				if got := binary.BigEndian.Uint32(raw.Bytes[4:]); got != message.MagicBlank {
					t.Fatalf("BLANK magic %#x", got)
				}
				raw.Release()
			}
			wantAfter := probe.WroteOffset + int64(probe.WroteBytes)
			if segEnd := (wantAfter/testSegment + 1) * testSegment; wantAfter+int64(after.WroteBytes)+message.BlankLen > segEnd {
				wantAfter = segEnd
			}
			if after.WroteOffset != wantAfter {
				t.Fatalf("record after probe at %d, want %d", after.WroteOffset, wantAfter)
			}
			want := []PutResult{first, probe, after}
			wait.For(t, 10*time.Second, "l.Committed() == l.MaxOffset()", func() bool { return l.Committed() == l.MaxOffset() })
			for i, w := range want {
				rec, buf, err := l.ReadRecordAt(w.WroteOffset)
				if err != nil {
					t.Fatalf("read %d: %v", i, err)
				}
				if rec.QueueOffset != int64(i) || len(rec.Body) == 0 || rec.Body[0] != byte(i+1) {
					t.Fatalf("record %d: queue offset %d", i, rec.QueueOffset)
				}
				buf.Release()
			}
			end := l.MaxOffset()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			checkRecovered(t, fs, testConfig(fs, false), want, end)
		})
	}
}

// checkRecovered reopens the log and checks that recovery finds exactly the
// given records and end.
func checkRecovered(t *testing.T, fs vfs.FS, cfg Config, want []PutResult, end int64) {
	t.Helper()
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	i := 0
	got, err := l.Recover(NormalRecovery, func(rec *message.Record, off int64, size int32) error {
		if i >= len(want) || off != want[i].WroteOffset || size != want[i].WroteBytes {
			return fmt.Errorf("unexpected record %d at %d size %d", i, off, size)
		}
		i++
		return nil
	})
	if err != nil || got != end || i != len(want) {
		t.Fatalf("recover: end %d want %d, %d of %d records, %v", got, end, i, len(want), err)
	}
}

func TestRollManySegments(t *testing.T) {
	fs := vfs.NewMem()
	cfg := testConfig(fs, false)
	l := openLog(t, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	var all []PutResult
	var bodies [][]byte
	for l.MaxOffset() < 20*testSegment {
		body := make([]byte, rng.IntN(9000))
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		res := l.Put(context.Background(), newRecord("T", 0, body, ""), PutOptions{NoWait: true})
		if res.Status != PutOK {
			t.Fatal(res.Status)
		}
		if res.WroteOffset/testSegment != (res.WroteOffset+int64(res.WroteBytes)-1)/testSegment {
			t.Fatalf("record [%d,+%d) spans segments", res.WroteOffset, res.WroteBytes)
		}
		all = append(all, res)
		bodies = append(bodies, body)
	}
	wait.For(t, 10*time.Second, "l.Committed() == l.MaxOffset()", func() bool { return l.Committed() == l.MaxOffset() })
	for i, res := range all {
		rec, buf, err := l.ReadRecordAt(res.WroteOffset)
		if err != nil || !bytes.Equal(rec.Body, bodies[i]) {
			t.Fatalf("record %d: %v", i, err)
		}
		buf.Release()
	}
	if n := len(l.Segments()); n != 21 {
		t.Fatalf("%d segments", n)
	}
	end := l.MaxOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Normal recovery scans the last three segments only.
	l2, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	got, err := l2.Recover(NormalRecovery, func(*message.Record, int64, int32) error { n++; return nil })
	if err != nil || got != end {
		t.Fatalf("recover: %d want %d: %v", got, end, err)
	}
	var inLast3 int
	for _, r := range all {
		if r.WroteOffset >= 18*testSegment {
			inLast3++
		}
	}
	if n != inLast3 {
		t.Fatalf("normal recovery visited %d records, want %d", n, inLast3)
	}
	_ = l2.Close()
	// Recovery from the start visits all.
	l3, _ := Open(cfg)
	n = 0
	if got, err := l3.Recover(0, func(*message.Record, int64, int32) error { n++; return nil }); err != nil || got != end || n != len(all) {
		t.Fatalf("full recover: end %d, %d records, %v", got, n, err)
	}
	_ = l3.Close()
}

func TestPutBatch(t *testing.T) {
	fs := vfs.NewMem()
	l := openLog(t, testConfig(fs, true))
	defer l.Close()
	putBody(t, l, testSegment-3000, 1) // leaves ~2.9 KiB: the batch below does not fit
	recs := make([]message.Record, 5)
	for i := range recs {
		recs[i] = *newRecord("T", 0, bytes.Repeat([]byte{byte(i)}, 700), "UNIQ_KEY\x01u"+fmt.Sprint(i))
	}
	res := l.PutBatch(context.Background(), recs, PutOptions{})
	if res.Status != PutOK || res.MsgNum != 5 || res.QueueOffset != 1 {
		t.Fatalf("batch: %+v", res)
	}
	if res.WroteOffset != testSegment {
		t.Fatalf("batch at %d: should have moved whole to the next segment", res.WroteOffset)
	}
	ids := bytes.Split([]byte(res.MsgID), []byte(","))
	if len(ids) != 5 {
		t.Fatalf("msgId %q", res.MsgID)
	}
	off := res.WroteOffset
	for i := range recs {
		if recs[i].PhysicalOffset != off || recs[i].QueueOffset != int64(1+i) {
			t.Fatalf("record %d at %d queue offset %d", i, recs[i].PhysicalOffset, recs[i].QueueOffset)
		}
		if string(ids[i]) != message.OffsetMsgID(testStoreHost, off) {
			t.Fatalf("id %d", i)
		}
		rec, buf, err := l.ReadRecordAt(off)
		if err != nil || rec.QueueOffset != int64(1+i) || rec.Body[0] != byte(i) {
			t.Fatalf("read %d: %v", i, err)
		}
		off += int64(recs[i].Size())
		buf.Release()
	}
	if off != res.WroteOffset+int64(res.WroteBytes) {
		t.Fatalf("batch bytes %d", res.WroteBytes)
	}
	if next := putBody(t, l, 1, 9); next.QueueOffset != 6 {
		t.Fatalf("queue offset after batch %d", next.QueueOffset)
	}
	// Refusals.
	bad := []message.Record{*newRecord("T", 0, nil, ""), *newRecord("U", 0, nil, "")}
	if st := l.PutBatch(context.Background(), bad, PutOptions{}).Status; st != MessageIllegal {
		t.Fatalf("mixed topics: %v", st)
	}
	bad = []message.Record{*newRecord("T", 0, nil, "DELAY\x013")}
	if st := l.PutBatch(context.Background(), bad, PutOptions{}).Status; st != MessageIllegal {
		t.Fatalf("delay in batch: %v", st)
	}
	bad = []message.Record{*newRecord("T", 0, nil, "")}
	bad[0].SysFlag = message.TransactionPreparedType
	if st := l.PutBatch(context.Background(), bad, PutOptions{}).Status; st != MessageIllegal {
		t.Fatalf("transaction in batch: %v", st)
	}
	if st := l.PutBatch(context.Background(), nil, PutOptions{}).Status; st != MessageIllegal {
		t.Fatalf("empty batch: %v", st)
	}
}
