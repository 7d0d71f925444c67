package ha

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// newASMaster opens a master store with an AutoSwitch HA server (broker
// id 0) whose epoch file starts with epoch at the log's end.
func newASMaster(t testing.TB, dir string, epoch int32, scfg ServerConfig) (*store.Store, *Server) {
	t.Helper()
	scfg.AutoSwitch = true
	m, srv := newMaster(t, dir, scfg)
	if err := m.Epochs().Append(epoch, m.CommitLogMaxOffset()); err != nil {
		t.Fatal(err)
	}
	return m, srv
}

// startASServer serves an existing store (a promoted slave) in AutoSwitch
// mode.
func startASServer(t testing.TB, s *store.Store, scfg ServerConfig) *Server {
	t.Helper()
	scfg.AutoSwitch = true
	scfg.Addr = "127.0.0.1:0"
	scfg.SegmentSize = testSegment
	srv := NewServer(scfg)
	if err := srv.Start(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func startASClient(t testing.TB, sink Sink, addr string, id int64, tune func(*ClientConfig)) *Client {
	t.Helper()
	return startClient(t, sink, addr, func(c *ClientConfig) {
		c.AutoSwitch, c.BrokerID = true, id
		if tune != nil {
			tune(c)
		}
	})
}

// sameLog compares the two logs' bytes over [from, end), both ending at end.
func sameLog(t testing.TB, a, b *store.Store, from int64) {
	t.Helper()
	end := a.CommitLogMaxOffset()
	if got := b.CommitLogMaxOffset(); got != end {
		t.Fatalf("logs end at %d and %d", end, got)
	}
	read := func(s *store.Store, off int64) []byte {
		buf, err := s.ReadRaw(off, 64<<10)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		defer buf.Release()
		return slices.Clone(buf.Bytes)
	}
	for off := from; off < end; {
		x, y := read(a, off), read(b, off)
		n := min(len(x), len(y))
		if n == 0 {
			t.Fatalf("nothing readable at %d (end %d)", off, end)
		}
		if !bytes.Equal(x[:n], y[:n]) {
			i := 0
			for x[i] == y[i] {
				i++
			}
			t.Fatalf("logs differ at %d in [%d, %d)", off+int64(i), off, off+int64(n))
		}
		off += int64(n)
	}
}

func epochsOf(s *store.Store) [][2]int64 {
	var out [][2]int64
	for _, e := range s.Epochs().Entries() {
		out = append(out, [2]int64{int64(e.Epoch), e.StartOffset})
	}
	return out
}

func sameEpochs(t testing.TB, want, got *store.Store) {
	t.Helper()
	if w, g := epochsOf(want), epochsOf(got); !slices.Equal(w, g) {
		t.Fatalf("epoch entries %v, want %v", g, w)
	}
}

// An empty slave replicates everything an AutoSwitch master holds across
// epochs and segment ends: the same bytes, the same epoch entries, the
// master's confirm offset, and the master knows it by broker id.
func TestAutoSwitchReplication(t *testing.T) {
	m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{LocalBrokerID: 0})
	putN(t, m, "AS", 800, 4)
	if err := m.Epochs().Append(2, m.CommitLogMaxOffset()); err != nil {
		t.Fatal(err)
	}
	putN(t, m, "AS", 800, 4)
	s := newSlaveStore(t, t.TempDir())
	c := startASClient(t, s, srv.Addr().String(), 7, nil)
	caughtUp(t, m, s)
	// Epoch 3 begins while the slave streams.
	if err := m.Epochs().Append(3, m.CommitLogMaxOffset()); err != nil {
		t.Fatal(err)
	}
	putN(t, m, "AS", 500, 4)
	caughtUp(t, m, s)
	sameLog(t, m, s, 0)
	sameEpochs(t, m, s)
	if m.CommitLogMaxOffset() < 2*testSegment {
		t.Fatalf("log of %d bytes crosses no segment end", m.CommitLogMaxOffset())
	}

	end := m.CommitLogMaxOffset()
	srv.SetSyncStateSet([]int64{0, 7})
	wait.For(t, 10*time.Second, "the master's ack and confirm offset", func() bool {
		in := srv.SlaveInfos()
		return len(in) == 1 && in[0].BrokerID == 7 && in[0].Acked == end && in[0].Connected && srv.ConfirmOffset() == end
	})
	// The confirm offset reaches the slave with the next transfer.
	putN(t, m, "AS", 1, 1)
	wait.For(t, 10*time.Second, "the slave's confirm offset", func() bool { return c.ConfirmOffset() >= end })
	if st := c.Status(); st.State != Replicating || st.ConfirmOffset < 0 {
		t.Fatalf("client status %+v", st)
	}
	if in := srv.SlaveInfos(); in[0].LastCaughtUp.IsZero() {
		t.Fatalf("slave never caught up: %+v", in)
	}
	if sl := srv.Slaves(); len(sl) != 1 || sl[0].BrokerID != 7 {
		t.Fatalf("HA status %+v, want broker 7", sl)
	}
}

// readFrame reads one master frame of the raw slave below.
func readTransfer(t *testing.T, br *bufio.Reader) (TransferHeader, []byte) {
	t.Helper()
	var hb [TransferHeaderSize]byte
	if _, err := io.ReadFull(br, hb[:]); err != nil {
		t.Fatal(err)
	}
	h, err := DecodeTransferHeader(hb[:], DefaultMaxTransfer)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, h.Size)
	if _, err := io.ReadFull(br, data); err != nil {
		t.Fatal(err)
	}
	return h, data
}

