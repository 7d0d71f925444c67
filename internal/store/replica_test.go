package store

import (
	"bytes"
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestSlaveBuildsQueuesFromRawAppends copies a master's CommitLog into a
// slave store byte for byte (what HA does) across several segments: the
// slave refuses puts, dispatches the copied records and serves the same
// messages at the same offsets.
func TestSlaveBuildsQueuesFromRawAppends(t *testing.T) {
	master := openStore(t, testConfig(vfs.NewMem()))
	slaveCfg := testConfig(vfs.NewMem())
	slaveCfg.Slave = true
	slave := openStore(t, slaveCfg)
	for i := 0; i < 150; i++ { // ~100 KB: two segments, a BLANK in between
		put(t, master, newRecord("R", int32(i%2), bodyFor(i, 600), map[string]string{"TAGS": "x"}))
	}
	waitDispatched(t, master)
	if res := slave.PutMessage(context.Background(), newRecord("R", 0, []byte("x"), nil), PutOptions{}); res.Status != ServiceNotAvailable {
		t.Fatalf("put on a slave: %s", res.Status)
	}
	for off := int64(0); off < master.CommitLogMaxOffset(); {
		buf, err := master.ReadRaw(off, 8192)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf.Bytes) == 0 {
			t.Fatalf("no raw data at %d", off)
		}
		if err := slave.AppendRaw(off, buf.Bytes); err != nil {
			t.Fatal(err)
		}
		off += int64(len(buf.Bytes))
		buf.Release()
	}
	wait.For(t, 10*time.Second, "slave dispatch", func() bool { return slave.DispatchedOffset() >= master.CommitLogMaxOffset() })
	for qid := int32(0); qid < 2; qid++ {
		if slave.MaxOffset("R", qid) != master.MaxOffset("R", qid) {
			t.Fatalf("queue %d: slave max %d master %d", qid, slave.MaxOffset("R", qid), master.MaxOffset("R", qid))
		}
		a, _ := master.GetMessage("g", "R", qid, 0, 32, nil)
		b, _ := slave.GetMessage("g", "R", qid, 0, 32, nil)
		if a.Status != Found || len(a.Messages) != len(b.Messages) {
			t.Fatalf("queue %d: master %s %d, slave %s %d", qid, a.Status, len(a.Messages), b.Status, len(b.Messages))
		}
		for i := range a.Messages {
			if !bytes.Equal(a.Messages[i].Bytes, b.Messages[i].Bytes) {
				t.Fatalf("queue %d message %d differs", qid, i)
			}
		}
		a.Release()
		b.Release()
	}
}

// TestBatchAndIPv6 puts a batch (consecutive queue offsets, one dispatch)
// and messages with IPv6 hosts (store time at a shifted position).
func TestBatchAndIPv6(t *testing.T) {
	clock := newSteppedClock()
	cfg := testConfig(vfs.NewMem())
	cfg.Clock = clock.Now
	cfg.StoreHost = netip.MustParseAddrPort("[2001:db8::1]:10911")
	s := openStore(t, cfg)
	recs := make([]message.Record, 5)
	for i := range recs {
		recs[i] = *newRecord("B", 1, bodyFor(i, 50), map[string]string{"TAGS": "b"})
		recs[i].BornHost = netip.MustParseAddrPort("[2001:db8::2]:4000")
	}
	res := s.PutMessages(context.Background(), recs, PutOptions{})
	if res.Status != PutOK || res.MsgNum != 5 || res.QueueOffset != 0 {
		t.Fatalf("batch: %+v", res)
	}
	clock.Advance(time.Second)
	single := put(t, s, newRecord("B", 1, []byte("after"), nil))
	waitDispatched(t, s)
	if s.MaxOffset("B", 1) != 6 {
		t.Fatalf("max %d", s.MaxOffset("B", 1))
	}
	r, _ := s.GetMessage("g", "B", 1, 0, 32, NewTagFilter(true, "b"))
	if r.Status != Found || len(r.Messages) != 5 || r.NextBeginOffset != 6 {
		t.Fatalf("get batch: %s %d next %d", r.Status, len(r.Messages), r.NextBeginOffset)
	}
	for i, m := range r.Messages {
		rec, _, err := message.DecodeRecord(m.Bytes, true)
		if err != nil || rec.QueueOffset != int64(i) || rec.StoreHost != cfg.StoreHost || !bytes.Equal(rec.Body, bodyFor(i, 50)) {
			t.Fatalf("batch record %d: %+v %v", i, rec, err)
		}
	}
	r.Release()
	if got := s.OffsetByTimestamp("B", 1, single.StoreTimestamp, BoundaryLower); got != 5 {
		t.Fatalf("offset by time with IPv6 hosts: %d", got)
	}
	if got := s.EarliestMessageTime("B", 1); got != res.StoreTimestamp {
		t.Fatalf("earliest %d want %d", got, res.StoreTimestamp)
	}
}

func TestConfigValidate(t *testing.T) {
	var c Config
	c.EnsureDefaults()
	if err := c.Validate(); err == nil {
		t.Fatal("empty Dir accepted")
	}
	c.Dir = "/x"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.FileReservedTime != DefaultFileReservedTime || c.DeleteWhen != "04" || c.DiskMaxUsedSpaceRatio != 75 ||
		c.DiskSpaceWarningLevelRatio != 90 || c.CQUnitsPerFile != 300_000 || c.SegmentSize != 1<<30 {
		t.Fatalf("defaults: %+v", c)
	}
	// Any order of the disk ratios is valid (Java accepts any); only a
	// value that is no percent is not.
	c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio = 90, 85, 80
	if err := c.Validate(); err != nil {
		t.Fatalf("inverted disk ratios refused: %v", err)
	}
	for _, bad := range []func(){
		func() { c.DiskSpaceWarningLevelRatio = 101 },
		func() { c.DiskSpaceCleanForciblyRatio = -1 },
		func() { c.CleanInterval = -time.Second },
	} {
		saved := c
		bad()
		if err := c.Validate(); err == nil {
			t.Errorf("accepted %d %d %d %v", c.DiskMaxUsedSpaceRatio, c.DiskSpaceCleanForciblyRatio, c.DiskSpaceWarningLevelRatio, c.CleanInterval)
		}
		c = saved
	}
	c.DeleteWhen = "04;25"
	if err := c.Validate(); err == nil {
		t.Fatal("hour 25 accepted")
	}
	hours, err := parseDeleteWhen("04; 16")
	if err != nil || !hours[4] || !hours[16] || len(hours) != 2 {
		t.Fatalf("hours %v %v", hours, err)
	}
}
