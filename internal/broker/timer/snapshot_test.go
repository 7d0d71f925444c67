package timer

import (
	"fmt"
	"testing"
	"time"
)

// snapshotOf runs rounds until the snapshot is ready and returns it as
// "bound:count ..." for the non-zero ranges.
func snapshotOf(t *testing.T, s *Service) string {
	t.Helper()
	for range 100 {
		s.round()
		if b, ok := s.Snapshot(); ok {
			out := ""
			for _, x := range b {
				if x.Count != 0 {
					out += fmt.Sprintf("%d:%d ", x.BoundS, x.Count)
				}
			}
			return out
		}
	}
	t.Fatal("snapshot not ready after 100 rounds")
	return ""
}

// TestSnapshot: rocketmq_timer_message_snapshot's ranges (Java's
// timerDist) count the held messages by how far ahead they are due; a
// delivered message leaves its range; after a restart the counts are
// rebuilt from the bucket files; a message due more than 24 h ahead is
// counted once it comes within 24 h.
func TestSnapshot(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	clock := &fakeClock{}
	clock.ms.Store(time.Now().UnixMilli() / 1000 * 1000)
	svc := newService(t, st, dir, clock.now)
	if b, ok := svc.Snapshot(); ok || b != nil {
		t.Fatalf("snapshot before the first round: %v %v", b, ok)
	}
	if got := snapshotOf(t, svc); got != "" {
		t.Fatalf("empty timer: %q", got)
	}
	t0 := clock.now()
	for _, d := range []time.Duration{3 * time.Second, 30 * time.Second, 31 * time.Second, 10 * time.Minute, 2 * time.Hour, 30 * time.Hour} {
		putHeld(t, st, "S", t0.Add(d).UnixMilli(), d.String(), t0)
	}
	waitHeld(t, st, 6)
	if got, want := snapshotOf(t, svc), "5:1 60:2 900:1 14400:1 "; got != want {
		t.Fatalf("snapshot %q, want %q", got, want)
	}

	clock.add(4 * time.Second)
	if got, want := snapshotOf(t, svc), "60:2 900:1 14400:1 "; got != want || svc.Stats().Delivered != 1 {
		t.Fatalf("after the first delivery: snapshot %q, want %q; %d delivered", got, want, svc.Stats().Delivered)
	}

	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	svc = newService(t, st, dir, clock.now)
	defer svc.Close()
	if got, want := snapshotOf(t, svc), "60:2 900:1 14400:1 "; got != want {
		t.Fatalf("after a restart: snapshot %q, want %q", got, want)
	}

	// 7 h later the 30 h message is due in 23 h; the others are delivered.
	clock.add(7 * time.Hour)
	for i := 0; svc.Stats().Delivered < 4; i++ {
		if i == 1000 {
			t.Fatalf("%d delivered after 1000 rounds, want 4", svc.Stats().Delivered)
		}
		svc.round()
	}
	if got, want := snapshotOf(t, svc), "86400:1 "; got != want {
		t.Fatalf("7 h later: snapshot %q, want %q", got, want)
	}
}