// A slave speaking the bytes by hand: the master answers its handshake
// with its end and epochs, then streams from the reported offset with
// headers naming each transfer's epoch, never crossing an epoch's end.
func TestAutoSwitchWireFromMaster(t *testing.T) {
	m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{TransferBatchSize: 8 << 10})
	putN(t, m, "Wire", 300, 2)
	e2 := m.CommitLogMaxOffset()
	if err := m.Epochs().Append(2, e2); err != nil {
		t.Fatal(err)
	}
	putN(t, m, "Wire", 300, 2)
	e3 := m.CommitLogMaxOffset()
	if err := m.Epochs().Append(5, e3); err != nil {
		t.Fatal(err)
	}
	putN(t, m, "Wire", 300, 2)
	end := m.CommitLogMaxOffset()

	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := nc.Write(SlaveHandshake{BrokerID: 3}.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	var hb [MasterHandshakeSize]byte
	if _, err := io.ReadFull(br, hb[:]); err != nil {
		t.Fatal(err)
	}
	mh, size, err := DecodeMasterHandshakeHeader(hb[:])
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(br, body); err != nil {
		t.Fatal(err)
	}
	entries, err := DecodeEpochEntries(body)
	if err != nil {
		t.Fatal(err)
	}
	if mh.MaxOffset != end || mh.LastEpoch != 5 || len(entries) != 3 ||
		entries[0] != (store.EpochEntry{Epoch: 1, StartOffset: 0, EndOffset: e2}) ||
		entries[1] != (store.EpochEntry{Epoch: 2, StartOffset: e2, EndOffset: e3}) ||
		entries[2].Epoch != 5 || entries[2].StartOffset != e3 {
		t.Fatalf("handshake %+v entries %+v; want end %d, epochs 1@0 2@%d 5@%d", mh, entries, end, e2, e3)
	}
	// Report 0 (empty, not from the last file): everything from the first offset.
	if _, err := nc.Write(appendSlaveReport(nil, 0)); err != nil {
		t.Fatal(err)
	}
	ends := map[int32][2]int64{1: {0, e2}, 2: {e2, e3}, 5: {e3, end}}
	var got bytes.Buffer
	for off := int64(0); off < end; {
		h, data := readTransfer(t, br)
		if h.Size == 0 {
			continue
		}
		r, ok := ends[h.Epoch]
		switch {
		case h.Offset != off:
			t.Fatalf("transfer at %d, want %d", h.Offset, off)
		case !ok || h.EpochStart != r[0] || h.Offset < r[0] || h.Offset+int64(h.Size) > r[1]:
			t.Fatalf("transfer [%d, %d) of epoch %d from %d crosses its epoch %v", h.Offset, h.Offset+int64(h.Size), h.Epoch, h.EpochStart, r)
		case h.ConfirmOffset != end:
			// No SyncStateSet: the master alone confirms its end.
			t.Fatalf("confirm offset %d, want %d", h.ConfirmOffset, end)
		}
		got.Write(data)
		off += int64(h.Size)
	}
	buf, err := m.ReadRaw(0, int(end))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	if !bytes.Equal(got.Bytes()[:len(buf.Bytes)], buf.Bytes) {
		t.Fatal("streamed bytes differ from the master's log")
	}
	if _, err := nc.Write(appendSlaveReport(nil, end)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the ack of broker 3", func() bool {
		in := srv.SlaveInfos()
		return len(in) == 1 && in[0].BrokerID == 3 && in[0].Acked == end
	})
}

