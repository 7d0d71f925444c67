package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// copyLog appends from's CommitLog beyond to's end to to, as HA does.
func copyLog(t testing.TB, from, to *Store) {
	t.Helper()
	for off := to.CommitLogMaxOffset(); off < from.CommitLogMaxOffset(); {
		buf, err := from.ReadRaw(off, 8192)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf.Bytes) == 0 {
			t.Fatalf("no raw data at %d", off)
		}
		err = to.AppendRaw(off, buf.Bytes)
		off += int64(len(buf.Bytes))
		buf.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPromotedSlaveContinuesEveryQueue: a slave that copied its master's
// log becomes master; its puts continue each queue after the copied
// records (the next-queue-offset table is rebuilt), and it now refuses
// replicated bytes.
func TestPromotedSlaveContinuesEveryQueue(t *testing.T) {
	master := openStore(t, testConfig(vfs.NewMem()))
	slaveCfg := testConfig(vfs.NewMem())
	slaveCfg.Slave = true
	slave := openStore(t, slaveCfg)
	for i := range 30 {
		put(t, master, newRecord("P", int32(i%3), bodyFor(i, 300), nil))
	}
	copyLog(t, master, slave)
	if !slave.Slave() {
		t.Fatal("Slave() false on a slave")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := slave.BecomeMaster(ctx); err != nil {
		t.Fatal(err)
	}
	if slave.Slave() || slave.RefusalReason() != "" {
		t.Fatalf("promoted store: slave %v, refusal %q", slave.Slave(), slave.RefusalReason())
	}
	for q := int32(0); q < 3; q++ {
		res := put(t, slave, newRecord("P", q, []byte("after"), nil))
		if res.QueueOffset != 10 {
			t.Fatalf("queue %d: first put on the promoted store at queue offset %d, want 10", q, res.QueueOffset)
		}
	}
	if err := slave.AppendRaw(slave.CommitLogMaxOffset(), []byte{0}); !errors.Is(err, ErrNotSlave) {
		t.Fatalf("AppendRaw on a master: %v, want ErrNotSlave", err)
	}
}

// TestDemotionDrainsPuts: puts race a demotion; every put answered PutOK
// is in the log whole, and once BecomeSlave returns no put is accepted.
func TestDemotionDrainsPuts(t *testing.T) {
	s := openStore(t, testConfig(vfs.NewMem()))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		stored  []int64 // physical offsets answered PutOK
		refused int
		start   = make(chan struct{})
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; ; i++ {
				res := s.PutMessage(context.Background(), newRecord("D", int32(g), bodyFor(i, 100), nil), PutOptions{})
				mu.Lock()
				switch res.Status {
				case PutOK:
					stored = append(stored, res.WroteOffset)
				case ServiceNotAvailable:
					refused++
				default:
					mu.Unlock()
					t.Errorf("put: %s", res.Status)
					return
				}
				done := refused > 0
				mu.Unlock()
				if done {
					return
				}
			}
		}()
	}
	close(start)
	// Let some puts through, then demote while they run.
	wait.For(t, 10*time.Second, "50 acknowledged puts", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(stored) >= 50
	})
	s.BecomeSlave()
	end := s.CommitLogMaxOffset()
	wg.Wait()
	if res := s.PutMessage(context.Background(), newRecord("D", 0, []byte("late"), nil), PutOptions{}); res.Status != ServiceNotAvailable {
		t.Fatalf("put after BecomeSlave: %s", res.Status)
	}
	if got := s.RefusalReason(); got != "store: this broker is a slave" {
		t.Fatalf("refusal %q", got)
	}
	if s.CommitLogMaxOffset() != end {
		t.Fatalf("the log grew after BecomeSlave returned: %d -> %d", end, s.CommitLogMaxOffset())
	}
	for _, off := range stored {
		if off >= end {
			t.Fatalf("acknowledged record at %d beyond the end %d at demotion", off, end)
		}
		if _, buf, err := s.LookMessageByOffset(off); err != nil {
			t.Fatalf("acknowledged record at %d: %v", off, err)
		} else {
			buf.Release()
		}
	}
	waitDispatched(t, s)
	var total int64
	for g := range int32(8) {
		total += s.MaxOffset("D", g)
	}
	if total != int64(len(stored)) {
		t.Fatalf("%d queue units, %d acknowledged puts", total, len(stored))
	}
}
