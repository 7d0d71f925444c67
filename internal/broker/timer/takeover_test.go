package timer

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestTakeover: a promoted broker's timer, given the old master's
// checkpoint (queue offset 3, watermark at 10 s), re-reads the timer
// queue from its start and delivers, each once: the message the old
// master filed and had not delivered yet (due 20 s), the one it never
// read (offset 3, due 5 s: past the watermark, so delivered at once);
// and not the two it delivered (offsets 0 and 1, due 2 s and 8 s).
func TestTakeover(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	clk := &fakeClock{}
	clk.ms.Store(1_000_000)
	base := clk.now()
	at := func(d time.Duration) int64 { return base.Add(d).UnixMilli() }
	putHeld(t, st, "T", at(2*time.Second), "delivered-1", base)
	putHeld(t, st, "T", at(8*time.Second), "delivered-2", base)
	putHeld(t, st, "T", at(20*time.Second), "filed-not-due", base)
	putHeld(t, st, "T", at(5*time.Second), "never-read", base)
	waitHeld(t, st, 4)

	clk.add(10 * time.Second)
	s, err := New(Config{Store: st, Dir: filepath.Join(dir, "timerbuckets"), BucketWidth: time.Second,
		CheckpointInterval: 50 * time.Millisecond, Now: clk.now,
		Takeover: &Checkpoint{EnqueueOffset: 3, WatermarkMs: at(10 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	catchUp(t, s)
	round(t, s)
	if got := bodies(t, st, "T"); !slices.Equal(got, []string{"never-read"}) {
		t.Fatalf("delivered at the takeover: %v, want [never-read]", got)
	}
	clk.add(10 * time.Second)
	round(t, s)
	if got := bodies(t, st, "T"); !slices.Equal(got, []string{"never-read", "filed-not-due"}) {
		t.Fatalf("delivered after 20 s: %v, want [never-read filed-not-due]", got)
	}
	if m := s.Metrics()["T"]; m.Count != 0 {
		t.Fatalf("pending count %d after both deliveries, want 0", m.Count)
	}

	// The checkpoint it saves is its own: a restart goes on from it, with
	// no takeover and nothing delivered again.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := newService(t, st, dir, clk.now)
	defer s2.Close()
	catchUp(t, s2)
	round(t, s2)
	if got := bodies(t, st, "T"); len(got) != 2 {
		t.Fatalf("after a restart: %v, want the same two", got)
	}
}
