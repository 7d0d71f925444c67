package role

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
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

// TestUnsignedRoleChangeIsAHint: with authentication on, a
// NOTIFY_BROKER_ROLE_CHANGED that failed the check (the controllers send
// it unsigned) is never applied: it only asks the loop for a
// GET_REPLICA_INFO round, and repeated ones coalesce into one.
func TestUnsignedRoleChangeIsAHint(t *testing.T) {
	m := &controllerMode{log: discardLogger(), refresh: make(chan struct{}, 1)}
	r := &Role{ctl: m}
	ext := protocol.Ext(&protocol.MasterInfoHeader{MasterBrokerID: protocol.Some(int64(9)), MasterAddress: "127.0.0.1:1",
		MasterEpoch: protocol.Some(int32(99)), SyncStateSetEpoch: protocol.Some(int32(1))})
	for range 3 {
		if resp := r.HandleRoleChangedUnsigned(nil, remoting.NewRequest(protocol.NotifyBrokerRoleChanged, ext, nil)); resp.Code != protocol.Success {
			t.Fatalf("answer %d %q", resp.Code, resp.Remark)
		}
	}
	if m.pending.Load() != nil {
		t.Fatal("an unsigned notification was queued for the loop to apply")
	}
	if len(m.refresh) != 1 {
		t.Fatalf("%d refresh kicks pending, want 1", len(m.refresh))
	}
	// Outside controller mode it does nothing.
	if resp := (&Role{}).HandleRoleChangedUnsigned(nil, remoting.NewRequest(protocol.NotifyBrokerRoleChanged, ext, nil)); resp.Code != protocol.Success {
		t.Fatalf("answer %d", resp.Code)
	}
}

