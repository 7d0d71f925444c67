package segment

import (
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// manualClock is the allocator's back-off clock, moved by the test.
type manualClock struct{ ns atomic.Int64 }

func newManualClock() *manualClock {
	c := &manualClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *manualClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *manualClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// createCounter counts file creations and fails them (those of the file
// named only, when set) while fail is set.
type createCounter struct {
	creates atomic.Int64
	fail    atomic.Bool
	only    string
}

func (c *createCounter) MaybeError(op vfs.Op) error {
	if op.Kind != vfs.OpCreate || !strings.HasSuffix(op.Path, tmpSuffix) {
		return nil
	}
	c.creates.Add(1)
	if c.fail.Load() && (c.only == "" || strings.Contains(op.Path, c.only)) {
		return syscall.EIO
	}
	return nil
}

// TestPrepareDiskFull: on a disk without room for a zero-filled file the
// preparation fails before writing anything, rolls fail at once with a
// disk-full error and do not retry, and the first roll after space comes
// back succeeds without waiting for the back-off.
func TestPrepareDiskFull(t *testing.T) {
	mem := vfs.NewMem()
	cc := &createCounter{}
	clock := newManualClock()
	q, err := Open(Config{Dir: "d", FS: vfs.NewErrorFS(mem, cc), Size: testSize, ZeroFill: true, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	defer q.Close()
	d, _ := mem.DiskUsage("d")
	mem.SetCapacity(d.Used + testSize) // room for the file but not its margin

	err = q.Prepare(0)
	var backoff *BackoffError
	var full *DiskFullError
	if !errors.As(err, &backoff) || !errors.As(err, &full) || !errors.Is(err, syscall.ENOSPC) || !IsDiskFull(err) {
		t.Fatalf("Prepare on a full disk: %v", err)
	}
	if !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error does not say the disk is full: %v", err)
	}
	for i := 0; i < 5; i++ {
		if _, err := q.Roll(0); !IsDiskFull(err) {
			t.Fatalf("roll %d: %v", i, err)
		}
	}
	if n := cc.creates.Load(); n != 0 {
		t.Fatalf("%d files created on a full disk, want none", n)
	}
	if !IsDiskFull(q.PrepareErr()) {
		t.Fatalf("PrepareErr %v", q.PrepareErr())
	}
	if names, _ := mem.List("d"); len(names) != 0 {
		t.Fatalf("files on a full disk: %v", names)
	}

	mem.SetCapacity(0) // space is back; the clock did not move
	f, err := q.Roll(0)
	if err != nil || f.Start() != 0 {
		t.Fatalf("roll after space came back: %v %v", f, err)
	}
	if q.PrepareErr() != nil {
		t.Fatalf("PrepareErr after success: %v", q.PrepareErr())
	}
}

// TestPrepareBackoff: a failed preparation is retried by the allocator
// itself after 1 s, then 2 s, ...; rolls in between fail at once without
// an attempt.
func TestPrepareBackoff(t *testing.T) {
	cc := &createCounter{}
	clock := newManualClock()
	fs := vfs.NewErrorFS(vfs.NewMem(), cc)
	q, err := Open(Config{Dir: "d", FS: fs, Size: testSize, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	defer q.Close()
	cc.fail.Store(true)

	if _, err := q.Roll(0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("first roll: %v", err)
	}
	if _, err := q.Roll(0); err == nil || cc.creates.Load() != 1 {
		t.Fatalf("roll during the back-off: %v after %d attempts", err, cc.creates.Load())
	}
	clock.advance(time.Second) // the 1 s back-off is over: attempt 2
	var backoff *BackoffError
	if _, err := q.Roll(0); !errors.As(err, &backoff) || backoff.Attempts != 2 || backoff.RetryIn != 2*time.Second {
		t.Fatalf("second attempt: %v", err)
	}
	clock.advance(time.Second) // half of the 2 s back-off
	if _, err := q.Roll(0); err == nil || cc.creates.Load() != 2 {
		t.Fatalf("roll during the second back-off: %v after %d attempts", err, cc.creates.Load())
	}
	cc.fail.Store(false)
	clock.advance(time.Second)
	// The allocator retries by itself (its timer fires within a second);
	// no roll needs to ask.
	wait.For(t, 10*time.Second, "prepared after the back-off", func() bool {
		_, err := fs.Stat(filepath.Join("d", Name(0)))
		return err == nil
	})
	if f, err := q.Roll(0); err != nil || f.Start() != 0 {
		t.Fatalf("roll after the back-off: %v %v", f, err)
	}
}

// TestPrepareRetriesAfterDelete: deleting files ends the back-off (space
// may be back).
func TestPrepareRetriesAfterDelete(t *testing.T) {
	cc := &createCounter{only: Name(2 * testSize)}
	cc.fail.Store(true)
	clock := newManualClock()
	q, err := Open(Config{Dir: "d", FS: vfs.NewErrorFS(vfs.NewMem(), cc), Size: testSize, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	defer q.Close()
	for i := 0; i < 2; i++ {
		if _, err := q.Roll(0); err != nil {
			t.Fatal(err)
		}
	}
	// The third file is prefetched after the second roll; its attempt fails.
	wait.For(t, 10*time.Second, "failed prefetch", func() bool { return q.PrepareErr() != nil })
	if _, err := q.Roll(0); err == nil {
		t.Fatal("roll succeeded while creation fails")
	}
	cc.fail.Store(false)
	if n, err := q.DeleteBelow(testSize); n != 1 || err != nil {
		t.Fatalf("DeleteBelow: %d %v", n, err)
	}
	wait.For(t, 10*time.Second, "retry after delete", func() bool { return q.PrepareErr() == nil })
	if f, err := q.Roll(0); err != nil || f.Start() != 2*testSize {
		t.Fatalf("roll after delete: %v %v", f, err)
	}
}

// TestStartPrefetchesAfterLast: a reopened queue prepares the file after
// its last one as soon as it starts, before any roll asks.
func TestStartPrefetchesAfterLast(t *testing.T) {
	fs := vfs.NewMem()
	q := openQueue(t, fs, "d", true)
	if _, err := q.Roll(0); err != nil {
		t.Fatal(err)
	}
	_ = q.Close()
	q = openQueue(t, fs, "d", true)
	defer q.Close()
	q.Start()
	wait.For(t, 10*time.Second, "next file prepared", func() bool {
		_, err := fs.Stat(filepath.Join("d", Name(testSize)))
		return err == nil
	})
}

// TestPrepareKeepsFileForRoll: Prepare leaves the file with the allocator;
// the roll that follows takes it without creating another.
func TestPrepareKeepsFileForRoll(t *testing.T) {
	cc := &createCounter{}
	q, err := Open(Config{Dir: "d", FS: vfs.NewErrorFS(vfs.NewMem(), cc), Size: testSize, ZeroFill: true})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	defer q.Close()
	if err := q.Prepare(3*testSize + 10); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 || cc.creates.Load() != 1 {
		t.Fatalf("after Prepare: %d files in the queue, %d created", q.Len(), cc.creates.Load())
	}
	f, err := q.Roll(3*testSize + 10)
	if err != nil || f.Start() != 3*testSize {
		t.Fatalf("roll: %v %v", f, err)
	}
	// Only the prefetch of the next file may create another.
	if n := cc.creates.Load(); n > 2 {
		t.Fatalf("%d files created", n)
	}
	if st := q.RollStats(); st.Rolls != 1 || st.MaxWait <= 0 || st.TotalWait != st.MaxWait {
		t.Fatalf("roll stats %+v", st)
	}
}
