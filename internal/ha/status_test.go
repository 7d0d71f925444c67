package ha

import (
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// The status the HA admin request reports: per slave its ack, next
// transfer offset and in-sync state on the master; last read and write
// on the slave's client.
func TestRuntimeStatus(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{})
	if got := srv.Slaves(); len(got) != 0 {
		t.Fatalf("slaves before any connected: %+v", got)
	}
	s := newSlaveStore(t, t.TempDir())
	c := startClient(t, s, srv.Addr().String(), nil)
	putN(t, m, "StatusTopic", 200, 2)
	caughtUp(t, m, s)
	end := m.CommitLogMaxOffset()
	wait.For(t, 10*time.Second, "the slave's ack of the master's end", func() bool {
		sl := srv.Slaves()
		return len(sl) == 1 && sl[0].Acked == end && sl[0].Next == end
	})
	sl := srv.Slaves()[0]
	if !sl.InSync || sl.Addr == "" {
		t.Errorf("slave status %+v, want in sync with an address", sl)
	}
	// Sent within the last two seconds, or the window already rolled.
	if sl.BytesPerSecond < 0 || sl.BytesPerSecond > end {
		t.Errorf("bytes per second %d, master end %d", sl.BytesPerSecond, end)
	}
	st := c.Status()
	if st.LastRead.IsZero() || st.LastWrite.IsZero() || st.Offset != end || st.Master != srv.Addr().String() {
		t.Errorf("client status %+v, want reads, writes and offset %d", st, end)
	}
}

func TestFlowPerSecond(t *testing.T) {
	var f flow
	t0 := time.Unix(1000, 0)
	f.add(10, t0)
	f.add(5, t0.Add(500*time.Millisecond))
	if got := f.perSecond(t0.Add(900 * time.Millisecond)); got != 0 {
		t.Errorf("within the first second: %d, want 0 (no whole second yet)", got)
	}
	if got := f.perSecond(t0.Add(1500 * time.Millisecond)); got != 15 {
		t.Errorf("the second after: %d, want 15", got)
	}
	f.add(7, t0.Add(1200*time.Millisecond))
	if got := f.perSecond(t0.Add(1300 * time.Millisecond)); got != 15 {
		t.Errorf("after a rollover: %d, want 15", got)
	}
	if got := f.perSecond(t0.Add(3 * time.Second)); got != 0 {
		t.Errorf("two seconds idle: %d, want 0", got)
	}
}
