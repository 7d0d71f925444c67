package commitlog

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

var (
	testStoreHost = netip.MustParseAddrPort("10.0.0.1:10911")
	testBornHost  = netip.MustParseAddrPort("192.168.1.7:52000")
)

func testConfig(fs vfs.FS, sync bool) Config {
	return Config{
		Dir:         "/store/commitlog",
		FS:          fs,
		SegmentSize: 64 << 10,
		FlushSync:   sync,
		StoreHost:   testStoreHost,
		RingSize:    1 << 20,
		// Small enough that the ring stays 1 MiB; large enough for every
		// test record.
		MaxMessageSize: 256 << 10,
	}
}

// openLog opens, recovers and starts a log.
func openLog(t testing.TB, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Recover(NormalRecovery, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	return l
}

func newRecord(topic string, qid int32, body []byte, props string) *message.Record {
	return &message.Record{
		Topic: topic, QueueID: qid, Body: body, Properties: props,
		BornTimestamp: 1700000000000, BornHost: testBornHost, Flag: 3,
	}
}

func TestPutReadReopen(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			fs := vfs.NewMem()
			l := openLog(t, testConfig(fs, sync))
			var offs []int64
			for i := 0; i < 50; i++ {
				r := newRecord("TopicA", int32(i%2), []byte(fmt.Sprintf("body-%d", i)), "TAGS\x01x")
				res := l.Put(context.Background(), r, PutOptions{})
				if res.Status != PutOK {
					t.Fatalf("put %d: %v", i, res.Status)
				}
				if res.QueueOffset != int64(i/2) {
					t.Fatalf("put %d: queue offset %d", i, res.QueueOffset)
				}
				offs = append(offs, res.WroteOffset)
			}
			wait.For(t, 10*time.Second, "l.Committed() == l.MaxOffset()", func() bool { return l.Committed() == l.MaxOffset() })
			for i, off := range offs {
				rec, buf, err := l.ReadRecordAt(off)
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("body-%d", i); string(rec.Body) != want || rec.PhysicalOffset != off {
					t.Fatalf("record %d: %q at %d", i, rec.Body, rec.PhysicalOffset)
				}
				buf.Release()
			}
			end := l.MaxOffset()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2, err := Open(testConfig(fs, sync))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			got, err := l2.Recover(NormalRecovery, func(rec *message.Record, off int64, size int32) error {
				if !bytes.Equal(rec.Body, []byte(fmt.Sprintf("body-%d", n))) || off != offs[n] {
					return fmt.Errorf("record %d mismatch", n)
				}
				n++
				return nil
			})
			if err != nil || got != end || n != 50 {
				t.Fatalf("recover: end %d (want %d), %d records, %v", got, end, n, err)
			}
			_ = l2.Close()
		})
	}
}
