package timer

import (
	"encoding/binary"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/vfs"
)

// FuzzBucketLoad: whatever a bucket file holds (a torn or corrupt tail,
// garbage), loading it neither panics nor loops, returns only entries of
// that bucket, and copied records lie inside the file.
func FuzzBucketLoad(f *testing.F) {
	entryBytes := func(deliverMs, phy int64, size int32, record []byte) []byte {
		b := make([]byte, entrySize, entrySize+len(record))
		binary.BigEndian.PutUint64(b[0:], uint64(deliverMs))
		binary.BigEndian.PutUint64(b[8:], uint64(phy))
		binary.BigEndian.PutUint32(b[16:], uint32(size))
		return append(b, record...)
	}
	f.Add(entryBytes(1500, 10, 100, nil))
	f.Add(append(entryBytes(1500, 10, -3, []byte("abc")), entryBytes(1999, 11, 50, nil)...))
	f.Add(entryBytes(1500, 10, -30, []byte("abc")))
	f.Add(append(entryBytes(1500, 10, 100, nil), 1, 2, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		b, err := openBuckets(vfs.Default, dir, 1000)
		if err != nil {
			t.Fatal(err)
		}
		f, err := vfs.Default.Create(filepath.Join(dir, "00000000000000001000"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		b.sizes[1000] = int64(len(data))
		got, err := b.load(1000, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			if b.start(e.deliverMs) != 1000 || e.size <= 0 {
				t.Fatalf("bad entry %+v", e)
			}
			if e.fileOff >= 0 && e.fileOff+int64(e.size) > int64(len(data)) {
				t.Fatalf("copy outside the file: %+v (file %d bytes)", e, len(data))
			}
		}
		if b.sizes[1000] > int64(len(data)) {
			t.Fatalf("append position %d past the file end %d", b.sizes[1000], len(data))
		}
	})
}

// FuzzHold: any property string (a producer's bytes) is either left alone
// or held with a delivery time in (now, now + MaxDelay]; never a panic.
func FuzzHold(f *testing.F) {
	f.Add("TIMER_DELIVER_MS\x011700000003000")
	f.Add("TIMER_DELAY_SEC\x0110\x02TAGS\x01a")
	f.Add("TIMER_DELAY_MS\x01-1")
	f.Add("DELAY\x012\x02TIMER_DELAY_SEC\x015")
	f.Add("TIMER_DELAY_SEC\x019223372036854775807")
	f.Fuzz(func(t *testing.T, props string) {
		now := time.UnixMilli(1_700_000_000_000)
		rec := message.Record{Topic: "T", QueueID: 1, Properties: props}
		st := Hold(&rec, now, Policy{Enabled: true, MaxDelay: time.Hour})
		if st != Held {
			if rec.Topic != "T" {
				t.Fatalf("%v but moved to %s", st, rec.Topic)
			}
			return
		}
		v, _ := message.Property(rec.Properties, message.PropertyTimerOutMS)
		out, err := strconv.ParseInt(v, 10, 64)
		if err != nil || out <= now.UnixMilli() || out > now.Add(time.Hour).UnixMilli() || rec.Topic != Topic {
			t.Fatalf("held with TIMER_OUT_MS %q in %s", v, rec.Topic)
		}
	})
}
