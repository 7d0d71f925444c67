package commitlog

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

func TestDelayRewrite(t *testing.T) {
	l := openLog(t, testConfig(vfs.NewMem(), false))
	defer l.Close()
	cases := []struct {
		name      string
		sysFlag   int32
		props     string
		opts      PutOptions
		topic     string
		qid       int32
		wantDelay string
	}{
		{"level 3", 0, "DELAY\x013\x02TAGS\x01a", PutOptions{}, message.ScheduleTopic, 2, "3"},
		{"capped", 0, "DELAY\x0199", PutOptions{}, message.ScheduleTopic, 17, "18"},
		{"commit type", message.TransactionCommitType, "DELAY\x011", PutOptions{}, message.ScheduleTopic, 0, "1"},
		{"prepared kept", message.TransactionPreparedType, "DELAY\x012", PutOptions{}, "Orders", 6, "2"},
		{"rollback kept", message.TransactionRollbackType, "DELAY\x012", PutOptions{}, "Orders", 6, "2"},
		{"level 0", 0, "DELAY\x010", PutOptions{}, "Orders", 6, "0"},
		{"not a number", 0, "DELAY\x01x", PutOptions{}, "Orders", 6, "x"},
		{"redelivery", 0, "DELAY\x014", PutOptions{NoDelayRewrite: true}, "Orders", 6, "4"},
	}
	for _, c := range cases {
		r := newRecord("Orders", 6, []byte("b"), c.props)
		r.SysFlag = c.sysFlag
		res := l.Put(context.Background(), r, c.opts)
		if res.Status != PutOK {
			t.Fatalf("%s: %v", c.name, res.Status)
		}
		wait.For(t, 10*time.Second, "l.Committed() == l.MaxOffset()", func() bool { return l.Committed() == l.MaxOffset() })
		rec, buf, err := l.ReadRecordAt(res.WroteOffset)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Topic != c.topic || rec.QueueID != c.qid {
			t.Errorf("%s: stored in %s/%d, want %s/%d", c.name, rec.Topic, rec.QueueID, c.topic, c.qid)
		}
		if v, _ := message.Property(rec.Properties, message.PropertyDelayTimeLevel); v != c.wantDelay {
			t.Errorf("%s: DELAY=%q want %q", c.name, v, c.wantDelay)
		}
		rt, _ := message.Property(rec.Properties, message.PropertyRealTopic)
		rq, _ := message.Property(rec.Properties, message.PropertyRealQueueID)
		if rewritten := c.topic == message.ScheduleTopic; rewritten != (rt == "Orders" && rq == "6") {
			t.Errorf("%s: REAL_TOPIC=%q REAL_QID=%q", c.name, rt, rq)
		}
		if c.props == "DELAY\x013\x02TAGS\x01a" {
			if v, _ := message.Property(rec.Properties, message.PropertyTags); v != "a" {
				t.Errorf("%s: other properties lost: %q", c.name, rec.Properties)
			}
		}
		buf.Release()
	}
}

func TestQueueOffsets(t *testing.T) {
	l := openLog(t, testConfig(vfs.NewMem(), false))
	defer l.Close()
	put := func(topic string, qid int32, sysFlag int32) int64 {
		r := newRecord(topic, qid, []byte("x"), "")
		r.SysFlag = sysFlag
		res := l.Put(context.Background(), r, PutOptions{})
		if res.Status != PutOK {
			t.Fatal(res.Status)
		}
		if r.QueueOffset != res.QueueOffset || r.PhysicalOffset != res.WroteOffset || r.StoreTimestamp != res.StoreTimestamp {
			t.Fatal("record not filled in")
		}
		return res.QueueOffset
	}
	seq := []struct {
		topic   string
		qid     int32
		sysFlag int32
		want    int64
	}{
		{"A", 0, 0, 0}, {"A", 0, 0, 1}, {"A", 1, 0, 0}, {"B", 0, 0, 0},
		{"A", 0, message.TransactionPreparedType, 0}, // half message: 0, no advance
		{"A", 0, message.TransactionRollbackType, 0}, // rollback: 0, no advance
		{"A", 0, message.TransactionCommitType, 2},
		{"A", 0, 0, 3},
	}
	for i, s := range seq {
		if got := put(s.topic, s.qid, s.sysFlag); got != s.want {
			t.Fatalf("step %d: queue offset %d, want %d", i, got, s.want)
		}
	}
	if l.QueueOffset("A", 0) != 4 || l.QueueOffset("A", 1) != 1 || l.QueueOffset("Z", 0) != 0 {
		t.Fatal("QueueOffset table")
	}
	l.SetQueueOffset("A", 1, 100)
	if got := put("A", 1, 0); got != 100 {
		t.Fatalf("after SetQueueOffset: %d", got)
	}
	l.RemoveQueueOffsets("A")
	if l.QueueOffset("A", 0) != 0 || l.QueueOffset("B", 0) != 1 {
		t.Fatal("RemoveQueueOffsets")
	}
}

