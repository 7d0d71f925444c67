package store

import (
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// TestDeleteExpiredManually: outside deleteWhen, DELETE_EXPIRED_COMMITLOG's
// trigger makes the next rounds delete expired segments (only those), for
// manualDeleteRounds rounds.
func TestDeleteExpiredManually(t *testing.T) {
	clock := newSteppedClock()
	cfg := testConfig(vfs.NewMem())
	cfg.Clock = clock.Now
	cfg.DeleteWhen = otherHour(clock.Now())
	s := openStore(t, cfg)
	fillSegments(t, s, 200)
	segs := len(s.log.Segments())
	if segs < 3 {
		t.Fatalf("%d segments, want at least 3", segs)
	}
	var lastMin int64 = -1
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() != 0 {
		t.Fatal("segments deleted outside deleteWhen")
	}

	// Nothing has expired yet: a manual round keeps every segment.
	s.DeleteExpiredManually()
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() != 0 {
		t.Fatal("manual delete removed unexpired segments")
	}
	if got := s.manualDeletes.Load(); got != manualDeleteRounds-1 {
		t.Fatalf("%d manual rounds left, want %d", got, manualDeleteRounds-1)
	}

	clock.Advance(DefaultFileReservedTime + time.Hour)
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() == 0 {
		t.Fatal("expired segments kept in a manual round")
	}
	if s.MinOffset("T", 0) == 0 {
		t.Fatal("queue min offset not moved after the manual delete")
	}

	// Once the rounds are used up, the hour rules again.
	for s.manualDeletes.Load() > 0 {
		s.cleanOnce(&lastMin)
	}
	fillSegments(t, s, 200)
	before := s.CommitLogMinOffset()
	clock.Advance(DefaultFileReservedTime + time.Hour)
	s.cleanOnce(&lastMin)
	if s.CommitLogMinOffset() != before {
		t.Fatal("expired segments deleted outside deleteWhen after the manual rounds ended")
	}
}