// A returning old master of epoch 1 holds records the new master (epoch
// 2) never had: it truncates to the end of epoch 1 on the new master,
// then replicates epoch 2 and ends byte-for-byte equal.
func TestAutoSwitchTruncatesOlderEpoch(t *testing.T) {
	a, srvA := newASMaster(t, t.TempDir(), 1, ServerConfig{LocalBrokerID: 1})
	b := newSlaveStore(t, t.TempDir())
	cb := startASClient(t, b, srvA.Addr().String(), 2, nil)
	putN(t, a, "Old", 400, 2)
	caughtUp(t, a, b)
	x1 := a.CommitLogMaxOffset()
	_ = cb.Close()
	putN(t, a, "Old", 300, 2) // never reaches b
	if a.CommitLogMaxOffset() <= x1 {
		t.Fatal("no divergent records")
	}
	_ = srvA.Close()
	a.BecomeSlave()

	// b is elected with epoch 2.
	if err := b.BecomeMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Epochs().Append(2, b.CommitLogMaxOffset()); err != nil {
		t.Fatal(err)
	}
	putN(t, b, "NewTopic", 300, 2)
	srvB := startASServer(t, b, ServerConfig{LocalBrokerID: 2})
	startASClient(t, a, srvB.Addr().String(), 1, func(c *ClientConfig) { c.MasterEpoch = func() int32 { return 2 } })
	wait.For(t, 10*time.Second, "epoch 2 on the old master", func() bool { return len(a.Epochs().Entries()) == 2 })
	caughtUp(t, b, a)
	sameLog(t, b, a, 0)
	sameEpochs(t, b, a)
	if got := epochsOf(a); !slices.Equal(got, [][2]int64{{1, 0}, {2, x1}}) {
		t.Fatalf("epochs %v, want 1@0 2@%d", got, x1)
	}
	// The consume queues were cut too: the old records are gone.
	for _, topic := range []string{"Old", "NewTopic"} {
		if n, want := a.MaxOffset(topic, 0), b.MaxOffset(topic, 0); n != want {
			t.Fatalf("queue %s-0 ends at %d, new master's at %d", topic, n, want)
		}
	}
}

// A slave ahead of its master in the same epoch (the master lost its
// unreplicated tail) is cut back to the master's end instead of being
// refused as diverged.
func TestAutoSwitchSlaveAheadSameEpoch(t *testing.T) {
	m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{})
	putN(t, m, "Same", 300, 2)
	x1 := m.CommitLogMaxOffset()
	putN(t, m, "Same", 300, 2)
	s := newSlaveStore(t, t.TempDir())
	c := startASClient(t, s, srv.Addr().String(), 1, nil)
	caughtUp(t, m, s)
	_ = c.Close()
	_ = srv.Close()
	// The master loses everything after x1, epoch unchanged.
	m.BecomeSlave()
	if err := m.TruncateTo(x1); err != nil {
		t.Fatal(err)
	}
	if err := m.BecomeMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv2 := startASServer(t, m, ServerConfig{})
	startASClient(t, s, srv2.Addr().String(), 1, nil)
	wait.For(t, 10*time.Second, "the slave cut back to the master's end", func() bool { return s.CommitLogMaxOffset() == x1 })
	putN(t, m, "Same", 200, 2)
	caughtUp(t, m, s)
	sameLog(t, m, s, 0)
	sameEpochs(t, m, s)
}