func TestSizeChecks(t *testing.T) {
	cfg := testConfig(vfs.NewMem(), false)
	cfg.MaxMessageSize = 1000
	l := openLog(t, cfg)
	defer l.Close()
	cases := []struct {
		name string
		r    *message.Record
		want PutStatus
	}{
		{"topic 127", newRecord(strings.Repeat("t", 127), 0, nil, ""), PutOK},
		{"topic 128", newRecord(strings.Repeat("t", 128), 0, nil, ""), MessageIllegal},
		{"empty topic", newRecord("", 0, nil, ""), MessageIllegal},
		{"props 32767", newRecord("T", 0, nil, "K\x01"+strings.Repeat("v", 32765)), PutOK},
		{"props 32768", newRecord("T", 0, nil, "K\x01"+strings.Repeat("v", 32766)), PropertiesSizeExceeded},
		{"body max", newRecord("T", 0, make([]byte, 1000), ""), PutOK},
		{"body max+1", newRecord("T", 0, make([]byte, 1001), ""), MessageIllegal},
	}
	for _, c := range cases {
		if got := l.Put(context.Background(), c.r, PutOptions{}).Status; got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A record that cannot fit a segment (with room for the filler) is refused.
	cfg = testConfig(vfs.NewMem(), false)
	l2 := openLog(t, cfg)
	defer l2.Close()
	if got := l2.Put(context.Background(), newRecord("T", 0, make([]byte, testSegment-recordOverhead-7), ""), PutOptions{}).Status; got != MessageIllegal {
		t.Errorf("record larger than a segment: %v", got)
	}
	if got := l2.Put(context.Background(), newRecord("T", 0, make([]byte, testSegment-recordOverhead-8), ""), PutOptions{}).Status; got != PutOK {
		t.Errorf("record filling a segment: %v", got)
	}
}

func TestPageCacheBusy(t *testing.T) {
	cfg := testConfig(vfs.NewMem(), false)
	cfg.OSPageCacheBusyTimeout = 50 * time.Millisecond
	l := openLog(t, cfg)
	defer l.Close()
	l.lock() // a put stuck under the lock
	since := l.lockedSince.Load()
	if l.busyAt(since + int64(cfg.OSPageCacheBusyTimeout)) {
		t.Fatal("busy at the timeout, want only after it")
	}
	if !l.busyAt(since + int64(cfg.OSPageCacheBusyTimeout) + 1) {
		t.Fatal("not busy past the timeout")
	}
	wait.For(t, 10*time.Second, "the held lock to make the log busy", l.Busy)
	if st := l.Put(context.Background(), newRecord("T", 0, nil, ""), PutOptions{}).Status; st != OSPageCacheBusy {
		t.Fatalf("status %v", st)
	}
	l.unlock()
	if st := l.Put(context.Background(), newRecord("T", 0, nil, ""), PutOptions{}).Status; st != PutOK {
		t.Fatalf("after unlock: %v", st)
	}
}

func TestStatusNames(t *testing.T) {
	if PutOK.String() != "PUT_OK" || OSPageCacheBusy.String() != "OS_PAGECACHE_BUSY" || UnknownError.String() != "UNKNOWN_ERROR" {
		t.Fatal("names")
	}
	if PutStatus(99).String() != "PutStatus(99)" {
		t.Fatal(PutStatus(99).String())
	}
	if !FlushDiskTimeout.Stored() || MessageIllegal.Stored() {
		t.Fatal("Stored")
	}
}

func TestPutAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool is randomized under the race detector")
	}
	// On the OS file system: the in-memory one allocates in the committer's
	// writes, which the count below would charge to the puts.
	cfg := testConfig(vfs.Default, false)
	cfg.Dir = t.TempDir()
	// One segment holds every put: a roll (file creation, on the
	// allocator's goroutine) costs a few hundred allocations, once per
	// segment, which a 64 KiB test segment would charge to every 60 puts.
	cfg.SegmentSize = 16 << 20
	l := openLog(t, cfg)
	defer l.Close()
	r := newRecord("T", 0, make([]byte, 1024), "TAGS\x01a")
	put := func() {
		if st := l.Put(context.Background(), r, PutOptions{}).Status; st != PutOK {
			t.Fatal(st)
		}
	}
	// Counted exactly, not through testing.AllocsPerRun, which rounds the
	// average down to an integer and so hides any fraction below one.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for range 100 { // warm up: the ring, the pools, a first id chunk
		put()
	}
	const puts = 14 * 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range puts {
		put()
	}
	runtime.ReadMemStats(&after)
	perPut := float64(after.Mallocs-before.Mallocs) / puts
	// The offset msgId string is the only allocation: one id chunk per
	// idsPerChunk IPv6-length ids, which holds more IPv4 ids.
	idsPerAlloc := idsPerChunk * message.OffsetMsgIDLenV6 / message.OffsetMsgIDLenV4
	want := 1 / float64(idsPerAlloc)
	t.Logf("%.4f allocations per put (%d in %d puts); the id chunk alone costs %.4f", perPut, after.Mallocs-before.Mallocs, puts, want)
	// Slack for the rare refill of a pool that a GC emptied.
	if perPut > want+0.01 {
		t.Fatalf("%.4f allocations per put, want at most %.4f (one id chunk per %d puts)", perPut, want, idsPerAlloc)
	}
}

