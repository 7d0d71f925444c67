package ha

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rocketd/rocketd/internal/store"
)

// EpochSource is the master's store in AutoSwitch mode: the CommitLog and
// its epoch file (*store.Store).
type EpochSource interface {
	Source
	// Epochs is the epoch file: which master epoch wrote which range.
	Epochs() *store.Epochs
}

// EpochSink is the slave's store in AutoSwitch mode (*store.Store).
type EpochSink interface {
	Sink
	Epochs() *store.Epochs
	// TruncateTo cuts the CommitLog, its queues and the epoch file back
	// to offset, a record boundary (nothing at or beyond the end).
	TruncateTo(offset int64) error
}

// epochCursor follows the master's epoch entries while a connection
// streams: cur is the entry holding the next offset.
type epochCursor struct {
	src     *store.Epochs
	entries []store.EpochEntry
	cur     store.EpochEntry
}

// seek makes cur the entry holding offset (start <= offset < end, the
// last entry open). The entries are read again only when offset left
// cur or the open cur stopped being the last entry (a new epoch began):
// one locked look at the last entry per batch otherwise.
func (e *epochCursor) seek(offset int64) bool {
	if e.cur.StartOffset <= offset && offset < e.cur.EndOffset && e.entries != nil {
		if e.cur.EndOffset != maxEnd {
			return true
		}
		if last, ok := e.src.Last(); ok && last.Epoch == e.cur.Epoch {
			return true
		}
	}
	e.entries = e.src.Entries()
	for _, x := range e.entries {
		if x.StartOffset <= offset && offset < x.EndOffset {
			e.cur = x
			return true
		}
	}
	return false
}

// handshake waits for the slave's handshake and answers it with the
// master's end, last epoch and epoch entries.
func (c *masterConn) handshake(bw *bufio.Writer) error {
	select {
	case <-c.hs:
	case <-c.quit:
		return nil
	}
	entries := c.s.epochs.Entries()
	h := MasterHandshake{MaxOffset: c.s.src.CommitLogMaxOffset(), LastEpoch: -1, Entries: entries}
	if n := len(entries); n > 0 {
		h.LastEpoch = entries[n-1].Epoch
	}
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.HousekeepingInterval)); err != nil {
		return err
	}
	if _, err := bw.Write(h.AppendTo(nil)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("ha: handshake to slave: %w", err)
	}
	c.s.log.Info("ha: handshake with slave", "slave", c.addr, "brokerId", c.brokerID.Load(),
		"maxOffset", h.MaxOffset, "lastEpoch", h.LastEpoch, "epochs", len(entries))
	return nil
}

// readAutoSwitch reads an AutoSwitch slave's frames: its handshake, then
// offset reports.
func (c *masterConn) readAutoSwitch(br *bufio.Reader) error {
	var b [SlaveHandshakeSize]byte
	read := func() (SlaveFrame, error) {
		if _, err := io.ReadFull(br, b[:4]); err != nil {
			return SlaveFrame{}, err
		}
		n := slaveFrameSize(int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])))
		if n == 0 {
			_, _, err := DecodeSlaveFrame(b[:4])
			return SlaveFrame{}, err
		}
		if _, err := io.ReadFull(br, b[4:n]); err != nil {
			return SlaveFrame{}, err
		}
		f, _, err := DecodeSlaveFrame(b[:n])
		return f, err
	}
	handshaken := false
	for {
		if err := c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HousekeepingInterval)); err != nil {
			return err
		}
		f, err := read()
		if err != nil {
			return err
		}
		if f.State == stateHandshake {
			if handshaken {
				return fmt.Errorf("ha: slave %s sent a second handshake", c.addr)
			}
			handshaken = true
			c.brokerID.Store(f.Handshake.BrokerID)
			c.syncFromLastFile.Store(f.Handshake.SyncFromLastFile)
			c.asyncLearner.Store(f.Handshake.AsyncLearner)
			close(c.hs)
			if f := c.s.cfg.OnSlaveChange; f != nil {
				f()
			}
			continue
		}
		if !handshaken {
			return fmt.Errorf("ha: slave %s reported an offset before its handshake (a classic slave on an AutoSwitch master?)", c.addr)
		}
		// Only the last complete report counts.
		for br.Buffered() >= SlaveReportSize {
			p, _ := br.Peek(4)
			if p[0] != 0 || p[1] != 0 || p[2] != 0 || p[3] != byte(stateTransfer) {
				break
			}
			if f, err = read(); err != nil {
				return err
			}
		}
		c.onReport(f.Offset)
	}
}

