package ha

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// A SYNC_MASTER answers PUT_OK only for what a slave holds; the slave ends
// byte-identical, crossing several segment ends, with its queues built.
func TestSyncReplicationByteIdentical(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{Sync: true})
	s := newSlaveStore(t, t.TempDir())
	c := startClient(t, s, srv.Addr().String(), nil)
	wait.For(t, 10*time.Second, "slave to connect and report", func() bool { return srv.slaveInSync() })

	const n = 3000
	seen := putN(t, m, "HATopic", n, 16)
	if seen[store.PutOK] != n {
		t.Fatalf("statuses %v, want %d PUT_OK", seen, n)
	}
	// Every PUT_OK was acked: the ack covers the master's end right away.
	if got, want := srv.Acked(), m.CommitLogMaxOffset(); got < want {
		t.Fatalf("acked %d < master end %d after all puts answered PUT_OK", got, want)
	}
	if m.CommitLogMaxOffset() < 3*testSegment {
		t.Fatalf("test wants several segments; log ends at %d", m.CommitLogMaxOffset())
	}
	caughtUp(t, m, s)
	sameCommitLog(t, m, s)
	for q := int32(0); q < 4; q++ {
		if got, want := s.MaxOffset("HATopic", q), m.MaxOffset("HATopic", q); got != want {
			t.Errorf("queue %d: slave max offset %d, master %d", q, got, want)
		}
	}
	if st := c.Status(); st.State != Replicating {
		t.Errorf("client state %v (%v), want REPLICATING", st.State, st.Err)
	}
	// The slave serves reads of what it copied.
	res, err := s.GetMessage("g", "HATopic", 1, 0, 32, nil)
	if err != nil || res.Status != store.Found || len(res.Messages) == 0 {
		t.Fatalf("slave get: %v %+v", err, res)
	}
	res.Release()
}

// A slave started after the data was written starts at the master's last
// segment; one that stopped for a while catches up from its own end.
func TestCatchUpFromOwnOffset(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{})
	if seen := putN(t, m, "CatchUp", 2000, 4); seen[store.PutOK] != 2000 {
		t.Fatalf("statuses %v", seen)
	}
	sdir := t.TempDir()
	s := newSlaveStore(t, sdir)
	c := startClient(t, s, srv.Addr().String(), nil)
	caughtUp(t, m, s)
	if lastSeg := m.CommitLogMaxOffset() - m.CommitLogMaxOffset()%testSegment; s.CommitLogMinOffset() != lastSeg {
		t.Errorf("empty slave started at %d, want the master's last segment %d", s.CommitLogMinOffset(), lastSeg)
	}
	sameCommitLog(t, m, s)

	// Stop the slave (process restart), write more, start it again.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := m.CommitLogMaxOffset()
	if seen := putN(t, m, "CatchUp", 3000, 4); seen[store.PutOK] != 3000 {
		t.Fatalf("statuses %v", seen)
	}
	s = newSlaveStore(t, sdir)
	if s.CommitLogMaxOffset() != before {
		t.Fatalf("reopened slave ends at %d, want %d", s.CommitLogMaxOffset(), before)
	}
	startClient(t, s, srv.Addr().String(), nil)
	caughtUp(t, m, s)
	sameCommitLog(t, m, s)
	for q := int32(0); q < 4; q++ {
		if got, want := s.MaxOffset("CatchUp", q), m.MaxOffset("CatchUp", q); got != want {
			t.Errorf("queue %d: slave max offset %d, master %d", q, got, want)
		}
	}
}

// No slave: a SYNC_MASTER answers SLAVE_NOT_AVAILABLE at once (the message
// stays stored); an ASYNC_MASTER answers PUT_OK.
func TestSlaveNotAvailable(t *testing.T) {
	m, _ := newMaster(t, t.TempDir(), ServerConfig{Sync: true, WaitTimeout: 10 * time.Second})
	start := time.Now()
	res := m.PutMessage(context.Background(), record("T", 0, 1), store.PutOptions{})
	if res.Status != store.SlaveNotAvailable {
		t.Fatalf("status %v, want SLAVE_NOT_AVAILABLE", res.Status)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("SLAVE_NOT_AVAILABLE took %v: must not wait", d)
	}
	wait.For(t, 10*time.Second, "the refused message to stay stored", func() bool { return m.MaxOffset("T", 0) == 1 })

	a, _ := newMaster(t, t.TempDir(), ServerConfig{})
	if res := a.PutMessage(context.Background(), record("T", 0, 1), store.PutOptions{}); res.Status != store.PutOK {
		t.Fatalf("async master status %v", res.Status)
	}
}

// A slave further behind than MaxGap does not count as available.
func TestSlaveBeyondMaxGapNotAvailable(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{Sync: true, MaxGap: 4 << 10})
	s := newSlaveStore(t, t.TempDir())
	ps := newPausedSink(s)
	ps.pause()
	startClient(t, ps, srv.Addr().String(), nil)
	t.Cleanup(ps.resume) // before the client closes
	wait.For(t, 10*time.Second, "slave to report", func() bool { return srv.slaveInSync() })
	// Without waiting: move the master 8 KiB ahead of the paused slave.
	for i := range 40 {
		m.PutMessage(context.Background(), record("Gap", 0, i), store.PutOptions{NoWait: true})
	}
	if res := m.PutMessage(context.Background(), record("Gap", 0, 99), store.PutOptions{}); res.Status != store.SlaveNotAvailable {
		t.Fatalf("status %v, want SLAVE_NOT_AVAILABLE", res.Status)
	}
	ps.resume()
	caughtUp(t, m, s)
	// The slave's store has everything; the master learns it from the
	// slave's next report.
	wait.For(t, 10*time.Second, "the master to see the slave in sync", srv.slaveInSync)
	if res := m.PutMessage(context.Background(), record("Gap", 0, 100), store.PutOptions{}); res.Status != store.PutOK {
		t.Fatalf("after catch-up: status %v, want PUT_OK", res.Status)
	}
}