func TestPageCacheBusyIgnoresTestClock(t *testing.T) {
	// A store clock far in the past must not make a briefly held lock look
	// held for years.
	cfg := testConfig(vfs.NewMem(), false)
	cfg.Now = func() time.Time { return time.Unix(1000, 0) }
	l := openLog(t, cfg)
	defer l.Close()
	l.lock()
	busy := l.Busy()
	l.unlock()
	if busy {
		t.Fatal("busy right after taking the lock")
	}
	res := l.Put(context.Background(), newRecord("T", 0, nil, ""), PutOptions{})
	if res.Status != PutOK || res.StoreTimestamp != 1000000 {
		t.Fatalf("%v at %d", res.Status, res.StoreTimestamp)
	}
}

func TestQueueTableCopiesTopic(t *testing.T) {
	l := openLog(t, testConfig(vfs.NewMem(), false))
	defer l.Close()
	// A topic aliasing a request buffer that is reused afterwards.
	buf := []byte("Alias")
	r := newRecord(unsafe.String(&buf[0], len(buf)), 0, nil, "")
	if st := l.Put(context.Background(), r, PutOptions{}).Status; st != PutOK {
		t.Fatal(st)
	}
	copy(buf, "XXXXX")
	if got := l.QueueOffset("Alias", 0); got != 1 {
		t.Fatalf("queue offset of Alias: %d", got)
	}
}

func TestPutAcrossRingWrap(t *testing.T) {
	// A ring size that is no multiple of the segment size makes records
	// straddle the ring's end (in production: a log starting mid-segment).
	fs := vfs.NewMem()
	cfg := testConfig(fs, false)
	cfg.RingSize = 1<<20 + 777
	l := openLog(t, cfg)
	type put struct {
		off, queueOffset, ts int64
		body                 []byte
	}
	var puts []put
	rng := rand.New(rand.NewPCG(7, 7))
	for total := 0; total < 3<<20; {
		body := make([]byte, 1+rng.IntN(20<<10))
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		res := l.Put(context.Background(), newRecord("Wrap", 0, body, "TAGS\x01w"), PutOptions{})
		if res.Status != PutOK {
			t.Fatalf("put %d: %v", len(puts), res.Status)
		}
		puts = append(puts, put{res.WroteOffset, res.QueueOffset, res.StoreTimestamp, body})
		total += int(res.WroteBytes)
	}
	wait.For(t, 10*time.Second, "l.Committed() == l.MaxOffset()", func() bool { return l.Committed() == l.MaxOffset() })
	for i, p := range puts {
		rec, buf, err := l.ReadRecordAt(p.off)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(rec.Body, p.body) || rec.PhysicalOffset != p.off || rec.QueueOffset != int64(i) ||
			p.queueOffset != int64(i) || rec.StoreTimestamp != p.ts || rec.BodyCRC != message.BodyCRC(p.body) {
			t.Fatalf("record %d at %d differs: queue offset %d, physical %d", i, p.off, rec.QueueOffset, rec.PhysicalOffset)
		}
		buf.Release()
	}
	end := l.MaxOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Recovery validates every record's CRC and offsets.
	l2, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if got, err := l2.Recover(0, nil); err != nil || got != end {
		t.Fatalf("recovered to %d (%v), want %d", got, err, end)
	}
}