// onAutoSwitchAck records a report: the slave's caught-up time (Java's
// AutoSwitchHAConnection.maybeExpandInSyncStateSet), the confirm offset
// and the puts it completes.
func (s *Server) onAutoSwitchAck(c *masterConn, off int64) {
	if !c.asyncLearner.Load() && off >= c.lastMasterMax.Load() {
		now := time.Now()
		t := c.lastTransfer.Load()
		if s.src.CommitLogMaxOffset() == off {
			t = now.UnixNano()
		}
		for {
			cur := c.caughtUp.Load()
			if t <= cur || c.caughtUp.CompareAndSwap(cur, t) {
				break
			}
		}
	}
	s.onAck(off)
	s.updateSetAcked()
	if f := s.cfg.OnSlaveChange; f != nil && off >= s.confirm.Load() && !c.asyncLearner.Load() {
		if p := s.syncSet.Load(); p == nil || !slices.Contains(*p, c.brokerID.Load()) {
			f() // a candidate for the set
		}
	}
}

// connGone keeps a closing connection's caught-up time for its broker id
// (Java keeps its table across connections).
func (s *Server) connGone(c *masterConn) {
	id, t := c.brokerID.Load(), c.caughtUp.Load()
	if id < 0 {
		return
	}
	if t != 0 {
		s.setMu.Lock()
		s.caughtUp[id] = max(s.caughtUp[id], t)
		s.setMu.Unlock()
	}
	if f := s.cfg.OnSlaveChange; f != nil {
		f()
	}
}

// SetSyncStateSet tells the master the SyncStateSet the controller
// holds (broker ids, the master's own among them): the confirm offset
// and, with AllAckInSyncStateSet, the waiting puts follow it.
func (s *Server) SetSyncStateSet(ids []int64) {
	set := slices.Clone(ids)
	slices.Sort(set)
	set = slices.Compact(set)
	s.syncSet.Store(&set)
	s.ConfirmOffset()
	s.updateSetAcked()
}

// SyncStateSet is the set last given to SetSyncStateSet (nil: none).
func (s *Server) SyncStateSet() []int64 {
	if p := s.syncSet.Load(); p != nil {
		return slices.Clone(*p)
	}
	return nil
}

// slaveAck is the highest ack of the connections of broker id; ok is
// false when none is connected and has reported.
func (s *Server) slaveAck(ws []*masterConn, id int64) (acked int64, ok bool) {
	acked = -1
	for _, c := range ws {
		if c.brokerID.Load() == id {
			if a := c.acked.Load(); a >= 0 && !c.diverged.Load() {
				acked, ok = max(acked, a), true
			}
		}
	}
	return acked, ok
}

func (s *Server) conns0() []*masterConn {
	if ws := s.writers.Load(); ws != nil {
		return *ws
	}
	return nil
}

// ConfirmOffset is Java's computeConfirmOffset: the smallest ack of the
// SyncStateSet's slaves, at most the master's end (the end itself when
// the set holds the master only). While a slave of the set is not
// connected (or has not reported yet) it stays where it was: the master
// cannot know what that slave holds. Before Start: -1.
func (s *Server) ConfirmOffset() int64 {
	if s.src == nil {
		return -1
	}
	c := s.src.CommitLogMaxOffset()
	if p := s.syncSet.Load(); p != nil {
		ws := s.conns0()
		for _, id := range *p {
			if id == s.cfg.LocalBrokerID {
				continue
			}
			a, ok := s.slaveAck(ws, id)
			if !ok {
				return s.confirm.Load()
			}
			c = min(c, a)
		}
	}
	s.confirm.Store(c)
	return c
}

// confirmOver is the confirm offset over set, the master's end when a
// member's ack is unknown.
func (s *Server) confirmOver(set []int64) int64 {
	c := s.src.CommitLogMaxOffset()
	ws := s.conns0()
	for _, id := range set {
		if a, ok := s.slaveAck(ws, id); ok && id != s.cfg.LocalBrokerID {
			c = min(c, a)
		}
	}
	return c
}

