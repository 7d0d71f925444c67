package store

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/consumequeue"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

func TestPutGetRoundTrip(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	var results []PutResult
	for i := 0; i < 50; i++ {
		r := newRecord("TopicA", int32(i%2), bodyFor(i, 100+i), map[string]string{"TAGS": "t" + strconv.Itoa(i%3)})
		res := put(t, s, r)
		if res.QueueOffset != int64(i/2) {
			t.Fatalf("put %d: queue offset %d", i, res.QueueOffset)
		}
		results = append(results, res)
	}
	waitDispatched(t, s)
	if s.DispatchBehindBytes() != 0 {
		t.Fatalf("dispatch behind %d", s.DispatchBehindBytes())
	}
	for qid := int32(0); qid < 2; qid++ {
		if s.MaxOffset("TopicA", qid) != 25 || s.MinOffset("TopicA", qid) != 0 {
			t.Fatalf("queue %d: min %d max %d", qid, s.MinOffset("TopicA", qid), s.MaxOffset("TopicA", qid))
		}
		r, err := s.GetMessage("g", "TopicA", qid, 3, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != Found || len(r.Messages) != 10 || r.NextBeginOffset != 13 {
			t.Fatalf("get: %s %d msgs next %d", r.Status, len(r.Messages), r.NextBeginOffset)
		}
		for j, m := range r.Messages {
			i := (3+j)*2 + int(qid)
			rec, _, err := message.DecodeRecord(m.Bytes, true)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.Body, bodyFor(i, 100+i)) || rec.QueueOffset != int64(3+j) ||
				m.PhysicalOffset != results[i].WroteOffset || len(m.Bytes) != int(results[i].WroteBytes) {
				t.Fatalf("message %d: queue offset %d, physical %d", i, rec.QueueOffset, m.PhysicalOffset)
			}
			if m.TagsCode != message.TagsCode("t"+strconv.Itoa(i%3)) {
				t.Fatalf("tags code %d", m.TagsCode)
			}
		}
		r.Release()
	}
	// The offset msgId resolves.
	_, off, err := message.ParseOffsetMsgID(results[7].MsgID)
	if err != nil {
		t.Fatal(err)
	}
	rec, buf, err := s.LookMessageByOffset(off)
	if err != nil || !bytes.Equal(rec.Body, bodyFor(7, 107)) {
		t.Fatalf("look by offset: %v", err)
	}
	buf.Release()
}