// A master whose last epoch is older than the slave's, or than the one
// the controller named, is refused before anything is truncated; logs
// with no epoch in common are refused as diverged.
func TestAutoSwitchFencesStaleMaster(t *testing.T) {
	// The slave holds epochs 1 and 2; the stale master only epoch 1.
	m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{})
	putN(t, m, "Fence", 200, 2)
	s := newSlaveStore(t, t.TempDir())
	c := startASClient(t, s, srv.Addr().String(), 1, nil)
	caughtUp(t, m, s)
	_ = c.Close()
	_ = srv.Close()
	s.BecomeSlave()
	if err := s.BecomeMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Epochs().Append(2, s.CommitLogMaxOffset()); err != nil {
		t.Fatal(err)
	}
	putN(t, s, "Fence", 100, 2)
	s.BecomeSlave()
	own := s.CommitLogMaxOffset()
	// The stale master wrote more in epoch 1.
	putN(t, m, "Fence", 300, 2)
	srv1 := startASServer(t, m, ServerConfig{})
	c1 := startASClient(t, s, srv1.Addr().String(), 1, nil)
	wait.For(t, 10*time.Second, "the stale master refused", func() bool {
		return errors.Is(c1.Status().Err, ErrStaleMaster)
	})
	_ = c1.Close()
	if got := s.CommitLogMaxOffset(); got != own {
		t.Fatalf("slave log moved from %d to %d", own, got)
	}

	// The controller named epoch 3; a master at 2 is refused.
	m3 := newSlaveStore(t, t.TempDir())
	if err := m3.BecomeMaster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m3.Epochs().Append(2, 0); err != nil {
		t.Fatal(err)
	}
	srv3 := startASServer(t, m3, ServerConfig{})
	e := newSlaveStore(t, t.TempDir())
	c3 := startASClient(t, e, srv3.Addr().String(), 1, func(c *ClientConfig) { c.MasterEpoch = func() int32 { return 3 } })
	wait.For(t, 10*time.Second, "the master below the named epoch refused", func() bool {
		return errors.Is(c3.Status().Err, ErrStaleMaster)
	})
	_ = c3.Close()

	// No epoch in common: epoch 2 starts elsewhere on m3, epoch 1 unknown.
	c4 := startASClient(t, s, srv3.Addr().String(), 1, nil)
	wait.For(t, 10*time.Second, "no consistent point refused", func() bool {
		st := c4.Status()
		return errors.Is(st.Err, ErrDiverged) && st.State == Diverged
	})
	if got := s.CommitLogMaxOffset(); got != own {
		t.Fatalf("slave log moved from %d to %d", own, got)
	}
}

