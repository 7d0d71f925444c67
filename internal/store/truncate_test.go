package store

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// diverged is a slave whose log went past the point it shares with a new
// master: old wrote P bytes that newMaster and slave both copied, then
// old wrote more that slave copied too (up to E), and newMaster, promoted
// at P with epoch 2, wrote other records.
type diverged struct {
	slave, newMaster *Store
	p, e             int64
	queuesAtP        map[int32]int64
}

// buildDiverged makes a diverged slave on slaveFS (segments of 4 KiB, so
// the cut crosses segment ends). The slave's epoch file says epoch 1 from
// 0 and epoch 3 (a term of its own that never reached newMaster) from a
// record between P and E.
func buildDiverged(t *testing.T, slaveFS vfs.FS) *diverged {
	t.Helper()
	cfg := func(fs vfs.FS, slave bool) Config {
		c := crashConfig(fs)
		c.Slave = slave
		return c
	}
	old := openStore(t, cfg(vfs.NewMem(), false))
	d := &diverged{slave: openStore(t, cfg(slaveFS, true)), newMaster: openStore(t, cfg(vfs.NewMem(), true)), queuesAtP: map[int32]int64{}}
	for i := range 20 {
		put(t, old, newRecord("T", int32(i%2), bodyFor(i, 300), map[string]string{"KEYS": "k"}))
	}
	d.p = old.CommitLogMaxOffset()
	copyLog(t, old, d.slave)
	copyLog(t, old, d.newMaster)
	var mid int64
	for i := range 12 {
		res := put(t, old, newRecord("T", int32(i%2), bodyFor(100+i, 300), nil))
		if i == 6 {
			mid = res.WroteOffset
		}
	}
	d.e = old.CommitLogMaxOffset()
	copyLog(t, old, d.slave)
	// Everything copied is on disk before the test crashes anything.
	wait.For(t, 10*time.Second, "slave dispatch and flush", func() bool {
		return d.slave.DispatchedOffset() >= d.e && d.slave.FlushBehindBytes() == 0
	})
	for _, x := range []struct {
		e     *Epochs
		epoch int32
		start int64
	}{{d.slave.Epochs(), 1, 0}, {d.slave.Epochs(), 3, mid}, {d.newMaster.Epochs(), 1, 0}, {d.newMaster.Epochs(), 2, d.p}} {
		if err := x.e.Append(x.epoch, x.start); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.newMaster.BecomeMaster(ctx); err != nil {
		t.Fatal(err)
	}
	for q := int32(0); q < 2; q++ {
		d.queuesAtP[q] = d.newMaster.MaxOffset("T", q)
	}
	for i := range 7 {
		put(t, d.newMaster, newRecord("T", int32(i%2), bodyFor(200+i, 250), nil))
	}
	return d
}

// checkFollows copies newMaster's log after the slave's end and checks
// that the slave's queues then serve exactly newMaster's messages.
func (d *diverged) checkFollows(t *testing.T, s *Store) {
	t.Helper()
	copyLog(t, d.newMaster, s)
	waitDispatched(t, d.newMaster)
	wait.For(t, 10*time.Second, "slave dispatch", func() bool { return s.DispatchedOffset() >= d.newMaster.CommitLogMaxOffset() })
	for q := int32(0); q < 2; q++ {
		a, _ := d.newMaster.GetMessage("g", "T", q, 0, 64, nil)
		b, _ := s.GetMessage("g", "T", q, 0, 64, nil)
		if len(a.Messages) == 0 || len(a.Messages) != len(b.Messages) || s.MaxOffset("T", q) != d.newMaster.MaxOffset("T", q) {
			t.Fatalf("queue %d: new master %d messages (max %d), slave %d (max %d)", q, len(a.Messages), d.newMaster.MaxOffset("T", q), len(b.Messages), s.MaxOffset("T", q))
		}
		for i := range a.Messages {
			if !bytes.Equal(a.Messages[i].Bytes, b.Messages[i].Bytes) {
				t.Fatalf("queue %d message %d differs", q, i)
			}
		}
		a.Release()
		b.Release()
	}
}

// TestTruncateToConsistentPoint: a diverged slave finds the point it
// shares with the new master from the two epoch files, cuts its log,
// queues and epoch file there, survives a restart in that state, and then
// replicates the new master's log byte for byte.
func TestTruncateToConsistentPoint(t *testing.T) {
	mem := vfs.NewMem()
	d := buildDiverged(t, mem)
	point := min(ConsistentPoint(d.slave.Epochs().Entries(), d.newMaster.Epochs().Entries()), d.slave.CommitLogMaxOffset())
	if point != d.p {
		t.Fatalf("consistent point %d, want %d", point, d.p)
	}
	// Refusals first: a master's store, an offset inside a record.
	if err := d.newMaster.TruncateTo(d.p); !errors.Is(err, ErrTruncateMaster) {
		t.Fatalf("truncating a master: %v", err)
	}
	if err := d.slave.TruncateTo(d.p + 1); err == nil {
		t.Fatal("truncation inside a record accepted")
	}
	if d.slave.CommitLogMaxOffset() != d.e {
		t.Fatal("a refused truncation changed the log")
	}
	if err := d.slave.TruncateTo(point); err != nil {
		t.Fatal(err)
	}
	if d.slave.CommitLogMaxOffset() != d.p {
		t.Fatalf("end %d after truncation, want %d", d.slave.CommitLogMaxOffset(), d.p)
	}
	for q, want := range d.queuesAtP {
		if got := d.slave.MaxOffset("T", q); got != want {
			t.Fatalf("queue %d max %d after truncation, want %d", q, got, want)
		}
	}
	checkNoUnitPastEnd(t, d.slave)
	if got := d.slave.Epochs().Entries(); !slices.Equal(got, []EpochEntry{{1, 0, math.MaxInt64}}) {
		t.Fatalf("epochs after truncation: %v", got)
	}
	// A restart right after the cut, after a crash and clean.
	crashed := mem.CrashClone()
	if err := d.slave.Close(); err != nil {
		t.Fatal(err)
	}
	for _, image := range []vfs.FS{crashed, mem} {
		c := crashConfig(image)
		c.Slave = true
		s := openStore(t, c)
		if s.CommitLogMaxOffset() != d.p || s.Epochs().LastEpoch() != 1 {
			t.Fatalf("reopened: end %d epoch %d", s.CommitLogMaxOffset(), s.Epochs().LastEpoch())
		}
		checkNoUnitPastEnd(t, s)
		if image == mem {
			d.checkFollows(t, s)
			s.Close()
		}
	}
}

// TestTruncateCrashAtEveryWrite crashes the file system at every
// mutating operation of a truncation (the background flush and dispatch
// included) and reopens the image: the store is as before the call (end
// E, epoch 3 kept), as after it (end P, epoch 3 gone) or a prefix in
// between with the epochs that start in it, its queues never
// point past the end, a second recovery gives the same state, and after a
// truncation redone on the reopened store it follows the new master byte
// for byte.
func TestTruncateCrashAtEveryWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop")
	}
	k := int64(0)
	for ; ; k++ {
		mem := vfs.NewMem()
		var armed atomic.Bool
		trig := vfs.CrashAt(vfs.OpMutating, k)
		efs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
			if !armed.Load() && !trig.Fired() {
				return nil
			}
			return trig.MaybeError(op)
		}))
		d := buildDiverged(t, efs)
		armed.Store(true)
		terr := d.slave.TruncateTo(d.p)
		armed.Store(false)
		fired := trig.Fired()
		if !fired && terr != nil {
			t.Fatalf("k=%d: truncation without a crash: %v", k, terr)
		}
		d.slave.Close()
		opts := vfs.CrashOptions{}
		if k%2 == 1 {
			opts = vfs.CrashOptions{UnsyncedPagePercent: 50, Rand: rand.New(rand.NewPCG(uint64(k), 11))}
		}
		image := mem.CrashCloneWith(opts)
		c := crashConfig(image)
		c.Slave = true
		s, err := Open(c)
		if err != nil {
			t.Fatalf("k=%d: reopen after crash: %v", k, err)
		}
		// Before (E, epoch 3 kept), after (P, epoch 3 gone), or in
		// between: the segments are removed from the last one down, so
		// the log is a prefix of the one before, and no epoch starts past
		// its end.
		end, epochs := s.CommitLogMaxOffset(), s.Epochs().Entries()
		if end < d.p || end > d.e || (end == d.p && len(epochs) != 1) || (end == d.e && len(epochs) != 2) {
			t.Fatalf("k=%d: reopened with end %d and epochs %v: want an end in [%d, %d]", k, end, epochs, d.p, d.e)
		}
		for _, x := range epochs {
			if x.StartOffset > end {
				t.Fatalf("k=%d: epoch %v starts past the end %d", k, x, end)
			}
		}
		if !fired && end != d.p {
			t.Fatalf("k=%d: completed truncation lost: end %d", k, end)
		}
		checkNoUnitPastEnd(t, s)
		st1 := captureState(t, s)
		s2, err := Open(crashConfigSlave(image.CrashClone()))
		if err != nil {
			t.Fatalf("k=%d: second recovery: %v", k, err)
		}
		compareStates(t, st1, captureState(t, s2))
		s2.Close()
		if err := s.TruncateTo(d.p); err != nil {
			t.Fatalf("k=%d: truncation redone: %v", k, err)
		}
		d.checkFollows(t, s)
		s.Close()
		if !fired {
			break
		}
	}
	t.Logf("crash points: %d", k+1)
	if k < 10 {
		t.Fatalf("only %d crash points", k)
	}
}

func crashConfigSlave(fs vfs.FS) Config {
	c := crashConfig(fs)
	c.Slave = true
	return c
}
