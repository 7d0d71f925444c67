package store

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store/segment"
	"github.com/rocketd/rocketd/internal/testutil/wait"
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
	// Epochs from three masters; those whose data retention removes go.
	for i, start := range []int64{0, 100_000, s.CommitLogMaxOffset() - 1000} {
		if err := s.Epochs().Append(int32(i+1), start); err != nil {
			t.Fatal(err)
		}
	}
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
	segs := s.log.Segments()
	if len(segs) > 2 { // the current one, perhaps a preallocated next one
		t.Fatalf("segments left: %v", segs)
	}
	if s.CommitLogMinOffset() == 0 {
		t.Fatal("nothing deleted")
	}
	// Epoch 1 (ending at 100000) is gone; epoch 2 still has data.
	if es := s.Epochs().Entries(); len(es) != 2 || es[0].Epoch != 2 || es[0].EndOffset <= s.CommitLogMinOffset() {
		t.Fatalf("epochs after retention removed up to %d: %v, want epochs 2 and 3", s.CommitLogMinOffset(), es)
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
	wait.For(t, 10*time.Second, "disk full", func() bool { return s.DiskStatus().Full })
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
	// DiskStatus looks at the disk itself: no cleanup round to wait for.
	mem.SetCapacity(used * 100 / 88)
	if st := s.DiskStatus(); !st.Full || st.UsedRatio < 85 {
		t.Fatalf("status %+v at 88%% in use: want still full (resumed above the forcible-clean ratio?)", st)
	}
	mem.SetCapacity(used * 2) // 50%
	wait.For(t, 10*time.Second, "disk ok", func() bool { return !s.DiskStatus().Full })
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

// logCapture is slog text output that the store's goroutines may write
// while a test reads it.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines returns the captured lines that contain every one of parts.
func (l *logCapture) lines(parts ...string) []string {
	var out []string
next:
	for _, line := range strings.Split(l.String(), "\n") {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

func (l *logCapture) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// settleSegments waits until the segment after the CommitLog's last one is
// preallocated, so that disk use changes only by what the test does.
func settleSegments(t *testing.T, mem *vfs.MemFS, s *Store) {
	t.Helper()
	segs := s.log.Segments()
	next := path.Join(testDir, CommitLogDir, segment.Name(segs[len(segs)-1]+s.cfg.SegmentSize))
	wait.For(t, 10*time.Second, "next segment preallocated", func() bool {
		_, err := mem.Stat(next)
		return err == nil
	})
}

// setDiskUse sizes the simulated disk so that what is stored now is pct
// percent of it. The store may be creating a file meanwhile (the
// allocator prepares the next segment in the background, and retries one
// that did not fit once space is back), so it sizes again until the use
// it reads is the one it set.
func setDiskUse(t *testing.T, mem *vfs.MemFS, pct float64) {
	t.Helper()
	wait.For(t, 10*time.Second, fmt.Sprintf("disk use %.0f%%", pct), func() bool {
		d, err := mem.DiskUsage("/")
		if err != nil {
			t.Fatal(err)
		}
		mem.SetCapacity(uint64(float64(d.Used) * 100 / pct))
		now, _ := mem.DiskUsage("/")
		got := now.UsedPercent()
		return got >= pct-0.1 && got <= pct+0.1
	})
}

// ageSegments makes the first n CommitLog segments look written 100 hours
// ago (older than the 72 h fileReservedTime).
func ageSegments(t *testing.T, mem *vfs.MemFS, s *Store, n int) {
	t.Helper()
	for _, start := range s.log.Segments()[:n] {
		if err := mem.SetModTime(path.Join(testDir, CommitLogDir, segment.Name(start)), time.Now().Add(-100*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
}

// openAgedStore opens a store with the given disk settings whose log holds
// six segments, the first one expired; deleteWhen is never the hour now.
func openAgedStore(t *testing.T, tune func(*Config)) (*Store, *vfs.MemFS, *logCapture) {
	t.Helper()
	mem := vfs.NewMem()
	logs := &logCapture{}
	cfg := testConfig(mem)
	cfg.DeleteWhen = otherHour(time.Now())
	cfg.Logger = logs.logger()
	if tune != nil {
		tune(&cfg)
	}
	s := openStore(t, cfg)
	fillSegments(t, s, 300)
	if n := len(s.log.Segments()); n < 5 {
		t.Fatalf("%d segments, want at least 5", n)
	}
	settleSegments(t, mem, s)
	ageSegments(t, mem, s, 1)
	return s, mem, logs
}

// TestExpiredCleanupAboveMaxUsedRatio: outside deleteWhen, expired segments
// go once disk use is above diskMaxUsedSpaceRatio (75 %), logged as expired;
// young ones stay below the forcible ratio.
func TestExpiredCleanupAboveMaxUsedRatio(t *testing.T) {
	s, mem, logs := openAgedStore(t, nil)
	var lastMin int64 = -1
	setDiskUse(t, mem, 70)
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() != 0 {
		t.Fatal("expired segment deleted at 70% outside deleteWhen")
	}
	setDiskUse(t, mem, 80)
	s.cleanOnce(&lastMin)
	s.cleanOnce(&lastMin) // a second round finds nothing more to delete
	if got := s.CommitLogMinOffset(); got != s.cfg.SegmentSize {
		t.Fatalf("min offset %d after deleting the expired segment, want %d", got, s.cfg.SegmentSize)
	}
	if l := logs.lines("segment: removing file", "why=expired"); len(l) != 1 {
		t.Fatalf("expired removals logged: %q\n%s", l, logs)
	}
	if l := logs.lines("level=INFO", "store: deleted expired commitlog segments", "count=1"); len(l) != 1 {
		t.Fatalf("no summary of the expired deletion:\n%s", logs)
	}
	if l := logs.lines("level=WARN"); len(l) != 0 {
		t.Fatalf("warnings for an expiry-only cleanup: %q", l)
	}
	if s.MinOffset("T", 0) == 0 {
		t.Fatal("queue min offset not moved")
	}
}

// TestForcedCleanupWarns: above diskSpaceCleanForciblyRatio (85 %) the
// oldest segments go whatever their age (up to DeleteFilesBatchMax a
// round); the unexpired ones are logged at Warn with their offsets and the
// disk use, and their removal is not called expiry.
func TestForcedCleanupWarns(t *testing.T) {
	s, mem, logs := openAgedStore(t, func(c *Config) { c.DeleteFilesBatchMax = 3 })
	var lastMin int64 = -1
	setDiskUse(t, mem, 87)
	s.cleanOnce(&lastMin)
	size := s.cfg.SegmentSize
	if got := s.CommitLogMinOffset(); got != 3*size {
		t.Fatalf("min offset %d after a forced round of 3, want %d", got, 3*size)
	}
	if s.DiskStatus().Full {
		t.Fatal("disk marked full below the warning ratio")
	}
	warn := logs.lines("level=WARN", "deleted commitlog segments before their retention time")
	if len(warn) != 1 {
		t.Fatalf("forced deletion warnings: %q\n%s", warn, logs)
	}
	for _, want := range []string{"may hold messages not yet consumed", "count=2",
		fmt.Sprintf("fromOffset=%d", size), fmt.Sprintf("toOffset=%d", 3*size),
		"usedPercent=87 ", "diskSpaceCleanForciblyRatio=85"} {
		if !strings.Contains(warn[0], want) {
			t.Errorf("forced deletion warning lacks %q: %s", want, warn[0])
		}
	}
	if l := logs.lines("segment: removing file", "why=expired"); len(l) != 1 || !strings.Contains(l[0], segment.Name(0)) {
		t.Fatalf("expired removals: %q", l)
	}
	if l := logs.lines("segment: removing file", `why="not expired; removed to free disk space"`); len(l) != 2 {
		t.Fatalf("forced removals: %q\n%s", l, logs)
	}
	// Below the forcible ratio again, young segments stay.
	setDiskUse(t, mem, 80)
	s.cleanOnce(&lastMin)
	if got := s.CommitLogMinOffset(); got != 3*size {
		t.Fatalf("min offset %d at 80%%, want %d", got, 3*size)
	}
}

// TestForcedCleanupOff: with cleanFileForciblyEnable=false nothing
// unexpired is deleted however full the disk; expired segments still go,
// a Warn says once that space is not being freed, and puts are refused
// above the warning ratio.
func TestForcedCleanupOff(t *testing.T) {
	s, mem, logs := openAgedStore(t, func(c *Config) { c.KeepUnexpiredSegments = true })
	var lastMin int64 = -1
	size := s.cfg.SegmentSize
	setDiskUse(t, mem, 87)
	s.cleanOnce(&lastMin)
	if got := s.CommitLogMinOffset(); got != size {
		t.Fatalf("min offset %d at 87%% without forced cleanup, want %d (the expired segment only)", got, size)
	}
	setDiskUse(t, mem, 95)
	for range 3 {
		s.cleanOnce(&lastMin)
	}
	if got := s.CommitLogMinOffset(); got != size {
		t.Fatalf("min offset %d at 95%% without forced cleanup, want %d", got, size)
	}
	if l := logs.lines("not expired"); len(l) != 0 {
		t.Fatalf("unexpired segments removed: %q", l)
	}
	if l := logs.lines("before their retention time"); len(l) != 0 {
		t.Fatalf("forced deletion logged: %q", l)
	}
	if l := logs.lines("level=WARN", "cleanFileForciblyEnable=false keeps segments"); len(l) != 1 {
		t.Fatalf("kept-segments warnings: %q\n%s", l, logs)
	}
	if !s.DiskStatus().Full {
		t.Fatal("disk not marked full at 95%")
	}
	res := s.PutMessage(context.Background(), newRecord("T", 0, []byte("x"), nil), PutOptions{})
	if res.Status != ServiceNotAvailable {
		t.Fatalf("put at 95%% without forced cleanup: %s", res.Status)
	}
	// Space back: puts resume, and the warning is re-armed for the next time.
	setDiskUse(t, mem, 50)
	s.cleanOnce(&lastMin)
	put(t, s, newRecord("T", 0, []byte("again"), nil))
	setDiskUse(t, mem, 87)
	s.cleanOnce(&lastMin)
	if l := logs.lines("level=WARN", "cleanFileForciblyEnable=false keeps segments"); len(l) != 2 {
		t.Fatalf("kept-segments warnings after a second episode: %q", l)
	}
}

// TestDiskRatiosAnyOrder: the ratios may come in any order, as in Java
// (diskMaxUsedSpaceRatio=88 used to stop rocketd: "disk ratios must
// grow"), and each decides what it decides in Java's CleanCommitLogService.
func TestDiskRatiosAnyOrder(t *testing.T) {
	t.Run("maxUsed88", func(t *testing.T) {
		s, mem, _ := openAgedStore(t, func(c *Config) { c.DiskMaxUsedSpaceRatio = 88 })
		var lastMin int64 = -1
		setDiskUse(t, mem, 84) // above the default 75, below 88 and 85
		s.cleanOnce(&lastMin)
		if s.CommitLogMinOffset() != 0 {
			t.Fatal("expired segment deleted below diskMaxUsedSpaceRatio=88")
		}
		setDiskUse(t, mem, 86) // above the forcible 85, below 88
		s.cleanOnce(&lastMin)
		if s.CommitLogMinOffset() < 2*s.cfg.SegmentSize {
			t.Fatalf("no forced deletion at 86%%: min offset %d", s.CommitLogMinOffset())
		}
	})
	t.Run("warningBelowForcibly", func(t *testing.T) {
		s, mem, _ := openAgedStore(t, func(c *Config) {
			c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio = 40, 60, 50
		})
		var lastMin int64 = -1
		setDiskUse(t, mem, 55) // above warning 50, below forcibly 60
		if !s.DiskStatus().Full {
			t.Fatal("disk not marked full above the warning ratio")
		}
		s.cleanOnce(&lastMin)
		if s.CommitLogMinOffset() < 2*s.cfg.SegmentSize {
			t.Fatalf("no forced deletion above the warning ratio: min offset %d", s.CommitLogMinOffset())
		}
		setDiskUse(t, mem, 45)
		s.cleanOnce(&lastMin)
		if s.DiskStatus().Full {
			t.Fatal("disk still full at or below both ratios")
		}
	})
}