// The master's confirm offset follows the slowest slave of the
// SyncStateSet, stays while a member is away, and SYNC puts with
// allAckInSyncStateSet wait for every member; ProposeSyncStateSet drops
// a member that stopped catching up and adds one that caught up.
func TestAutoSwitchSyncStateSet(t *testing.T) {
	changes := make(chan struct{}, 1)
	m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{LocalBrokerID: 0, Sync: true, AllAckInSyncStateSet: true,
		WaitTimeout: 300 * time.Millisecond, OnSlaveChange: func() {
			select {
			case changes <- struct{}{}:
			default:
			}
		}})
	drain := func() {
		select {
		case <-changes:
		default:
		}
	}
	changed := func(what string) {
		t.Helper()
		select {
		case <-changes:
		case <-time.After(10 * time.Second):
			t.Fatalf("no OnSlaveChange call: %s", what)
		}
	}
	s1 := newSlaveStore(t, t.TempDir())
	s2 := newSlaveStore(t, t.TempDir())
	p1 := &pausedEpochSink{newPausedSink(s1), s1}
	startASClient(t, p1, srv.Addr().String(), 1, nil)
	c2 := startASClient(t, s2, srv.Addr().String(), 2, nil)
	srv.SetSyncStateSet([]int64{0, 1, 2})
	if st := putN(t, m, "Set", 200, 4); st[store.PutOK] != 200 {
		t.Fatalf("statuses %v, want 200 PUT_OK", st)
	}
	caughtUp(t, m, s1)
	caughtUp(t, m, s2)
	end := m.CommitLogMaxOffset()
	wait.For(t, 10*time.Second, "confirm offset at the end", func() bool { return srv.ConfirmOffset() == end })

	// Slave 2 leaves: puts time out waiting for it, the confirm offset stays.
	drain()
	_ = c2.Close()
	changed("slave 2 disconnected")
	wait.For(t, 10*time.Second, "slave 2 gone", func() bool {
		for _, x := range srv.SlaveInfos() {
			if x.BrokerID == 2 && x.Connected {
				return false
			}
		}
		return true
	})
	if st := putN(t, m, "Set", 4, 4); st[store.FlushSlaveTimeout] != 4 {
		t.Fatalf("statuses %v, want FLUSH_SLAVE_TIMEOUT while slave 2 of the set is away", st)
	}
	if got := srv.ConfirmOffset(); got != end {
		t.Fatalf("confirm offset %d while a member is away, want it kept at %d", got, end)
	}
	set, ch := srv.ProposeSyncStateSet(time.Now(), 15*time.Second)
	if !ch || !slices.Equal(set, []int64{0, 1}) {
		t.Fatalf("proposed %v %v, want [0 1] changed (slave 2 not connected)", set, ch)
	}
	srv.SetSyncStateSet(set)
	if st := putN(t, m, "Set", 100, 4); st[store.PutOK] != 100 {
		t.Fatalf("statuses %v, want 100 PUT_OK with slave 2 out of the set", st)
	}
	caughtUp(t, m, s1)
	end = m.CommitLogMaxOffset()
	wait.For(t, 10*time.Second, "confirm offset follows slave 1", func() bool { return srv.ConfirmOffset() == end })

	// Slave 1 stops appending and falls behind: after maxNotCatchup it
	// leaves the proposed set; when it catches up again it is back.
	p1.pause()
	if st := putN(t, m, "Set", 4, 4); st[store.FlushSlaveTimeout] != 4 {
		t.Fatalf("statuses %v, want FLUSH_SLAVE_TIMEOUT while slave 1 is stopped", st)
	}
	if set, changed := srv.ProposeSyncStateSet(time.Now().Add(time.Minute), 15*time.Second); !changed || !slices.Equal(set, []int64{0}) {
		t.Fatalf("proposed %v %v a minute on, want [0] changed", set, changed)
	}
	if set, changed := srv.ProposeSyncStateSet(time.Now(), 15*time.Second); changed || !slices.Equal(set, []int64{0, 1}) {
		t.Fatalf("proposed %v %v, want [0 1] unchanged (behind for less than 15 s)", set, changed)
	}
	p1.resume()
	caughtUp(t, m, s1)

	// Slave 2 returns and catches up: proposed back into the set.
	drain()
	startASClient(t, s2, srv.Addr().String(), 2, nil)
	changed("slave 2 connected")
	caughtUp(t, m, s2)
	changed("slave 2 caught up outside the set")
	wait.For(t, 10*time.Second, "slave 2 proposed back", func() bool {
		set, changed := srv.ProposeSyncStateSet(time.Now(), 15*time.Second)
		return changed && slices.Equal(set, []int64{0, 1, 2})
	})
}

// pausedEpochSink is a pausedSink of an AutoSwitch slave.
type pausedEpochSink struct {
	*pausedSink
	es EpochSink
}

func (p *pausedEpochSink) Epochs() *store.Epochs         { return p.es.Epochs() }
func (p *pausedEpochSink) TruncateTo(offset int64) error { return p.es.TruncateTo(offset) }

// fakeMaster accepts one AutoSwitch slave, reads its handshake, answers
// with entries and then writes frames; it returns the slave's handshake.
func fakeMaster(t *testing.T, entries []store.EpochEntry, end int64, frames ...[]byte) (addr string, got <-chan SlaveHandshake) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan SlaveHandshake, 1)
	done := make(chan struct{})
	t.Cleanup(func() { _ = ln.Close(); <-done })
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		var b [SlaveHandshakeSize]byte
		if _, err := io.ReadFull(nc, b[:]); err != nil {
			return
		}
		f, _, err := DecodeSlaveFrame(b[:])
		if err != nil {
			return
		}
		ch <- f.Handshake
		last := int32(-1)
		if len(entries) > 0 {
			last = entries[len(entries)-1].Epoch
		}
		out := MasterHandshake{MaxOffset: end, LastEpoch: last, Entries: entries}.AppendTo(nil)
		for _, fr := range frames {
			out = append(out, fr...)
		}
		if _, err := nc.Write(out); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, nc) // until the slave closes
	}()
	return ln.Addr().String(), ch
}

