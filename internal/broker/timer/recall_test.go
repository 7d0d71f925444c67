package timer

import (
	"context"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// putHeldID holds a message with UNIQ_KEY id (what a recall names).
func putHeldID(t *testing.T, st *store.Store, topic, id string, deliverMs int64, now time.Time) {
	t.Helper()
	props := message.SetProperty("", message.PropertyUniqClientMessageIDKeyIdx, id)
	props = message.SetProperty(props, message.PropertyTimerDeliverMS, strconv.FormatInt(deliverMs, 10))
	rec := message.Record{Topic: topic, QueueID: 1, Body: []byte(id), Properties: props,
		BornHost: netip.MustParseAddrPort("10.0.0.1:5000"), BornTimestamp: now.UnixMilli()}
	if st := Hold(&rec, now, Policy{Enabled: true, MaxDelay: 400 * 24 * time.Hour}); st != Held {
		t.Fatalf("hold: %v", st)
	}
	if res := st.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true}); res.Status != store.PutOK {
		t.Fatalf("put: %v", res.Status)
	}
}

// putMarker puts the recall marker of the message id due at deliverMs,
// as the recall processor does, and returns the handle it used.
func putMarker(t *testing.T, st *store.Store, topic, id string, deliverMs int64, now time.Time) RecallHandle {
	t.Helper()
	h, err := DecodeRecallHandle(EncodeRecallHandle(topic, "b1", deliverMs, id))
	if err != nil {
		t.Fatal(err)
	}
	rec := RecallMarker(h, "PG", netip.MustParseAddrPort("10.0.0.1:5000"), now)
	if res := st.PutMessage(context.Background(), &rec, store.PutOptions{NoWait: true}); res.Status != store.PutOK {
		t.Fatalf("put marker: %v", res.Status)
	}
	return h
}

func bodies(t *testing.T, st *store.Store, topic string) []string {
	var out []string
	for _, r := range delivered(t, st, topic) {
		out = append(out, string(r.Body))
	}
	return out
}

// TestRecall: a recalled message is never delivered (the messages around
// it are); recalling after the time was reached is TooLate; a marker is
// never delivered; the recall survives a restart, from the recalls file
// (marker filed before the stop) or from the timer queue (marker not yet
// read).
func TestRecall(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	clock := &fakeClock{}
	clock.ms.Store(time.Now().UnixMilli())
	start := clock.now()
	at := func(d time.Duration) int64 { return start.Add(d).UnixMilli() }
	svc := newService(t, st, dir, clock.now)

	putHeldID(t, st, "R", "before", at(9*time.Second), start)
	putHeldID(t, st, "R", "recalled", at(10*time.Second), start)
	putHeldID(t, st, "R", "after", at(10*time.Second+time.Millisecond), start)
	putHeldID(t, st, "R", "late", at(12*time.Second), start)
	putHeldID(t, st, "R", "filed", at(20*time.Second), start)
	putHeldID(t, st, "R", "queued", at(21*time.Second), start)
	putHeldID(t, st, "R", "kept", at(22*time.Second), start)
	h := putMarker(t, st, "R", "recalled", at(10*time.Second), start)
	if got := svc.Recall(h.Topic, h.MessageID, h.DeliverMs()); got != Recalled {
		t.Fatalf("Recall before the time: %v", got)
	}
	putMarker(t, st, "R", "filed", at(20*time.Second), start)
	waitHeld(t, st, 9)
	catchUp(t, svc)
	if got := svc.Recall("R", "filed", at(20*time.Second)); got != Recalled {
		t.Fatalf("Recall of a filed marker: %v", got)
	}
	if s := svc.Stats(); s.Enqueued != 7 {
		t.Fatalf("enqueued %d, want the 7 messages (markers are not entries)", s.Enqueued)
	}
	clock.add(12 * time.Second)
	wait.For(t, 5*time.Second, "3 deliveries", func() bool { round(t, svc); return len(bodies(t, st, "R")) == 3 })
	if got := bodies(t, st, "R"); !slices.Equal(got, []string{"before", "after", "late"}) {
		t.Fatalf("delivered %v, want before, after, late (recalled dropped)", got)
	}
	if got := svc.Recall("R", "late", at(12*time.Second)); got != TooLate {
		t.Fatalf("Recall after delivery: %v, want TooLate", got)
	}
	if s := svc.Stats(); s.Recalled != 1 || s.Delivered != 3 {
		t.Fatalf("stats %+v", s)
	}
	// The recall of "filed" is in the recalls file after the save; the
	// marker of "queued" is put and recalled but the service stops before
	// reading it.
	clock.add(time.Second)
	round(t, svc)
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	h = putMarker(t, st, "R", "queued", at(21*time.Second), start)
	waitHeld(t, st, 10)

	svc2 := newService(t, st, dir, clock.now)
	defer svc2.Close()
	if got := svc2.Stats().EnqueueOffset; got != 9 {
		t.Fatalf("restart reads the queue from %d, want 9 (after the filed marker)", got)
	}
	catchUp(t, svc2)
	clock.add(10 * time.Second)
	wait.For(t, 5*time.Second, "4 deliveries", func() bool { round(t, svc2); return len(bodies(t, st, "R")) == 4 })
	if got := bodies(t, st, "R"); !slices.Equal(got, []string{"before", "after", "late", "kept"}) {
		t.Fatalf("delivered %v after the restart, want only kept added", got)
	}
	if s := svc2.Stats(); s.Recalled != 2 {
		t.Fatalf("recalled %d after the restart, want 2", s.Recalled)
	}
	// Once the watermark passed them the recalls are dropped, and so is
	// the file.
	clock.add(time.Second)
	round(t, svc2)
	if names := timerFiles(t, dir); slices.Contains(names, recallsName) {
		t.Fatalf("timer directory %v: recalls file kept after every recalled time passed", names)
	}
}

func TestRecallHandle(t *testing.T) {
	enc := EncodeRecallHandle("TopicA", "broker-a", 1700000000000, "7F0000010001")
	// Java: Base64.getUrlEncoder() of "v1 TopicA broker-a 1700000000001 7F0000010001".
	if want := "djEgVG9waWNBIGJyb2tlci1hIDE3MDAwMDAwMDAwMDEgN0YwMDAwMDEwMDAx"; enc != want {
		t.Fatalf("handle %q, want %q", enc, want)
	}
	h, err := DecodeRecallHandle(enc)
	if err != nil || h != (RecallHandle{"TopicA", "broker-a", "1700000000001", "7F0000010001"}) || h.DeliverMs() != 1700000000000 {
		t.Fatalf("decode: %+v %v", h, err)
	}
	for _, bad := range []string{"", "!!!", "djIgYSBiIGMgZA==" /* v2 a b c d */, "djEgYSBiIGM=" /* v1 a b c */, "djEgYSBiIGMg" /* v1 a b c + trailing space */} {
		if _, err := DecodeRecallHandle(bad); err == nil || err.Error() != "recall handle is invalid" {
			t.Errorf("DecodeRecallHandle(%q) = %v, want recall handle is invalid", bad, err)
		}
	}
	if h, _ := DecodeRecallHandle("djEgYSBiIHggZA"); h.TimestampMs() != -1 { // v1 a b x d, unpadded
		t.Errorf("unparsable timestamp %d, want -1", h.TimestampMs())
	}
}