func TestGetMessageStatusTable(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := openStore(t, cfg)
	for i := 0; i < 5; i++ {
		put(t, s, newRecord("T", 0, bodyFor(i, 10), nil))
	}
	waitDispatched(t, s)
	s.cqs.GetOrCreate("Empty", 0)
	cases := []struct {
		topic  string
		offset int64
		status GetStatus
		next   int64
		n      int
	}{
		{"Unknown", 5, NoMatchedLogicQueue, 0, 0},
		{"Empty", 3, NoMessageInQueue, 0, 0},
		{"T", 5, OffsetOverflowOne, 5, 0},
		{"T", 9, OffsetOverflowBadly, 5, 0}, // min is 0: next = max all the same (5.x)
		{"T", 0, Found, 5, 5},
		{"T", 4, Found, 5, 1},
	}
	for _, c := range cases {
		r, err := s.GetMessage("g", c.topic, 0, c.offset, 32, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != c.status || r.NextBeginOffset != c.next || len(r.Messages) != c.n {
			t.Errorf("%s@%d: got %s next %d n %d; want %s next %d n %d", c.topic, c.offset,
				r.Status, r.NextBeginOffset, len(r.Messages), c.status, c.next, c.n)
		}
		r.Release()
	}
	// maxMsgNums bounds the batch and nextBeginOffset.
	r, _ := s.GetMessage("g", "T", 0, 1, 2, nil)
	if r.Status != Found || len(r.Messages) != 2 || r.NextBeginOffset != 3 {
		t.Fatalf("maxMsgNums: %s %d next %d", r.Status, len(r.Messages), r.NextBeginOffset)
	}
	r.Release()
}

func TestGetMessageAfterRetentionStatuses(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := openStore(t, cfg)
	body := bodyFor(0, 1000)
	for i := 0; i < 40; i++ { // the first segment
		put(t, s, newRecord("Old", 0, body, nil))
	}
	for i := 0; i < 200; i++ { // ~220 KB: 4 more segments
		put(t, s, newRecord("T", 0, body, nil))
	}
	waitDispatched(t, s)
	rm, err := s.log.DeleteExpired(time.Now().Add(time.Hour), true, 2)
	if err != nil || rm.Files != 2 {
		t.Fatalf("delete: %+v %v", rm, err)
	}
	// The queue still claims offset 0: its records are gone.
	r, _ := s.GetMessage("g", "Old", 0, 0, 4, nil)
	if r.Status != MessageWasRemoving || r.NextBeginOffset != 40 {
		t.Fatalf("removed data: %s next %d", r.Status, r.NextBeginOffset)
	}
	r.Release()
	// Once something is found, removed records before it are skipped.
	r, _ = s.GetMessage("g", "T", 0, 0, 4, nil)
	if r.Status != Found || r.Messages[0].QueueOffset == 0 {
		t.Fatalf("skip removed: %s", r.Status)
	}
	r.Release()
	var last int64 = -1
	s.cleanOnce(&last)
	minOff := s.MinOffset("T", 0)
	if minOff == 0 {
		t.Fatal("min offset not moved by cleanup")
	}
	for _, c := range []struct {
		offset int64
		status GetStatus
		next   int64
	}{
		{0, OffsetTooSmall, minOff},
		{500, OffsetOverflowBadly, 200}, // min > 0: next = max
		{minOff, Found, minOff + 32},
	} {
		r, _ := s.GetMessage("g", "T", 0, c.offset, 32, nil)
		if r.Status != c.status || r.NextBeginOffset != c.next {
			t.Errorf("offset %d: %s next %d; want %s next %d", c.offset, r.Status, r.NextBeginOffset, c.status, c.next)
		}
		r.Release()
	}
}

func TestTagFilter(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	tags := []string{"A", "B", "A", "C", "", "A"}
	for i, tag := range tags {
		props := map[string]string{}
		if tag != "" {
			props["TAGS"] = tag
		}
		put(t, s, newRecord("T", 0, bodyFor(i, 20), props))
	}
	waitDispatched(t, s)
	r, _ := s.GetMessage("g", "T", 0, 0, 32, NewTagFilter(true, "A", "C"))
	if r.Status != Found || len(r.Messages) != 4 || r.NextBeginOffset != 6 {
		t.Fatalf("A||C: %s %d next %d", r.Status, len(r.Messages), r.NextBeginOffset)
	}
	want := []int64{0, 2, 3, 5}
	for i, m := range r.Messages {
		if m.QueueOffset != want[i] {
			t.Fatalf("message %d at queue offset %d", i, m.QueueOffset)
		}
	}
	r.Release()
	r, _ = s.GetMessage("g", "T", 0, 0, 32, NewTagFilter(true, "Z"))
	if r.Status != NoMatchedMessage || r.NextBeginOffset != 6 {
		t.Fatalf("Z: %s next %d", r.Status, r.NextBeginOffset)
	}
	r.Release()
	r, _ = s.GetMessage("g", "T", 0, 0, 32, NewTagFilter(false, "*"))
	if len(r.Messages) != 6 {
		t.Fatalf("*: %d", len(r.Messages))
	}
	r.Release()
	// Exact: a tag whose hash collides with "A" is filtered on the record.
	// "Aa" and "BB" share Java's hash.
	put(t, s, newRecord("T", 1, []byte("x"), map[string]string{"TAGS": "Aa"}))
	waitDispatched(t, s)
	r, _ = s.GetMessage("g", "T", 1, 0, 32, NewTagFilter(true, "BB"))
	if r.Status != NoMatchedMessage {
		t.Fatalf("collision with exact check: %s", r.Status)
	}
	r.Release()
	r, _ = s.GetMessage("g", "T", 1, 0, 32, NewTagFilter(false, "BB"))
	if r.Status != Found {
		t.Fatalf("collision without exact check: %s", r.Status)
	}
	r.Release()
}

func TestDelayAndTransactionDispatch(t *testing.T) {
	clock := newSteppedClock()
	cfg := testConfig(vfs.NewMem())
	cfg.Clock = clock.Now
	s := openStore(t, cfg)
	res := put(t, s, newRecord("T", 3, []byte("later"), map[string]string{"DELAY": "3", "TAGS": "x"}))
	waitDispatched(t, s)
	if s.MaxOffset(message.ScheduleTopic, 2) != 1 || s.MaxOffset("T", 3) != 0 {
		t.Fatal("delay message not parked in SCHEDULE_TOPIC_XXXX queue 2")
	}
	r, _ := s.GetMessage("g", message.ScheduleTopic, 2, 0, 1, nil)
	if r.Status != Found || r.Messages[0].TagsCode != res.StoreTimestamp+10_000 {
		t.Fatalf("delivery time: %s %d (store %d)", r.Status, r.Messages[0].TagsCode, res.StoreTimestamp)
	}
	r.Release()
	// Level above the max is capped at 2 h.
	res = put(t, s, newRecord("T", 3, []byte("much later"), map[string]string{"DELAY": "99"}))
	waitDispatched(t, s)
	r, _ = s.GetMessage("g", message.ScheduleTopic, 17, 0, 1, nil)
	if r.Status != Found || r.Messages[0].TagsCode != res.StoreTimestamp+2*3600_000 {
		t.Fatalf("capped level: %s", r.Status)
	}
	r.Release()

	prepared := newRecord("Half", 0, []byte("p"), nil)
	prepared.SysFlag = message.TransactionPreparedType
	put(t, s, prepared)
	committed := newRecord("Half", 0, []byte("c"), nil)
	committed.SysFlag = message.TransactionCommitType
	put(t, s, committed)
	rollback := newRecord("Half", 0, []byte("r"), nil)
	rollback.SysFlag = message.TransactionRollbackType
	put(t, s, rollback)
	waitDispatched(t, s)
	if m := s.MaxOffset("Half", 0); m != 1 {
		t.Fatalf("only the committed record is dispatched: max %d", m)
	}
}

func TestArrivalListener(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	type ev struct {
		topic string
		qid   int32
		off   int64
		tags  int64
	}
	var mu sync.Mutex
	var got []ev
	s.AddArrivalListener(func(topic string, qid int32, off, tags, ts int64) {
		if ts == 0 {
			t.Error("zero store time")
		}
		mu.Lock()
		got = append(got, ev{topic, qid, off, tags})
		mu.Unlock()
	})
	put(t, s, newRecord("L", 1, []byte("a"), map[string]string{"TAGS": "x"}))
	put(t, s, newRecord("L", 1, []byte("b"), nil))
	wait.For(t, 10*time.Second, "listener", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	want := []ev{{"L", 1, 0, message.TagsCode("x")}, {"L", 1, 1, 0}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %+v want %+v", i, got[i], want[i])
		}
	}
	// The unit is visible when the listener runs.
	s.AddArrivalListener(func(topic string, qid int32, off, tags, ts int64) {
		if s.MaxOffset(topic, qid) <= off {
			t.Errorf("listener called before the unit is visible")
		}
	})
	put(t, s, newRecord("L", 1, []byte("c"), nil))
	waitDispatched(t, s)
}

// TestOffsetByTimestampSameMillisecond: several messages stored in one
// millisecond; LOWER answers the first of them and UPPER the last, wherever
// the binary search lands (RocketMQ 5's BoundaryType).
func TestOffsetByTimestampSameMillisecond(t *testing.T) {
	clock := newSteppedClock()
	cfg := testConfig(vfs.NewMem())
	cfg.Clock = clock.Now
	s := openStore(t, cfg)
	var stamps []int64
	for i := 0; i < 23; i++ {
		if i == 0 || i == 3 || i == 17 {
			clock.Advance(100 * time.Millisecond)
		}
		stamps = append(stamps, put(t, s, newRecord("T", 0, []byte("x"), nil)).StoreTimestamp)
	}
	waitDispatched(t, s)
	for _, c := range []struct {
		at           int
		lower, upper int64
	}{{0, 0, 2}, {3, 3, 16}, {17, 17, 22}} {
		ts := stamps[c.at]
		if got := s.OffsetByTimestamp("T", 0, ts, BoundaryLower); got != c.lower {
			t.Errorf("lower at ts of %d: got %d want %d", c.at, got, c.lower)
		}
		if got := s.OffsetByTimestamp("T", 0, ts, BoundaryUpper); got != c.upper {
			t.Errorf("upper at ts of %d: got %d want %d", c.at, got, c.upper)
		}
	}
	if ParseBoundary("upper") != BoundaryUpper || ParseBoundary("") != BoundaryLower || ParseBoundary("LOWER") != BoundaryLower {
		t.Error("ParseBoundary")
	}
}

func TestOffsetByTimestamp(t *testing.T) {
	clock := newSteppedClock()
	cfg := testConfig(vfs.NewMem())
	cfg.Clock = clock.Now
	s := openStore(t, cfg)
	var stamps []int64
	for i := 0; i < 20; i++ {
		clock.Advance(100 * time.Millisecond)
		stamps = append(stamps, put(t, s, newRecord("T", 0, []byte("x"), nil)).StoreTimestamp)
	}
	waitDispatched(t, s)
	for i, ts := range stamps {
		if got := s.OffsetByTimestamp("T", 0, ts, BoundaryLower); got != int64(i) {
			t.Fatalf("exact %d: got %d", i, got)
		}
	}
	if got := s.OffsetByTimestamp("T", 0, stamps[4]+30, BoundaryLower); got != 4 {
		t.Fatalf("nearer left: %d", got)
	}
	if got := s.OffsetByTimestamp("T", 0, stamps[4]+70, BoundaryLower); got != 5 {
		t.Fatalf("nearer right: %d", got)
	}
	if got := s.OffsetByTimestamp("T", 0, stamps[0]-5000, BoundaryLower); got != 0 {
		t.Fatalf("before all: %d", got)
	}
	if got := s.OffsetByTimestamp("T", 0, stamps[19]+5000, BoundaryLower); got != 19 {
		t.Fatalf("after all: %d", got)
	}
	if got := s.EarliestMessageTime("T", 0); got != stamps[0] {
		t.Fatalf("earliest %d want %d", got, stamps[0])
	}
	if got := s.EarliestStoreTime(); got != stamps[0] {
		t.Fatalf("earliest store time %d", got)
	}
	if s.OffsetByTimestamp("Nope", 0, 1, BoundaryLower) != 0 || s.EarliestMessageTime("Nope", 0) != -1 {
		t.Fatal("unknown queue")
	}
}

func TestRestartPreservesEverything(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ { // several segments and CQ files
		put(t, s, newRecord("T", int32(i%3), bodyFor(i, 500), nil))
	}
	waitDispatched(t, s)
	before := captureState(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second close:", err)
	}
	if res := s.PutMessage(context.Background(), newRecord("T", 0, []byte("x"), nil), PutOptions{}); res.Status != ServiceNotAvailable {
		t.Fatalf("put after close: %s", res.Status)
	}
	if _, err := s.GetMessage("g", "T", 0, 0, 1, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
	// A clean close leaves no abort file and survives a power cut.
	if _, err := mem.Stat(testDir + "/abort"); err == nil {
		t.Fatal("abort file left after a clean close")
	}
	s2 := openStore(t, testConfig(mem.CrashClone()))
	if !s2.LastExitOK() {
		t.Fatal("clean close not recognised")
	}
	after := captureState(t, s2)
	compareStates(t, before, after)
	if res := put(t, s2, newRecord("T", 1, []byte("next"), nil)); res.QueueOffset != 100 {
		t.Fatalf("queue offset after restart: %d", res.QueueOffset)
	}
	if st := s2.Checkpoint(); st.PhysicMsgTimestamp == 0 || st.LogicsMsgTimestamp == 0 {
		t.Fatalf("checkpoint not written: %+v", st)
	}
}

func compareStates(t testing.TB, a, b storeState) {
	t.Helper()
	if a.commitLogMax != b.commitLogMax {
		t.Fatalf("commitlog end %d vs %d", a.commitLogMax, b.commitLogMax)
	}
	if len(a.queues) != len(b.queues) {
		t.Fatalf("queues %d vs %d", len(a.queues), len(b.queues))
	}
	for k, ua := range a.queues {
		ub := b.queues[k]
		if len(ua) != len(ub) {
			t.Fatalf("%s: %d units vs %d", k, len(ua), len(ub))
		}
		for i := range ua {
			if ua[i] != ub[i] {
				t.Fatalf("%s unit %d: %+v vs %+v", k, i, ua[i], ub[i])
			}
		}
	}
}

func TestLockExcludesSecondOpen(t *testing.T) {
	mem := vfs.NewMem()
	openStore(t, testConfig(mem))
	if _, err := Open(testConfig(mem)); !errors.Is(err, vfs.ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	if data, err := vfs.ReadFile(mem, testDir+"/"+LockFile); err != nil || string(data) != "lock" {
		t.Fatalf("lock file content %q %v", data, err)
	}
	for _, name := range []string{CommitLogDir, "consumequeue", ConfigDir, AbortFile, "checkpoint"} {
		if _, err := mem.Stat(testDir + "/" + name); err != nil {
			t.Errorf("layout: %s: %v", name, err)
		}
	}
}

func TestDeleteTopic(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	put(t, s, newRecord("Gone", 0, []byte("x"), nil))
	put(t, s, newRecord("Kept", 0, []byte("y"), nil))
	waitDispatched(t, s)
	if err := s.DeleteTopic("Gone"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Queues()["Gone"]; ok {
		t.Fatal("queues left")
	}
	if res := put(t, s, newRecord("Gone", 0, []byte("z"), nil)); res.QueueOffset != 0 {
		t.Fatalf("offset table kept: %d", res.QueueOffset)
	}
}

func TestPutRefusals(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	long := string(bytes.Repeat([]byte("t"), 128))
	if res := s.PutMessage(context.Background(), newRecord(long, 0, []byte("x"), nil), PutOptions{}); res.Status != MessageIllegal {
		t.Fatalf("long topic: %s", res.Status)
	}
	r := newRecord("T", 0, []byte("x"), nil)
	r.Properties = string(bytes.Repeat([]byte("p"), 32768))
	if res := s.PutMessage(context.Background(), r, PutOptions{}); res.Status != PropertiesSizeExceeded {
		t.Fatalf("long properties: %s", res.Status)
	}
	if s.RefusalReason() != "" {
		t.Fatalf("refusal reason on a healthy store: %q", s.RefusalReason())
	}
}

// TestGetMessageAllocs keeps the pull path allocation-free in steady state.
func TestGetMessageAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not stable under -race")
	}
	s := openStore(t, testConfig(vfs.NewMem()))
	for i := 0; i < 64; i++ {
		put(t, s, newRecord("A", 0, bodyFor(i, 200), map[string]string{"TAGS": "x"}))
	}
	waitDispatched(t, s)
	filter := NewTagFilter(false, "x")
	allocs := testing.AllocsPerRun(200, func() {
		r, err := s.GetMessage("g", "A", 0, 0, 32, filter)
		if err != nil || len(r.Messages) != 32 {
			t.Fatal("get")
		}
		r.Release()
	})
	if allocs > 0 {
		t.Fatalf("GetMessage allocates %.1f times per call", allocs)
	}
}

// TestOnDiskLimits: messages far behind the CommitLog end are pulled in
// smaller batches and the result suggests a slave.
func TestOnDiskLimits(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	cfg.InMemoryBytes = 20 << 10
	s := openStore(t, cfg)
	for i := 0; i < 100; i++ {
		put(t, s, newRecord("D", 0, bodyFor(i, 900), nil))
	}
	waitDispatched(t, s)
	r, _ := s.GetMessage("g", "D", 0, 0, 32, nil)
	if len(r.Messages) != 8 || !r.SuggestPullingFromSlave {
		t.Fatalf("old messages: %d, suggest %v", len(r.Messages), r.SuggestPullingFromSlave)
	}
	r.Release()
	r, _ = s.GetMessage("g", "D", 0, 90, 32, nil)
	if len(r.Messages) != 10 || r.SuggestPullingFromSlave {
		t.Fatalf("recent messages: %d, suggest %v", len(r.Messages), r.SuggestPullingFromSlave)
	}
	r.Release()
}

// TestGetMessageSurvivesDamagedUnits: units that do not describe a record
// (negative or huge sizes, offsets past the end, a record's middle) never
// crash a pull.
func TestGetMessageSurvivesDamagedUnits(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	res := put(t, s, newRecord("Good", 0, bodyFor(1, 300), nil))
	waitDispatched(t, s)
	q := s.cqs.GetOrCreate("Bad", 0)
	bad := []consumequeue.Unit{
		{Offset: 10, Size: -5},
		{Offset: res.WroteOffset + 7, Size: 40},
		{Offset: res.WroteOffset + 47, Size: 1 << 30},
		{Offset: 1 << 40, Size: 100},
		{Offset: 1<<40 + 200, Size: math.MaxInt32 - 1},
		{Offset: res.WroteOffset, Size: res.WroteBytes},
		{Offset: res.WroteOffset + int64(res.WroteBytes), Size: -50}, // "contiguous" with the good one
	}
	for i, u := range bad {
		q.Append(int64(i), u)
	}
	if err := q.Commit(); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off <= int64(len(bad)); off++ {
		for _, n := range []int{1, 2, 32} {
			r, err := s.GetMessage("g", "Bad", 0, off, n, NewTagFilter(true, "x"))
			if err != nil {
				t.Fatal(err)
			}
			r.Release()
			r, _ = s.GetMessage("g", "Bad", 0, off, n, nil)
			for _, m := range r.Messages {
				if _, size, err := message.DecodeRecord(m.Bytes, true); err != nil || size != len(m.Bytes) {
					t.Fatalf("offset %d: returned bytes are not one record: %v", off, err)
				}
			}
			r.Release()
		}
	}
	s.OffsetByTimestamp("Bad", 0, 12345, BoundaryLower)
	s.EarliestMessageTime("Bad", 0)
	// Offset msgIds come from clients: any offset is either a record or an error.
	for off := int64(-3); off < s.CommitLogMaxOffset()+10; off += 3 {
		rec, buf, err := s.LookMessageByOffset(off)
		if err == nil && (off != res.WroteOffset || rec.PhysicalOffset != off) {
			t.Fatalf("offset %d decoded as a record", off)
		}
		buf.Release()
	}
}

// TestOffsetFoundNull: a queue file missing in the middle of a queue (lost
// by an operator, say) answers OFFSET_FOUND_NULL with the next file's first
// offset, and the rest of the queue stays readable.
func TestOffsetFoundNull(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.CQUnitsPerFile = 10
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 25; i++ {
		put(t, s, newRecord("N", 0, bodyFor(i, 50), nil))
	}
	waitDispatched(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mem.Remove(testDir + "/consumequeue/N/0/00000000000000000200"); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, cfg)
	r, _ := s2.GetMessage("g", "N", 0, 13, 32, nil)
	if r.Status != OffsetFoundNull || r.NextBeginOffset != 20 {
		t.Fatalf("missing file: %s next %d", r.Status, r.NextBeginOffset)
	}
	r.Release()
	r, _ = s2.GetMessage("g", "N", 0, 20, 32, nil)
	if r.Status != Found || len(r.Messages) != 5 {
		t.Fatalf("after the gap: %s %d", r.Status, len(r.Messages))
	}
	r.Release()
}

// TestWaitReadable: an offset a put answered becomes readable; offsets
// never written are refused at once, whatever the context allows.
func TestWaitReadable(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var offs []int64
	for i := range 20 {
		offs = append(offs, put(t, s, newRecord("W", 0, bodyFor(i, 200), nil)).WroteOffset)
	}
	for _, off := range offs {
		if !s.WaitReadable(ctx, off) {
			t.Fatalf("offset %d: not readable", off)
		}
		_, buf, err := s.LookMessageByOffset(off)
		if err != nil {
			t.Fatalf("offset %d readable but: %v", off, err)
		}
		buf.Release()
	}
	for _, off := range []int64{-1, s.CommitLogMaxOffset(), s.CommitLogMaxOffset() + 1000} {
		if s.WaitReadable(ctx, off) {
			t.Errorf("offset %d never written: WaitReadable reported true", off)
		}
	}
}

// TestBodyRuns: BodyRuns joins the returned records that lie back to back
// in one read and breaks where a record was filtered out or another queue's
// record lies in between; joined, the runs are the messages' bytes in order.
func TestBodyRuns(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	// Queue 0: 0-9 back to back, then 10-14 after queue 1's record; 3 and 4
	// carry tag y.
	for i := 0; i < 15; i++ {
		if i == 10 {
			put(t, s, newRecord("R", 1, bodyFor(99, 100), nil))
		}
		tag := "x"
		if i == 3 || i == 4 {
			tag = "y"
		}
		put(t, s, newRecord("R", 0, bodyFor(i, 100), map[string]string{"TAGS": tag}))
	}
	waitDispatched(t, s)
	for _, tc := range []struct {
		name   string
		filter MessageFilter
		msgs   int
		runs   int
	}{
		{"all", nil, 15, 2},
		{"tag x", NewTagFilter(false, "x"), 13, 3},
	} {
		r, err := s.GetMessage("g", "R", 0, 0, 32, tc.filter)
		if err != nil || r.Status != Found {
			t.Fatalf("%s: %v %v", tc.name, err, r.Status)
		}
		var joined, want []byte
		for _, m := range r.Messages {
			want = append(want, m.Bytes...)
		}
		for _, p := range r.BodyRuns() {
			joined = append(joined, p...)
		}
		if len(r.Messages) != tc.msgs || len(r.BodyRuns()) != tc.runs || !bytes.Equal(joined, want) {
			t.Fatalf("%s: %d messages in %d runs (want %d in %d), joined equal: %v", tc.name,
				len(r.Messages), len(r.BodyRuns()), tc.msgs, tc.runs, bytes.Equal(joined, want))
		}
		r.Release()
	}
}
