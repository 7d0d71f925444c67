package commitlog

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/vfs"
)

// FuzzRecoverScan feeds arbitrary bytes as the content of a segment file to
// recovery. Properties: no panic and no error (bad bytes are a torn tail,
// not a failure); the reported records are contiguous from the start of the
// file; the end is where the last one ends (or the segment end after a
// BLANK); recovering again gives the same end; the log accepts a put after.
func FuzzRecoverScan(f *testing.F) {
	var seed []byte
	for i := 0; i < 3; i++ {
		r := newRecord("Fuzz", int32(i), []byte(fmt.Sprintf("body %d", i)), "TAGS\x01t")
		r.StoreHost = testStoreHost
		r.PhysicalOffset = int64(len(seed))
		seed = message.AppendRecord(seed, r)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)-5])                                                     // torn
	f.Add(append(append([]byte{}, seed...), 0, 0, 0, 40, 0xCB, 0xD4, 0x31, 0x94)) // BLANK
	f.Add([]byte{})
	bad := append([]byte{}, seed...)
	bad[100] ^= 0xFF // body CRC mismatch in the first record
	f.Add(bad)

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > testSegment {
			data = data[:testSegment]
		}
		mem := vfs.NewMem()
		cfg := testConfig(mem, false)
		if err := vfs.MkdirAllSync(mem, cfg.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file, err := mem.Create(filepath.Join(cfg.Dir, segment.Name(0)))
		if err != nil {
			t.Fatal(err)
		}
		_ = file.Truncate(testSegment)
		_, _ = file.WriteAt(data, 0)
		_ = file.Close()

		l, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var next int64
		end, err := l.Recover(NormalRecovery, func(rec *message.Record, off int64, size int32) error {
			if off != next || size < message.MinRecordSize {
				return fmt.Errorf("record at %d size %d, expected at %d", off, size, next)
			}
			next = off + int64(size)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if end != next && end != testSegment {
			t.Fatalf("end %d, last record ends at %d", end, next)
		}
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		res := l.Put(context.Background(), newRecord("After", 0, []byte("x"), ""), PutOptions{})
		if res.Status != PutOK || (res.WroteOffset != end && res.WroteOffset != testSegment) {
			t.Fatalf("put after recovery to %d: %v at %d", end, res.Status, res.WroteOffset)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// Recovery is idempotent: the same end again (the put extended it).
		l2, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		end2, err := l2.Recover(0, nil)
		if err != nil || end2 != res.WroteOffset+int64(res.WroteBytes) {
			t.Fatalf("second recovery: %d, want %d: %v", end2, res.WroteOffset+int64(res.WroteBytes), err)
		}
		_ = l2.Close()
	})
}
