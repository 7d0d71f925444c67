package role

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestBrokerMetadataFiles: the two files hold Java's text
// ("cluster#name#id" and "cluster#name#id#checkCode"), read back as
// written, a committed id clears the temp file, and a file of another
// broker set is refused naming the file.
func TestBrokerMetadataFiles(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/store", 0o755); err != nil {
		t.Fatal(err)
	}
	f := newMetadataFiles(fs, "/store")
	if _, ok, err := f.Metadata(); ok || err != nil {
		t.Fatalf("empty store: ok %v err %v", ok, err)
	}
	tmp := TempBrokerMetadata{BrokerMetadata: BrokerMetadata{ClusterName: "C", BrokerName: "b", BrokerID: 2}, RegisterCheckCode: "10.0.0.1:10911;1700000000000"}
	if err := f.WriteTemp(tmp); err != nil {
		t.Fatal(err)
	}
	if b, _ := vfs.ReadFile(fs, "/store/brokerIdentity-temp"); string(b) != "C#b#2#10.0.0.1:10911;1700000000000" {
		t.Fatalf("temp file %q", b)
	}
	got, ok, err := f.Temp()
	if err != nil || !ok || got != tmp {
		t.Fatalf("Temp = %+v %v %v, want %+v", got, ok, err, tmp)
	}
	if err := f.Commit(tmp.BrokerMetadata); err != nil {
		t.Fatal(err)
	}
	if b, _ := vfs.ReadFile(fs, "/store/brokerIdentity"); string(b) != "C#b#2" {
		t.Fatalf("metadata file %q", b)
	}
	if _, ok, _ := f.Temp(); ok {
		t.Fatal("temp file left after the commit")
	}
	md, ok, err := f.Metadata()
	if err != nil || !ok || md != tmp.BrokerMetadata {
		t.Fatalf("Metadata = %+v %v %v", md, ok, err)
	}
	if err := md.check(f.path, "C", "b"); err != nil {
		t.Fatal(err)
	}
	if err := md.check(f.path, "C", "other"); err == nil || !strings.Contains(err.Error(), "brokerIdentity") {
		t.Fatalf("another broker's file: %v", err)
	}
	// Damaged files are errors, not a new identity.
	for _, bad := range []string{"C#b", "C#b#x", "#b#1"} {
		if err := vfs.WriteFileAtomic(fs, f.path, []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.Metadata(); err == nil {
			t.Errorf("%q read without error", bad)
		}
	}
}