// A transfer contradicting the epochs the master announced (here bytes
// of epoch 1, announced empty) is refused (fenced) before its bytes are
// appended, and the slave's handshake carries its id and flags.
func TestAutoSwitchFencesStaleTransfer(t *testing.T) {
	s := newSlaveStore(t, t.TempDir())
	if err := s.Epochs().Append(2, 0); err != nil {
		t.Fatal(err)
	}
	stale := TransferHeader{Size: 4, Offset: 0, Epoch: 1, EpochStart: 0}.AppendTo(nil)
	stale = append(stale, 1, 2, 3, 4)
	addr, got := fakeMaster(t, []store.EpochEntry{{Epoch: 1}, {Epoch: 2}}, 0, stale)
	c := startASClient(t, s, addr, 42, func(c *ClientConfig) { c.SyncFromLastFile, c.AsyncLearner = true, true })
	select {
	case hs := <-got:
		if hs != (SlaveHandshake{SyncFromLastFile: true, AsyncLearner: true, BrokerID: 42}) {
			t.Fatalf("handshake %+v", hs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no handshake")
	}
	wait.For(t, 10*time.Second, "the stale transfer refused", func() bool { return errors.Is(c.Status().Err, ErrStaleMaster) })
	// (The handshake's consistent point, 0, removed the empty epoch 2,
	// as Java's truncateSuffixByOffset does.)
	if s.CommitLogMaxOffset() != 0 || len(epochsOf(s)) != 0 {
		t.Fatalf("slave at %d with epochs %v after a refused transfer", s.CommitLogMaxOffset(), epochsOf(s))
	}
}

// A classic slave on an AutoSwitch master is dropped before anything is
// streamed (its 8-byte report is no AutoSwitch frame).
func TestAutoSwitchRefusesClassicSlave(t *testing.T) {
	m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{})
	putN(t, m, "Classic", 50, 1)
	s := newSlaveStore(t, t.TempDir())
	c := startClient(t, s, srv.Addr().String(), nil)
	wait.For(t, 10*time.Second, "the classic slave dropped", func() bool { return c.Status().Err != nil })
	if s.CommitLogMaxOffset() != 0 {
		t.Fatalf("classic slave received %d bytes", s.CommitLogMaxOffset())
	}
}

// Java's master names the next epoch in the header of an epoch's last
// transfer (its bytes end where that epoch starts): the slave takes it,
// recording the next epoch at its real start.
func TestAutoSwitchJavaEpochTail(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir()))
	putN(t, m, "Tail", 10, 1)
	end := m.CommitLogMaxOffset()
	buf, err := m.ReadRaw(0, int(end))
	if err != nil {
		t.Fatal(err)
	}
	data := slices.Clone(buf.Bytes)
	buf.Release()
	r1 := int64(binary.BigEndian.Uint32(data)) // the first record: epoch 1
	tail := TransferHeader{Size: int32(r1), Offset: 0, Epoch: 2, EpochStart: r1, ConfirmOffset: end}.AppendTo(nil)
	tail = append(tail, data[:r1]...)
	rest := TransferHeader{Size: int32(end - r1), Offset: r1, Epoch: 2, EpochStart: r1, ConfirmOffset: end}.AppendTo(nil)
	rest = append(rest, data[r1:]...)
	addr, _ := fakeMaster(t, []store.EpochEntry{{Epoch: 1}, {Epoch: 2, StartOffset: r1}}, end, tail, rest)
	s := newSlaveStore(t, t.TempDir())
	c := startASClient(t, s, addr, 1, nil)
	caughtUp(t, m, s)
	sameLog(t, m, s, 0)
	if got := epochsOf(s); !slices.Equal(got, [][2]int64{{2, r1}}) {
		t.Fatalf("epochs %v, want 2@%d", got, r1)
	}
	if c.ConfirmOffset() != end {
		t.Fatalf("confirm offset %d, want %d", c.ConfirmOffset(), end)
	}
}
