package store

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/consumequeue"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if runChildIfAsked() || runLowLimitChildIfAsked() {
		return
	}
	goleak.VerifyTestMain(m)
}

const testDir = "/data"

var (
	testStoreHost = netip.MustParseAddrPort("127.0.0.1:10911")
	testBornHost  = netip.MustParseAddrPort("10.0.0.1:5000")
)

// testConfig is a small store: 64 KiB segments, 100-unit queue files, fast
// services.
func testConfig(fs vfs.FS) Config {
	return Config{
		Dir:             testDir,
		FS:              fs,
		SegmentSize:     64 << 10,
		CQUnitsPerFile:  100,
		MaxMessageSize:  16 << 10,
		StoreHost:       testStoreHost,
		CQFlushInterval: 20 * time.Millisecond,
		CleanInterval:   time.Hour, // tests of retention lower it
		FlushInterval:   20 * time.Millisecond,
		MaxHashSlotNum:  1024,
		MaxIndexNum:     4096,
	}
}

func openStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newRecord(topic string, queueID int32, body []byte, props map[string]string) *message.Record {
	return &message.Record{
		Topic: topic, QueueID: queueID, Body: body,
		BornTimestamp: 1_700_000_000_000, BornHost: testBornHost,
		Properties: message.EncodeProperties(props),
	}
}

func bodyFor(i int, size int) []byte {
	b := bytes.Repeat([]byte{byte('a' + i%26)}, size)
	copy(b, fmt.Sprintf("msg-%d-", i))
	return b
}

func put(t testing.TB, s *Store, r *message.Record) PutResult {
	t.Helper()
	res := s.PutMessage(context.Background(), r, PutOptions{})
	if res.Status != PutOK {
		t.Fatalf("put %s/%d: %s", r.Topic, r.QueueID, res.Status)
	}
	return res
}

func waitDispatched(t testing.TB, s *Store) {
	t.Helper()
	wait.For(t, 10*time.Second, "dispatch", func() bool { return s.DispatchedOffset() >= s.CommitLogMaxOffset() })
}

// steppedClock is a clock ahead of real time (so the CommitLog's lock-age
// check never fires) that moves only when the test says.
type steppedClock struct{ ms atomic.Int64 }

func newSteppedClock() *steppedClock {
	c := &steppedClock{}
	c.ms.Store(time.Now().Add(time.Hour).UnixMilli())
	return c
}

func (c *steppedClock) Now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *steppedClock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// checkNoUnitPastEnd asserts that no ConsumeQueue unit points past the
// CommitLog end.
func checkNoUnitPastEnd(t testing.TB, s *Store) {
	t.Helper()
	end := s.CommitLogMaxOffset()
	for _, q := range s.cqs.Queues() {
		for off := q.MinOffset(); off < q.MaxOffset(); {
			us, err := q.Read(off, 256)
			if err != nil {
				t.Fatalf("%s/%d read %d: %v", q.Topic(), q.QueueID(), off, err)
			}
			for i := 0; i < us.Len(); i++ {
				if u := us.At(i); !u.IsFiller() && u.End() > end {
					t.Fatalf("%s/%d unit %d points to [%d,%d) past the commitlog end %d",
						q.Topic(), q.QueueID(), off+int64(i), u.Offset, u.End(), end)
				}
			}
			off += int64(us.Len())
			us.Release()
		}
	}
}

// storeState is what "recovering twice gives the same state" compares.
type storeState struct {
	commitLogMax int64
	queues       map[string][]consumequeue.Unit
}

func captureState(t testing.TB, s *Store) storeState {
	t.Helper()
	st := storeState{commitLogMax: s.CommitLogMaxOffset(), queues: map[string][]consumequeue.Unit{}}
	for _, q := range s.cqs.Queues() {
		key := fmt.Sprintf("%s/%d", q.Topic(), q.QueueID())
		units := []consumequeue.Unit{}
		for off := q.MinOffset(); off < q.MaxOffset(); {
			us, err := q.Read(off, 256)
			if err != nil || us.Len() == 0 {
				t.Fatalf("%s read %d: %v", key, off, err)
			}
			for i := 0; i < us.Len(); i++ {
				units = append(units, us.At(i))
			}
			off += int64(us.Len())
			us.Release()
		}
		st.queues[key] = units
	}
	return st
}

var errNotExistForTest = fs.ErrNotExist

// lockedBuffer is a log sink the store's goroutines write while a test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
