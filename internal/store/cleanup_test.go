package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

func fillSegments(t *testing.T, s *Store, n int) {
	t.Helper()
	body := bodyFor(0, 1000)
	for i := 0; i < n; i++ {
		put(t, s, newRecord("T", int32(i%2), body, nil))
	}
	waitDispatched(t, s)
}

// otherHour is a deleteWhen hour far from now's (and from now + 73 h's).
func otherHour(now time.Time) string { return fmt.Sprintf("%02d", (now.Hour()+12)%24) }

func countFiles(t *testing.T, fs vfs.FS, dir string) int {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

// TestRetentionAtDeleteWhen: at a deleteWhen hour, segments older than
// fileReservedTime go (never the one being written), then queue files
// wholly below the new min offset, and queue min offsets move.
func TestRetentionAtDeleteWhen(t *testing.T) {
	mem := vfs.NewMem()
	clock := newSteppedClock()
	cfg := testConfig(mem)
	cfg.Clock = clock.Now
	cfg.CQUnitsPerFile = 20
	cfg.DeleteWhen = "0;1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17;18;19;20;21;22;23" // always time to delete
	s := openStore(t, cfg)
	fillSegments(t, s, 400) // ~430 KB: 7 segments
	var lastMin int64 = -1
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() != 0 {
		t.Fatal("young segments deleted")
	}
	clock.Advance(DefaultFileReservedTime + time.Hour) // everything is old now
	cqFiles := countFiles(t, mem, testDir+"/consumequeue/T/0")
	for i := 0; i < 5 && s.CommitLogMinOffset() < s.CommitLogMaxOffset()-cfg.SegmentSize; i++ {
		s.cleanOnce(&lastMin)
	}
	segs := s.CommitLog().Segments()
	if len(segs) > 2 { // the current one, perhaps a preallocated next one
		t.Fatalf("segments left: %v", segs)
	}
	if s.CommitLogMinOffset() == 0 {
		t.Fatal("nothing deleted")
	}
	minQ := s.MinOffset("T", 0)
	if minQ == 0 || minQ >= s.MaxOffset("T", 0) {
		t.Fatalf("queue min offset %d (max %d)", minQ, s.MaxOffset("T", 0))
	}
	if n := countFiles(t, mem, testDir+"/consumequeue/T/0"); n >= cqFiles {
		t.Fatalf("queue files %d, before %d", n, cqFiles)
	}
	// Everything from the new min offset is readable.
	r, _ := s.GetMessage("g", "T", 0, minQ, 32, nil)
	if r.Status != Found || r.Messages[0].QueueOffset != minQ {
		t.Fatalf("read at new min: %s", r.Status)
	}
	r.Release()
	r, _ = s.GetMessage("g", "T", 0, 0, 32, nil)
	if r.Status != OffsetTooSmall || r.NextBeginOffset != minQ {
		t.Fatalf("read below min: %s next %d", r.Status, r.NextBeginOffset)
	}
	r.Release()
}

// TestRetentionNotAtOtherHours: outside deleteWhen and with a roomy disk,
// even old segments stay.
func TestRetentionNotAtOtherHours(t *testing.T) {
	clock := newSteppedClock()
	cfg := testConfig(vfs.NewMem())
	cfg.Clock = clock.Now
	cfg.DeleteWhen = otherHour(clock.Now())
	s := openStore(t, cfg)
	fillSegments(t, s, 200)
	clock.Advance(DefaultFileReservedTime + time.Hour)
	var lastMin int64 = -1
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() != 0 {
		t.Fatal("segments deleted outside deleteWhen")
	}
}

// TestDiskFullRefusesAndResumes: above the warning ratio the cleanup
// service marks the disk full and puts are refused while reads go on;
// once space is back, puts are accepted again by themselves.
func TestDiskFullRefusesAndResumes(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.CleanInterval = 5 * time.Millisecond
	cfg.DeleteWhen = otherHour(time.Now()) // only space triggers deletion
	s := openStore(t, cfg)
	for i := 0; i < 10; i++ {
		put(t, s, newRecord("T", 0, bodyFor(i, 100), nil))
	}
	waitDispatched(t, s)
	d, err := mem.DiskUsage("/")
	if err != nil {
		t.Fatal(err)
	}
	used := d.Used
	mem.SetCapacity(used * 100 / 95) // 95% in use, nothing old enough to delete
	waitFor(t, "disk full", func() bool { return s.DiskStatus().Full })
	res := s.PutMessage(context.Background(), newRecord("T", 0, []byte("x"), nil), PutOptions{})
	if res.Status != ServiceNotAvailable {
		t.Fatalf("put on a full disk: %s", res.Status)
	}
	if !strings.Contains(s.RefusalReason(), "disk full") {
		t.Fatalf("reason %q", s.RefusalReason())
	}
	r, _ := s.GetMessage("g", "T", 0, 0, 32, nil)
	if r.Status != Found || len(r.Messages) != 10 {
		t.Fatalf("read on a full disk: %s %d", r.Status, len(r.Messages))
	}
	r.Release()
	// 88%: still above the forcible-clean ratio, still refused (hysteresis).
	mem.SetCapacity(used * 100 / 88)
	time.Sleep(30 * time.Millisecond)
	if !s.DiskStatus().Full {
		t.Fatal("resumed above the forcible-clean ratio")
	}
	mem.SetCapacity(used * 2) // 50%
	waitFor(t, "disk ok", func() bool { return !s.DiskStatus().Full })
	put(t, s, newRecord("T", 0, []byte("again"), nil))
}

// TestSpaceTriggeredCleanup: above diskMaxUsedSpaceRatio expired segments
// go at any hour; above the forcible ratio even young ones go.
func TestSpaceTriggeredCleanup(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DeleteWhen = otherHour(time.Now())
	s := openStore(t, cfg)
	fillSegments(t, s, 300)
	d, _ := mem.DiskUsage("/")
	used := d.Used
	mem.SetCapacity(used * 100 / 80) // 80%: over 75, under 85; segments are young
	var lastMin int64 = -1
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() != 0 {
		t.Fatal("young segments deleted at 80%")
	}
	mem.SetCapacity(used * 100 / 87) // 87%: forcible
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() == 0 {
		t.Fatal("nothing deleted at 87%")
	}
	if s.DiskStatus().Full {
		t.Fatal("disk marked full below the warning level")
	}
	if s.MinOffset("T", 0) == 0 {
		t.Fatal("queue min offset not moved")
	}
}