// A paused slave: the put waits WaitTimeout and gets FLUSH_SLAVE_TIMEOUT;
// once the slave resumes, the data arrives and new puts are PUT_OK.
func TestFlushSlaveTimeout(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{Sync: true, WaitTimeout: 300 * time.Millisecond})
	s := newSlaveStore(t, t.TempDir())
	ps := newPausedSink(s)
	startClient(t, ps, srv.Addr().String(), nil)
	t.Cleanup(ps.resume) // before the client closes
	wait.For(t, 10*time.Second, "slave to report", func() bool { return srv.slaveInSync() })
	// 300 ms is short on a loaded CI machine: retry until one round trip
	// fits.
	wait.For(t, 10*time.Second, "a PUT_OK with the slave running", func() bool {
		return m.PutMessage(context.Background(), record("P", 0, 0), store.PutOptions{}).Status == store.PutOK
	})
	ps.pause()
	start := time.Now()
	res := m.PutMessage(context.Background(), record("P", 0, 1), store.PutOptions{})
	if res.Status != store.FlushSlaveTimeout {
		t.Fatalf("status %v, want FLUSH_SLAVE_TIMEOUT", res.Status)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("timed out after %v, before WaitTimeout", d)
	}
	ps.resume()
	caughtUp(t, m, s)
	wait.For(t, 10*time.Second, "a PUT_OK after the slave resumed", func() bool {
		return m.PutMessage(context.Background(), record("P", 0, 2), store.PutOptions{}).Status == store.PutOK
	})
	caughtUp(t, m, s)
	sameCommitLog(t, m, s)
}

// A slave whose CommitLog holds more than the master's refuses to
// replicate, and both sides say why.
func TestDivergedSlaveRefuses(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{})
	if seen := putN(t, m, "D", 10, 1); seen[store.PutOK] != 10 {
		t.Fatalf("statuses %v", seen)
	}
	// A "slave" directory written as a master with more data.
	sdir := t.TempDir()
	other := openStore(t, storeConfig(sdir))
	putN(t, other, "D", 50, 1)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	s := newSlaveStore(t, sdir)
	sEnd := s.CommitLogMaxOffset()
	c := startClient(t, s, srv.Addr().String(), nil)
	wait.For(t, 10*time.Second, "diverged state", func() bool { return c.Status().State == Diverged })
	if st := c.Status(); !errors.Is(st.Err, ErrDiverged) {
		t.Fatalf("status error %v, want ErrDiverged", st.Err)
	}
	if s.CommitLogMaxOffset() != sEnd {
		t.Errorf("diverged slave's log changed: %d -> %d", sEnd, s.CommitLogMaxOffset())
	}
	for _, sl := range srv.Slaves() {
		if sl.Acked >= 0 {
			t.Errorf("diverged slave counted with ack %d", sl.Acked)
		}
	}
}

// pausedSink holds AppendRaw while paused: a slave that stopped working
// (what SIGSTOP does to a slave process).
type pausedSink struct {
	Sink
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
}

func newPausedSink(s Sink) *pausedSink {
	p := &pausedSink{Sink: s}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *pausedSink) pause() { p.mu.Lock(); p.paused = true; p.mu.Unlock() }

func (p *pausedSink) resume() {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pausedSink) AppendRaw(offset int64, data []byte) error {
	p.mu.Lock()
	for p.paused {
		p.cond.Wait()
	}
	p.mu.Unlock()
	return p.Sink.AppendRaw(offset, data)
}

// A slave started after 100k messages (all in one segment, so the whole
// log is copied) ends byte-identical to the master (about 13 s with -race;
// 20k with -short). Other sizes:
//
//	ROCKETD_HA_CATCHUP=500000 go test -run CatchUpAfterMany -v ./internal/ha/
func TestCatchUpAfterManyMessages(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 20000
	}
	if v := os.Getenv("ROCKETD_HA_CATCHUP"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	// One segment holds it all: an empty slave starts at the master's
	// last segment (RocketMQ's rule), so only then is the whole log copied.
	big := func(c *store.Config) { c.SegmentSize = max(64<<20, int64(n)*512) }
	m, srv := newMaster(t, t.TempDir(), ServerConfig{}, big)
	start := time.Now()
	if seen := putN(t, m, "Many", n, 8); seen[store.PutOK] != n {
		t.Fatalf("statuses %v", seen)
	}
	t.Logf("%d messages (%d bytes) written in %v", n, m.CommitLogMaxOffset(), time.Since(start))
	s := newSlaveStore(t, t.TempDir(), big)
	start = time.Now()
	startClient(t, s, srv.Addr().String(), nil)
	caughtUp(t, m, s)
	t.Logf("slave caught up in %v", time.Since(start))
	if s.CommitLogMinOffset() != 0 {
		t.Fatalf("slave starts at %d, want 0 (one segment)", s.CommitLogMinOffset())
	}
	sameCommitLog(t, m, s)
	for q := int32(0); q < 4; q++ {
		if got, want := s.MaxOffset("Many", q), m.MaxOffset("Many", q); got != want {
			t.Errorf("queue %d: slave max offset %d, master %d", q, got, want)
		}
	}
}