// updateSetAcked moves what every slave of the SyncStateSet holds and
// completes the puts it covers (AllAckInSyncStateSet).
func (s *Server) updateSetAcked() {
	if !s.cfg.AllAckInSyncStateSet {
		return
	}
	a := int64(1<<63 - 1)
	if p := s.syncSet.Load(); p != nil {
		ws := s.conns0()
		for _, id := range *p {
			if id == s.cfg.LocalBrokerID {
				continue
			}
			x, ok := s.slaveAck(ws, id)
			if !ok {
				x = -1
			}
			a = min(a, x)
		}
	}
	s.setAcked.Store(a)
	s.waiters.complete(a)
}

// SlaveInfo is what the broker needs of one slave of an AutoSwitch
// master to shrink and expand the SyncStateSet.
type SlaveInfo struct {
	BrokerID int64
	// Acked is the slave's last report, -1 while it is not connected.
	Acked int64
	// LastCaughtUp is when the slave last held everything the master had
	// sent it (zero: never since this master started).
	LastCaughtUp time.Time
	// AsyncLearner slaves never join the SyncStateSet.
	AsyncLearner bool
	Connected    bool
}

// SlaveInfos lists the slaves known by broker id: connected ones and
// those that were, sorted by id.
func (s *Server) SlaveInfos() []SlaveInfo {
	byID := map[int64]*SlaveInfo{}
	get := func(id int64) *SlaveInfo {
		if x, ok := byID[id]; ok {
			return x
		}
		x := &SlaveInfo{BrokerID: id, Acked: -1}
		byID[id] = x
		return x
	}
	s.setMu.Lock()
	for id, t := range s.caughtUp {
		get(id).LastCaughtUp = time.Unix(0, t)
	}
	s.setMu.Unlock()
	for _, c := range s.conns0() {
		id := c.brokerID.Load()
		if id < 0 {
			continue
		}
		x := get(id)
		x.Connected = true
		x.AsyncLearner = c.asyncLearner.Load()
		if a := c.acked.Load(); a > x.Acked && !c.diverged.Load() {
			x.Acked = a
		}
		if t := c.caughtUp.Load(); t != 0 && time.Unix(0, t).After(x.LastCaughtUp) {
			x.LastCaughtUp = time.Unix(0, t)
		}
	}
	out := make([]SlaveInfo, 0, len(byID))
	for _, x := range byID {
		out = append(out, *x)
	}
	slices.SortFunc(out, func(a, b SlaveInfo) int { return cmpInt64(a.BrokerID, b.BrokerID) })
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ProposeSyncStateSet is Java's maybeShrinkSyncStateSet and
// maybeExpandInSyncStateSet in one: the current set without the slaves
// that have not caught up within maxNotCatchup (haMaxTimeSlaveNotCatchup)
// or are not connected, plus the connected slaves (not
// async learners) whose ack reached the confirm offset and the start of
// the master's last epoch. changed: the broker should send it to the
// controller (ALTER_SYNC_STATE_SET) and, once accepted, SetSyncStateSet.
func (s *Server) ProposeSyncStateSet(now time.Time, maxNotCatchup time.Duration) (set []int64, changed bool) {
	cur := s.SyncStateSet()
	if s.src == nil {
		return cur, false // not started
	}
	infos := s.SlaveInfos()
	byID := make(map[int64]SlaveInfo, len(infos))
	for _, x := range infos {
		byID[x.BrokerID] = x
	}
	for _, id := range cur {
		if id == s.cfg.LocalBrokerID {
			set = append(set, id)
			continue
		}
		// Java drops a member at once when its connection closes.
		x, ok := byID[id]
		if !ok || !x.Connected || x.LastCaughtUp.IsZero() || now.Sub(x.LastCaughtUp) > maxNotCatchup {
			changed = true
			continue
		}
		set = append(set, id)
	}
	if !slices.Contains(set, s.cfg.LocalBrokerID) {
		set = append(set, s.cfg.LocalBrokerID)
		changed = true
	}
	// Java expands against the confirm offset of the set without the
	// candidate: computed here over what is kept.
	confirm := s.confirmOver(set)
	var lastStart int64
	if s.epochs != nil {
		if last, ok := s.epochs.Last(); ok {
			lastStart = last.StartOffset
		}
	}
	for _, x := range infos {
		if !x.Connected || x.AsyncLearner || slices.Contains(set, x.BrokerID) {
			continue
		}
		if x.Acked >= 0 && x.Acked >= confirm && x.Acked >= lastStart {
			set = append(set, x.BrokerID)
			changed = true
		}
	}
	slices.Sort(set)
	return set, changed
}

// ErrStaleMaster: an AutoSwitch master's last epoch is older than the
// slave's or than the epoch the controller named: it is fenced.
var ErrStaleMaster = errors.New("ha: master's epoch is older than the slave's (fenced)")

// handshakeMaster is the slave's side of the AutoSwitch handshake: it
// sends its own, reads the master's epochs, refuses a stale master,
// truncates its store to the consistent point and returns the offset it
// replicates from.
func (c *Client) handshakeMaster(nc interface {
	io.Writer
	SetDeadline(time.Time) error
}, br *bufio.Reader, addr string) (from int64, announced []store.EpochEntry, err error) {
	es := c.sink.(EpochSink)
	if err := nc.SetDeadline(time.Now().Add(c.cfg.HousekeepingInterval)); err != nil {
		return 0, nil, err
	}
	hs := SlaveHandshake{SyncFromLastFile: c.cfg.SyncFromLastFile, AsyncLearner: c.cfg.AsyncLearner, BrokerID: c.cfg.BrokerID}
	if _, err := nc.Write(hs.AppendTo(nil)); err != nil {
		return 0, nil, fmt.Errorf("ha: handshake to master %s: %w", addr, err)
	}
	var hb [MasterHandshakeSize]byte
	if _, err := io.ReadFull(br, hb[:]); err != nil {
		return 0, nil, fmt.Errorf("ha: handshake from master %s: %w", addr, err)
	}
	mh, size, err := DecodeMasterHandshakeHeader(hb[:])
	if err != nil {
		return 0, nil, fmt.Errorf("ha: handshake from master %s: %w", addr, err)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(br, body); err != nil {
		return 0, nil, fmt.Errorf("ha: handshake from master %s: %w", addr, err)
	}
	if mh.Entries, err = DecodeEpochEntries(body); err != nil {
		return 0, nil, fmt.Errorf("ha: handshake from master %s: %w", addr, err)
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return 0, nil, err
	}
	c.lastRead.Store(time.Now().UnixMilli())
	if n := len(mh.Entries); n > 0 && mh.Entries[n-1].Epoch != mh.LastEpoch {
		return 0, nil, fmt.Errorf("ha: handshake from master %s: last epoch %d, last entry's %d", addr, mh.LastEpoch, mh.Entries[n-1].Epoch)
	}
	if f := c.cfg.MasterEpoch; f != nil {
		if want := f(); want > 0 && mh.LastEpoch < want {
			return 0, nil, fmt.Errorf("%w: master %s at epoch %d, the controller named epoch %d", ErrStaleMaster, addr, mh.LastEpoch, want)
		}
	}
	own := es.CommitLogMaxOffset()
	local := es.Epochs().Entries()
	c.log.Info("ha: handshake from master", "master", addr, "masterMaxOffset", mh.MaxOffset, "masterEpochs", mh.Entries,
		"localMaxOffset", own, "localEpochs", local)
	if len(local) == 0 {
		// A new replica (Java skips the truncation): it replicates from
		// its end; a master behind it refuses it as diverged.
		return own, openLast(mh.Entries), nil
	}
	if last := local[len(local)-1].Epoch; mh.LastEpoch < last {
		return 0, nil, fmt.Errorf("%w: master %s at epoch %d, local epoch %d", ErrStaleMaster, addr, mh.LastEpoch, last)
	}
	local[len(local)-1].EndOffset = own
	if n := len(mh.Entries); n > 0 {
		mh.Entries[n-1].EndOffset = max(mh.MaxOffset, mh.Entries[n-1].StartOffset)
	}
	cp := store.ConsistentPoint(local, mh.Entries)
	if cp < 0 {
		return 0, nil, fmt.Errorf("%w: no epoch in common with master %s (local %v, master %v)", ErrDiverged, addr, local, mh.Entries)
	}
	cp = min(cp, own)
	if cp < own {
		c.log.Warn("ha: truncating the local log to the consistent point with the master", "master", addr, "from", own, "to", cp)
		if err := es.TruncateTo(cp); err != nil {
			return 0, nil, fmt.Errorf("ha: truncate to the consistent point %d with master %s: %w", cp, addr, err)
		}
	}
	if err := es.Epochs().TruncateSuffixByOffset(cp); err != nil {
		return 0, nil, fmt.Errorf("ha: truncate the epoch file to %d: %w", cp, err)
	}
	return cp, openLast(mh.Entries), nil
}

// openLast copies a master's handshake entries for checkAnnounced,
// the last one open.
func openLast(entries []store.EpochEntry) []store.EpochEntry {
	a := slices.Clone(entries)
	if n := len(a); n > 0 {
		a[n-1].EndOffset = maxEnd
	}
	return a
}

// checkAnnounced refuses a transfer that contradicts the epochs the
// master announced in its handshake (announced: their ends linked, the
// last open): a known epoch must start where announced and hold the
// transfer's bytes; an unknown one must be newer than all (the master
// took it while streaming) and is added.
func checkAnnounced(announced *[]store.EpochEntry, h TransferHeader) error {
	a := *announced
	for i, e := range a {
		if e.Epoch != h.Epoch {
			continue
		}
		end := h.Offset + int64(h.Size)
		inside := h.Offset >= e.StartOffset && end <= e.EndOffset
		// Java's master names the next epoch in the header of an epoch's
		// last transfer (AutoSwitchHAConnection.transferToSlave switches
		// before it builds the header): bytes ending where it starts.
		tail := h.Size > 0 && end == e.StartOffset && i > 0 && h.Offset >= a[i-1].StartOffset
		if h.EpochStart != e.StartOffset || (!inside && !tail && !(h.Size == 0 && h.Offset == e.EndOffset)) {
			return fmt.Errorf("%w: transfer [%d, %d) of epoch %d from %d, the master announced epoch %d as [%d, %d)",
				ErrStaleMaster, h.Offset, end, h.Epoch, h.EpochStart, e.Epoch, e.StartOffset, e.EndOffset)
		}
		return nil
	}
	if n := len(a); n > 0 && (h.Epoch < a[n-1].Epoch || h.EpochStart < a[n-1].StartOffset) {
		return fmt.Errorf("%w: transfer of epoch %d from %d, not among the epochs the master announced (last %d from %d)",
			ErrStaleMaster, h.Epoch, h.EpochStart, a[n-1].Epoch, a[n-1].StartOffset)
	}
	if n := len(a); n > 0 {
		a[n-1].EndOffset = h.EpochStart
	}
	*announced = append(a, store.EpochEntry{Epoch: h.Epoch, StartOffset: h.EpochStart, EndOffset: maxEnd})
	return nil
}

// applyEpoch records the epoch of a transfer before its bytes: a new
// epoch's entry is appended, an older epoch or another start of the same
// one refused.
func (c *Client) applyEpoch(es EpochSink, h TransferHeader) error {
	ep := es.Epochs()
	last, ok := ep.Last()
	switch {
	case ok && h.Epoch < last.Epoch:
		return fmt.Errorf("%w: a transfer of epoch %d, local epoch %d", ErrStaleMaster, h.Epoch, last.Epoch)
	case ok && h.Epoch == last.Epoch:
		if h.EpochStart != last.StartOffset {
			return fmt.Errorf("%w: epoch %d starts at %d on the master, at %d here", ErrDiverged, h.Epoch, h.EpochStart, last.StartOffset)
		}
		return nil
	}
	if err := ep.Append(h.Epoch, h.EpochStart); err != nil {
		return fmt.Errorf("ha: epoch %d from %d: %w", h.Epoch, h.EpochStart, err)
	}
	c.log.Info("ha: new epoch from master", "epoch", h.Epoch, "start", h.EpochStart)
	return nil
}
