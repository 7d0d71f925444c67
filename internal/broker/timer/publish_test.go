package timer

import (
	"testing"
	"time"
)

// TestProgressPublishedOncePerRound: a round of the loop that advances
// the progress publishes it once, as one value (offset and watermark of
// the same round, which Stats reports); an idle round publishes nothing.
// Before, every round stored the offset and the watermark separately,
// advanced or not, and a reader between the two stores saw a mix of two
// rounds.
func TestProgressPublishedOncePerRound(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	clock := &fakeClock{}
	clock.ms.Store(time.Now().UnixMilli())
	svc := newService(t, st, dir, clock.now)
	defer svc.Close()
	now := clock.now()
	due := now.Add(100 * time.Millisecond).UnixMilli()
	putHeld(t, st, "T", due, "a", now)
	putHeld(t, st, "T", due, "b", now)
	waitHeld(t, st, 2)

	check := func(what string, wantPublications int64) {
		t.Helper()
		if n := svc.publications.Load(); n != wantPublications {
			t.Fatalf("%s: %d publications, want %d", what, n, wantPublications)
		}
		if got := svc.Stats(); got.EnqueueOffset != svc.prog.enqueueOffset || got.WatermarkMs != svc.prog.watermarkMs {
			t.Fatalf("%s: Stats reports offset %d watermark %d, the round's progress is %+v",
				what, got.EnqueueOffset, got.WatermarkMs, svc.prog)
		}
	}
	svc.round() // files both: the offset advances
	check("filing round", 1)
	if svc.prog.enqueueOffset != 2 {
		t.Fatalf("enqueue offset %d after filing two", svc.prog.enqueueOffset)
	}
	svc.round() // same clock, nothing new
	check("idle round", 1)

	clock.add(200 * time.Millisecond)
	svc.round() // delivers both: the watermark advances
	if n := svc.Stats().Delivered; n != 2 {
		t.Fatalf("%d delivered, want 2", n)
	}
	check("delivering round", 2)
	if svc.Stats().WatermarkMs <= due {
		t.Fatalf("watermark %d not past the delivered messages (due %d)", svc.Stats().WatermarkMs, due)
	}
	for i := range 5 {
		svc.round() // idle, same clock
		check("idle round", 2+int64(i))
		clock.add(10 * time.Millisecond)
		svc.round() // only the clock moved: one publication
		check("clock round", 3+int64(i))
	}
}