// TestControllerModeReplicatesByBrokerID: in controller mode the role's
// HA server and client speak AutoSwitch: the slave handshakes with its
// brokerId (the master's SlaveInfos name it), the master starts with the
// SyncStateSet of its promotion, a connecting slave asks the controller
// loop for a check, and the proposal expands the set by that id once the
// slave caught up; a put waits for every member (allAckInSyncStateSet).
func TestControllerModeReplicatesByBrokerID(t *testing.T) {
	bc := config.NewBrokerConfig()
	bc.EnsureDefaults()
	bc.EnableControllerMode = true
	bc.AllAckInSyncStateSet = true
	newRole := func(id int64) *Role {
		r := &Role{cfg: Config{HAListenAddr: "127.0.0.1:0", SegmentSize: 1 << 20}, bc: &bc, log: discardLogger()}
		r.ctl = &controllerMode{r: r, log: r.log, now: time.Now, check: make(chan struct{}, 1)}
		r.ctl.id.Store(id)
		return r
	}
	storeCfg := func(dir string, slave bool) store.Config {
		return store.Config{Dir: dir, FS: vfs.Default, SegmentSize: 1 << 20, CQUnitsPerFile: 1000, MaxMessageSize: 64 << 10,
			StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), CQFlushInterval: 20 * time.Millisecond,
			FlushInterval: 20 * time.Millisecond, Slave: slave}
	}

	mr := newRole(1)
	mr.ctl.startSet.Store(&[]int64{1})
	srv := mr.newServer(config.AsyncMaster)
	mcfg := storeCfg(t.TempDir(), false)
	mcfg.Replica = srv
	ms, err := store.Open(mcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ms.Close() })
	if err := ms.Epochs().Append(1, 0); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ms); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if got := srv.SyncStateSet(); !slices.Equal(got, []int64{1}) {
		t.Fatalf("master's SyncStateSet %v, want the promotion's [1]", got)
	}
	put := func() {
		t.Helper()
		rec := &message.Record{Topic: "T", QueueID: 0, Body: []byte("hello"), BornHost: netip.MustParseAddrPort("10.0.0.1:5000"),
			BornTimestamp: time.Now().UnixMilli()}
		if res := ms.PutMessage(context.Background(), rec, store.PutOptions{}); res.Status != store.PutOK {
			t.Fatalf("put: %+v", res)
		}
	}
	put()

	sr := newRole(2)
	addr := srv.Addr().String()
	sr.masterHA.Store(&addr)
	sr.assigned.Store(true)
	ss, err := store.Open(storeCfg(t.TempDir(), true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	c := sr.newClient(2, 1)
	if err := c.Start(ss); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	wait.For(t, 10*time.Second, "the slave known to the master by brokerId 2, caught up", func() bool {
		in := srv.SlaveInfos()
		return len(in) == 1 && in[0].BrokerID == 2 && in[0].Connected && in[0].Acked == ms.CommitLogMaxOffset()
	})
	select {
	case <-mr.ctl.check:
	default:
		t.Fatal("the slave's arrival asked for no SyncStateSet check")
	}
	set, changed := srv.ProposeSyncStateSet(time.Now(), bc.HAMaxTimeSlaveNotCatchup)
	if !changed || !slices.Equal(set, []int64{1, 2}) {
		t.Fatalf("proposal %v changed %v, want [1 2]", set, changed)
	}
	if got := ss.Epochs().LastEpoch(); got != 1 {
		t.Fatalf("slave's epoch file ends at epoch %d, want the master's 1", got)
	}
	// With 2 in the set a put is answered once the slave acked it.
	srv.SetSyncStateSet(set)
	put()
	if a := srv.SlaveInfos()[0].Acked; a != ms.CommitLogMaxOffset() {
		t.Fatalf("put answered before the member acked: ack %d, end %d", a, ms.CommitLogMaxOffset())
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestMinInSyncReplicasRefusesBeforeWrite: a controller-mode master whose
// SyncStateSet is smaller than minInSyncReplicas refuses a put that waits
// with IN_SYNC_REPLICAS_NOT_ENOUGH before writing it (the CommitLog does
// not move), as Java's CommitLog.asyncPutMessage does, whatever
// allAckInSyncStateSet says; a put that does not wait (WAIT=false) is
// stored; once the set has minInSyncReplicas members puts are taken, and
// a slave takes none of this policy.
func TestMinInSyncReplicasRefusesBeforeWrite(t *testing.T) {
	bc := config.NewBrokerConfig()
	bc.EnsureDefaults()
	bc.EnableControllerMode = true
	bc.AllAckInSyncStateSet = false
	bc.MinInSyncReplicas = 2
	r := &Role{cfg: Config{HAListenAddr: "127.0.0.1:0", SegmentSize: 1 << 20}, bc: &bc, log: discardLogger()}
	r.ctl = &controllerMode{r: r, log: r.log, now: time.Now, check: make(chan struct{}, 1)}
	r.ctl.id.Store(1)
	r.ctl.startSet.Store(&[]int64{1})
	srv := r.newServer(config.AsyncMaster)
	s, err := store.Open(store.Config{Dir: t.TempDir(), FS: vfs.Default, SegmentSize: 1 << 20, CQUnitsPerFile: 1000,
		MaxMessageSize: 64 << 10, StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), CQFlushInterval: 20 * time.Millisecond,
		FlushInterval: 20 * time.Millisecond, Replica: replica{r}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := srv.Start(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	r.cur.Store(&state{role: config.AsyncMaster, brokerID: masterID, epoch: 1, server: srv})
	r.ctl.master = true
	r.ctl.sssEpoch = -1
	r.ctl.changeSyncStateSet([]int64{1}, 1)

	put := func(opts store.PutOptions) store.PutResult {
		rec := &message.Record{Topic: "T", QueueID: 0, Body: []byte("hello"), BornHost: netip.MustParseAddrPort("10.0.0.1:5000"),
			BornTimestamp: time.Now().UnixMilli()}
		return s.PutMessage(context.Background(), rec, opts)
	}
	if res := put(store.PutOptions{}); res.Status != store.InSyncReplicasNotEnough || res.Status.Stored() {
		t.Fatalf("put with a SyncStateSet of 1 < minInSyncReplicas 2: %v, want IN_SYNC_REPLICAS_NOT_ENOUGH", res.Status)
	}
	batch := []message.Record{{Topic: "T", Body: []byte("a"), BornHost: netip.MustParseAddrPort("10.0.0.1:5000")}}
	if res := s.PutMessages(context.Background(), batch, store.PutOptions{}); res.Status != store.InSyncReplicasNotEnough {
		t.Fatalf("batch put: %v, want IN_SYNC_REPLICAS_NOT_ENOUGH", res.Status)
	}
	if end := s.CommitLogMaxOffset(); end != 0 {
		t.Fatalf("refused puts were written: CommitLog end %d", end)
	}
	if res := put(store.PutOptions{NoWait: true}); res.Status != store.PutOK {
		t.Fatalf("a put that does not wait: %v, want PUT_OK", res.Status)
	}
	r.ctl.changeSyncStateSet([]int64{1, 2}, 2)
	if res := put(store.PutOptions{}); res.Status != store.PutOK {
		t.Fatalf("put with a SyncStateSet of 2: %v, want PUT_OK", res.Status)
	}
	r.ctl.changeSyncStateSet([]int64{1}, 3)
	if res := put(store.PutOptions{}); res.Status != store.InSyncReplicasNotEnough {
		t.Fatalf("put after the shrink: %v, want IN_SYNC_REPLICAS_NOT_ENOUGH", res.Status)
	}
	// A demoted master drops the policy.
	r.ctl.master = false
	r.ctl.publishInSync()
	if st := (replica{r}).Admit(); st != store.PutOK {
		t.Fatalf("Admit on a slave: %v", st)
	}
}

// TestUndecidedEpochCacheNotMaster: a controller-mode broker that has not
// taken a role yet (just started) answers GET_BROKER_EPOCH_CACHE with the
// brokerId the controller gave it, not the master's 0, even once its
// epoch file holds the epoch of its promotion: a slave takes brokerId 0
// at that epoch as "the master's HA server runs" and would otherwise
// replicate from listenPort+1 instead of the haServerAddr a promoted
// master answers (a restarted master elected again, test
// TestControllerModeNoUncleanElection).
func TestUndecidedEpochCacheNotMaster(t *testing.T) {
	bc := config.NewBrokerConfig()
	bc.EnsureDefaults()
	bc.EnableControllerMode = true
	r := &Role{cfg: Config{HAListenAddr: "127.0.0.1:0", SegmentSize: 1 << 20}, bc: &bc, log: discardLogger()}
	r.ctl = &controllerMode{r: r, log: r.log, now: time.Now, check: make(chan struct{}, 1)}
	r.cur.Store(&state{role: config.Slave, undecided: true})
	s, err := store.Open(store.Config{Dir: t.TempDir(), FS: vfs.Default, SegmentSize: 1 << 20, CQUnitsPerFile: 1000,
		MaxMessageSize: 64 << 10, StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), Slave: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r.store = s
	r.ctl.id.Store(1)
	if err := s.Epochs().Append(3, 0); err != nil { // the promotion took epoch 3
		t.Fatal(err)
	}
	resp := r.HandleEpochCache(nil, remoting.NewRequest(protocol.GetBrokerEpochCache, nil, nil))
	var c protocol.EpochEntryCache
	if resp.Code != protocol.Success || protocol.UnmarshalFastJSON(resp.Body, &c) != nil {
		t.Fatalf("GET_BROKER_EPOCH_CACHE: %d %s", resp.Code, resp.Remark)
	}
	if c.BrokerID != 1 || c.HAServerAddr != "" {
		t.Fatalf("undecided broker answered brokerId %d haServerAddr %q, want 1 and none", c.BrokerID, c.HAServerAddr)
	}
}