// TestSyncStateSetDecisions drives the tracker with a fake clock: a member
// that stops catching up leaves after haMaxTimeSlaveNotCatchup and not
// before; a replica outside the set joins once it holds the confirm
// offset and follows the master's epoch; a replica still on an old epoch
// (a returning old master) never joins, whatever its offset.
func TestSyncStateSetDecisions(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	lag := 15 * time.Second
	tr := newSyncStateTracker(1, 3, 1000, lag, []int64{1, 2, 3}, t0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	p := func(id, off int64, epoch int32) replicaProgress {
		return replicaProgress{ID: id, MaxOffset: off, LastEpoch: epoch, Reached: true}
	}
	check := func(now time.Time, end int64, cur []int64, reps []replicaProgress, want []int64, wantChanged bool) {
		t.Helper()
		got, changed := tr.decide(now, end, cur, reps)
		if !slices.Equal(got, want) || changed != wantChanged {
			t.Fatalf("at +%v: decide = %v changed %v, want %v changed %v", now.Sub(t0), got, changed, want, wantChanged)
		}
	}
	set := []int64{1, 2, 3}
	// Both slaves caught up.
	check(at(5), 2000, set, []replicaProgress{p(2, 2000, 3), p(3, 2000, 3)}, set, false)
	// 3 stops at 3000 while the master goes on: at +20 it holds what
	// the master held at +10, so it was caught up at +10, not later.
	check(at(10), 3000, set, []replicaProgress{p(2, 3000, 3), p(3, 3000, 3)}, set, false)
	check(at(20), 4000, set, []replicaProgress{p(2, 4000, 3), p(3, 3000, 3)}, set, false)
	check(at(25), 5000, set, []replicaProgress{p(2, 5000, 3), {ID: 3}}, set, false) // unreachable: 15 s not over yet
	set2 := []int64{1, 2}
	check(at(26), 6000, set, []replicaProgress{p(2, 6000, 3), p(3, 3500, 3)}, set2, true)
	// 3 comes back but below the confirm offset (2's end): not yet.
	check(at(30), 7000, set2, []replicaProgress{p(2, 7000, 3), p(3, 6500, 3)}, set2, false)
	// Holding the confirm offset: it joins.
	check(at(35), 8000, set2, []replicaProgress{p(2, 7500, 3), p(3, 7500, 3)}, set, true)
	// A replica 4 on an older epoch with more data never joins.
	check(at(40), 9000, set, []replicaProgress{p(2, 9000, 3), p(3, 9000, 3), p(4, 99999, 2)}, set, false)
	// Once it follows epoch 3 and holds the confirm offset, it does.
	check(at(45), 9000, set, []replicaProgress{p(2, 9000, 3), p(3, 9000, 3), p(4, 9000, 3)}, []int64{1, 2, 3, 4}, true)
	// A master alone: members all gone after the lag.
	tr2 := newSyncStateTracker(5, 1, 0, lag, []int64{5, 6}, t0)
	if got, changed := tr2.decide(at(16), 100, []int64{5, 6}, nil); !slices.Equal(got, []int64{5}) || !changed {
		t.Fatalf("unconnected member kept: %v %v", got, changed)
	}
}

// TestAckPolicyCovered: every named member must hold the offset; unnamed
// members are matched by unnamed connections, each of which must hold it.
func TestAckPolicyCovered(t *testing.T) {
	p := &ackPolicy{members: []int64{2, 3}}
	for _, c := range []struct {
		name string
		acks []slaveAck
		want bool
	}{
		{"both named", []slaveAck{{2, 100}, {3, 100}}, true},
		{"one named behind", []slaveAck{{2, 100}, {3, 99}}, false},
		{"one missing", []slaveAck{{2, 100}}, false},
		{"non-member named does not count", []slaveAck{{2, 100}, {4, 100}}, false},
		{"unnamed pair", []slaveAck{{-1, 100}, {-1, 100}}, true},
		{"unnamed one behind", []slaveAck{{-1, 100}, {-1, 50}}, false},
		{"unnamed too few", []slaveAck{{-1, 100}}, false},
		{"mixed", []slaveAck{{2, 100}, {-1, 100}}, true},
		{"mixed lagging unnamed", []slaveAck{{2, 100}, {-1, 100}, {-1, 10}}, false},
	} {
		if got := p.covered(c.acks, 100); got != c.want {
			t.Errorf("%s: covered = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRoleChangedFenced: a NOTIFY_BROKER_ROLE_CHANGED for an older master
// epoch than the one followed is refused and never reaches the loop; a
// newer one does; a header without a parsable epoch is refused.
func TestRoleChangedFenced(t *testing.T) {
	m := &controllerMode{log: discardLogger()}
	m.masterEpoch.Store(5)
	notify := func(epoch int32) *remoting.Command {
		ext := protocol.Ext(&protocol.MasterInfoHeader{MasterBrokerID: protocol.Some(int64(2)), MasterAddress: "127.0.0.1:1",
			MasterEpoch: protocol.Some(epoch), SyncStateSetEpoch: protocol.Some(int32(1))})
		body, err := protocol.MarshalFastJSON(&protocol.SyncStateSet{SyncStateSet: []int64{2}, SyncStateSetEpoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		return remoting.NewRequest(protocol.NotifyBrokerRoleChanged, ext, body)
	}
	err := m.notified(notify(4))
	var stale *StaleEpochError
	if !errors.As(err, &stale) || stale.Epoch != 4 || stale.Current != 5 {
		t.Fatalf("stale notification: %v", err)
	}
	if m.pending.Load() != nil {
		t.Fatal("a stale notification was queued")
	}
	if err := m.notified(notify(6)); err != nil {
		t.Fatal(err)
	}
	if mi := m.pending.Load(); mi == nil || mi.MasterEpoch != 6 || !slices.Equal(mi.SyncStateSet, []int64{2}) {
		t.Fatalf("pending %+v", mi)
	}
	bad := remoting.NewRequest(protocol.NotifyBrokerRoleChanged, map[string]string{"masterEpoch": "x"}, nil)
	if err := m.notified(bad); err == nil {
		t.Fatal("bad header taken")
	}
}

// TestPrepareSlaveTruncates: a returning old master whose log goes on past
// the epoch it shares with the new master is cut to the consistent point,
// and takes the master's epochs; a fresh replica is not cut.
func TestPrepareSlaveTruncates(t *testing.T) {
	fs := vfs.NewMem()
	for _, d := range []string{"/e", "/f", "/g"} {
		if err := fs.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ep, err := store.OpenEpochs(fs, "/e/"+store.EpochFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := ep.Append(1, 0); err != nil {
		t.Fatal(err)
	}
	if err := ep.Append(2, 500); err != nil {
		t.Fatal(err)
	}
	st := &fakeStore{epochs: ep, end: 900}
	// The new master took epoch 3 at 700: epoch 2 ended at 700 there.
	master := &protocol.EpochEntryCache{EpochList: []protocol.EpochEntry{{Epoch: 1, StartOffset: 0, EndOffset: 500},
		{Epoch: 2, StartOffset: 500, EndOffset: 700}, {Epoch: 3, StartOffset: 700, EndOffset: 1 << 62}}, MaxOffset: 1200}
	if err := (classicHA{}).prepareSlave(st, master); err != nil {
		t.Fatal(err)
	}
	if st.truncatedTo != 700 {
		t.Fatalf("truncated to %d, want 700", st.truncatedTo)
	}
	var got []int32
	for _, e := range ep.Entries() {
		got = append(got, e.Epoch)
	}
	if !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("epochs after %v", ep.Entries())
	}
	// No shared epoch: refused.
	ep2, _ := store.OpenEpochs(fs, "/f/"+store.EpochFile)
	if err := ep2.Append(9, 0); err != nil {
		t.Fatal(err)
	}
	if err := (classicHA{}).prepareSlave(&fakeStore{epochs: ep2, end: 10}, master); !errors.Is(err, ErrNoConsistentPoint) {
		t.Fatalf("no consistent point: %v", err)
	}
	// A fresh replica: nothing cut, epochs copied.
	ep3, _ := store.OpenEpochs(fs, "/g/"+store.EpochFile)
	fresh := &fakeStore{epochs: ep3, end: 100, truncatedTo: -1}
	if err := (classicHA{}).prepareSlave(fresh, master); err != nil || fresh.truncatedTo != -1 || len(ep3.Entries()) != 3 {
		t.Fatalf("fresh replica: err %v truncated %d epochs %v", err, fresh.truncatedTo, ep3.Entries())
	}
}

// fakeStore is the part of the store prepareSlave uses.
type fakeStore struct {
	Store
	epochs      *store.Epochs
	end         int64
	truncatedTo int64
}

func (f *fakeStore) Epochs() *store.Epochs     { return f.epochs }
func (f *fakeStore) CommitLogMaxOffset() int64 { return f.end }
func (f *fakeStore) TruncateTo(off int64) error {
	f.truncatedTo, f.end = off, off
	return f.epochs.TruncateSuffixByOffset(off)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
