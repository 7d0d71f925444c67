package schedule

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

var testLevels = []time.Duration{300 * time.Millisecond, 700 * time.Millisecond, time.Second}

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(store.Config{
		Dir: dir, FS: vfs.Default, SegmentSize: 1 << 20, CQUnitsPerFile: 1000, MaxMessageSize: 64 << 10,
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), DelayLevels: testLevels,
		FlushInterval: 20 * time.Millisecond, CQFlushInterval: 20 * time.Millisecond, CleanInterval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitConsumed waits until every level's offset has reached the end of its
// queue: everything the service will ever deliver from them is delivered.
func waitConsumed(t *testing.T, svc *Service, st *store.Store) {
	t.Helper()
	for i := range svc.cfg.Levels {
		level := int32(i + 1)
		wait.For(t, 5*time.Second, fmt.Sprintf("level %d consumed", level), func() bool {
			off, _ := svc.cfg.Offsets.Get(level)
			return off >= st.MaxOffset(message.ScheduleTopic, level-1)
		})
	}
}

func newService(t *testing.T, st *store.Store, dir string) *Service {
	t.Helper()
	offs, err := meta.OpenDelayOffsets(meta.Options{Dir: filepath.Join(dir, "config"), FS: vfs.Default})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Offsets: offs, Levels: testLevels, PersistInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func putDelayed(t *testing.T, st *store.Store, topic string, level int, body string) int64 {
	t.Helper()
	props := message.SetProperty("", message.PropertyTags, "TagA")
	props = message.SetProperty(props, "color", "blue")
	props = message.SetProperty(props, message.PropertyDelayTimeLevel, strconv.Itoa(level))
	rec := message.Record{Topic: topic, QueueID: 2, Body: []byte(body), BornTimestamp: time.Now().UnixMilli(),
		BornHost: netip.MustParseAddrPort("10.0.0.1:5000"), ReconsumeTimes: 1, Properties: props}
	res := st.PutMessage(context.Background(), &rec, store.PutOptions{})
	if res.Status != store.PutOK {
		t.Fatalf("put: %v", res.Status)
	}
	return res.StoreTimestamp
}

// delivered reads topic/2 from offset 0 and returns the records.
func delivered(t *testing.T, st *store.Store, topic string) []message.Record {
	t.Helper()
	res, err := st.GetMessage("", topic, 2, 0, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	var out []message.Record
	for _, m := range res.Messages {
		r, _, err := message.DecodeRecord(m.Bytes, true)
		if err != nil {
			t.Fatal(err)
		}
		r.Body = bytes.Clone(r.Body) // the read buffer goes back to its pool
		out = append(out, r)
	}
	return out
}

func TestDeliversOnTimeWithPropertiesKept(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	svc := newService(t, st, dir)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()

	stored := map[string]int64{}
	for i, level := range []int{1, 2, 3, 9} { // 9: beyond the max, capped to 3
		body := "m" + strconv.Itoa(i)
		stored[body] = putDelayed(t, st, "T", level, body)
	}
	wait.For(t, 5*time.Second, "4 deliveries", func() bool { return len(delivered(t, st, "T")) == 4 })
	want := map[string]time.Duration{"m0": testLevels[0], "m1": testLevels[1], "m2": testLevels[2], "m3": testLevels[2]}
	for _, r := range delivered(t, st, "T") {
		body := string(r.Body)
		due := stored[body] + want[body].Milliseconds()
		if r.StoreTimestamp < due {
			t.Errorf("%s delivered at %d, before due %d", body, r.StoreTimestamp, due)
		}
		if r.StoreTimestamp > due+1000 {
			t.Errorf("%s delivered at %d, more than 1 s after due %d", body, r.StoreTimestamp, due)
		}
		if _, ok := message.Property(r.Properties, message.PropertyDelayTimeLevel); ok {
			t.Errorf("%s: DELAY kept: %q", body, r.Properties)
		}
		if v, _ := message.Property(r.Properties, "color"); v != "blue" {
			t.Errorf("%s: property lost: %q", body, r.Properties)
		}
		if v, _ := message.Property(r.Properties, message.PropertyRealTopic); v != "T" {
			t.Errorf("%s: REAL_TOPIC %q", body, v)
		}
		if r.Topic != "T" || r.QueueID != 2 || r.ReconsumeTimes != 1 || r.BornHost.Port() != 5000 {
			t.Errorf("%s: fields not restored: %+v", body, r)
		}
	}
	// The dispatcher recomputed the tags code from TAGS.
	res, err := st.GetMessage("", "T", 2, 0, 8, store.NewTagFilter(false, "TagA"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Messages); n != 4 {
		t.Errorf("tag filter matched %d of 4", n)
	}
	res.Release()
}

// TestRestartLosesNothingAndDuplicatesNothing: messages pending on every
// level when the service stops cleanly are all delivered by the next
// service, once.
func TestRestartLosesNothingAndDuplicatesNothing(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	svc := newService(t, st, dir)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		putDelayed(t, st, "R", 1, "early"+strconv.Itoa(i))
	}
	wait.For(t, 5*time.Second, "early deliveries", func() bool { return len(delivered(t, st, "R")) == 3 })
	for i := range 9 {
		putDelayed(t, st, "R", 1+i%3, "late"+strconv.Itoa(i))
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(delivered(t, st, "R")); n >= 12 {
		t.Fatalf("all delivered before the restart (%d): the test proves nothing", n)
	}
	svc = newService(t, st, dir)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wait.For(t, 5*time.Second, "12 deliveries", func() bool { return len(delivered(t, st, "R")) >= 12 })
	// A duplicate comes from re-reading a level below its saved offset:
	// once every level has passed its queue's end, there is none to come.
	waitConsumed(t, svc, st)
	seen := map[string]int{}
	for _, r := range delivered(t, st, "R") {
		seen[string(r.Body)]++
	}
	if len(seen) != 12 {
		t.Fatalf("delivered %d distinct of 12: %v", len(seen), seen)
	}
	for body, n := range seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", body, n)
		}
	}
}

func TestRestoreRejectsBadRecords(t *testing.T) {
	if _, err := Restore([]byte{1, 2, 3}); err == nil {
		t.Error("garbage accepted")
	}
	rec := message.Record{Topic: message.ScheduleTopic, Body: []byte("x"), Properties: message.SetProperty("", "a", "b")}
	raw := message.AppendRecord(nil, &rec)
	if _, err := Restore(raw); err == nil {
		t.Error("record without REAL_TOPIC accepted")
	}
	rec.Properties = message.SetProperty(message.SetProperty("", message.PropertyRealTopic, "T"), message.PropertyRealQueueID, "-4")
	if _, err := Restore(message.AppendRecord(nil, &rec)); err == nil {
		t.Error("negative REAL_QID accepted")
	}
}

func TestNewChecksConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("empty config accepted")
	}
}

// TestOffsetBeyondQueueGoesOnFromTheEnd: progress saved beyond the queue
// (its tail lost in a crash) resumes at the queue's end, not at 0.
func TestOffsetBeyondQueueGoesOnFromTheEnd(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	putDelayed(t, st, "B", 1, "old0")
	putDelayed(t, st, "B", 1, "old1")
	wait.For(t, 5*time.Second, "dispatch", func() bool { return st.MaxOffset(message.ScheduleTopic, 0) == 2 })
	svc := newService(t, st, dir)
	svc.cfg.Offsets.Set(1, 100)
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wait.For(t, 5*time.Second, "offset corrected", func() bool { off, _ := svc.cfg.Offsets.Get(1); return off == 2 })
	putDelayed(t, st, "B", 1, "new")
	wait.For(t, 5*time.Second, "new delivered", func() bool { return len(delivered(t, st, "B")) == 1 })
	waitConsumed(t, svc, st) // nothing left that could still be delivered
	got := delivered(t, st, "B")
	if len(got) != 1 || string(got[0].Body) != "new" {
		t.Fatalf("delivered %d messages, first %q", len(got), got[0].Body)
	}
}
