package role

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/controller/client"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// controllerMode is the broker's side of controller mode
// (enableControllerMode=true), as Java's ReplicasManager: the brokerId
// from the controller, kept in the metadata files; the registration with
// the controller; the role the controller names (BecomeMaster /
// BecomeSlave); heartbeats; and on a master the SyncStateSet upkeep. Two
// owned goroutines: the heartbeat loop, and the controller loop, which
// alone changes the role and holds the loop-owned fields below.
type controllerMode struct {
	r     *Role
	cl    *client.Client
	rc    *remoting.Client // signs cl's requests (authenticationEnabled); nil: cl owns its own
	files metadataFiles
	now   func() time.Time
	log   *slog.Logger

	id          atomic.Int64 // the controller's brokerId for this broker; 0 until known
	masterEpoch atomic.Int32 // the master epoch taken or followed (notifications below it are fenced)

	loop lifecycle.Loop // the controller loop
	hb   lifecycle.Loop // the heartbeat loop

	// pending is the newest NOTIFY_BROKER_ROLE_CHANGED not yet applied.
	pending atomic.Pointer[client.MasterInfo]

	// startSet is the SyncStateSet a promotion names, given to the HA
	// server as it is created (newServer).
	startSet atomic.Pointer[[]int64]
	// check asks the loop for a SyncStateSet check (the HA server's
	// OnSlaveChange); capacity 1, kicks coalesce.
	check chan struct{}
	// refresh asks the loop for a GET_REPLICA_INFO round now: an
	// unsigned NOTIFY_BROKER_ROLE_CHANGED under authentication (Refresh);
	// capacity 1, kicks coalesce.
	refresh chan struct{}

	// Loop-owned.
	master    bool // this broker is the master the controller named
	sss       []int64
	sssEpoch  int32
	alterFail time.Time // the last refused ALTER_SYNC_STATE_SET
	loopWarn  lograte.Limiter
	hbWarn    lograte.Limiter
	checkWarn lograte.Limiter
}

func newControllerMode(r *Role) (*controllerMode, error) {
	bc := r.bc
	// Java's BrokerOuterAPI sends the controller requests on the client
	// that signs everything with innerClientAuthenticationCredentials
	// (AclClientRPCHook); Java's controller checks nothing, rocketd's
	// neither, but a signed request passes either way.
	var rc *remoting.Client
	if c := r.cfg.Credentials; c != nil {
		rc = remoting.NewClient(remoting.ClientConfig{Logger: r.log, BeforeRequest: c.Sign})
	}
	cl, err := client.New(strings.Join(bc.ControllerAddrs(), ";"), rc)
	if err != nil {
		if rc != nil {
			_ = rc.Close()
		}
		return nil, fmt.Errorf("broker: controllerAddr: %w", err)
	}
	if r.cfg.Authenticator != nil {
		// Java's AutoSwitch HA port has no authentication and Java's
		// slaves could not answer a challenge: the port stays open as
		// Java's. Said loudly, once, naming it.
		r.log.Warn("broker: authenticationEnabled in controller mode: the AutoSwitch HA port is NOT authenticated "+
			"(as in Apache RocketMQ): whoever reaches it can read this broker's CommitLog once it is master; "+
			"firewall it to the other brokers of the set (bindAddress narrows where it listens)",
			"haListenAddr", r.cfg.HAListenAddr)
	}
	return &controllerMode{r: r, cl: cl, rc: rc, files: newMetadataFiles(r.cfg.FS, bc.StorePathRootDir), now: time.Now, log: r.log,
		check: make(chan struct{}, 1), refresh: make(chan struct{}, 1)}, nil
}

func (m *controllerMode) start() {
	m.hb.Start("broker-controller-heartbeat", m.heartbeatLoop)
	m.loop.Start("broker-controller", m.run)
}

// close stops both loops and waits for them. Idempotent.
func (m *controllerMode) close() {
	m.loop.Close()
	m.hb.Close()
	_ = m.cl.Close()
	if m.rc != nil {
		_ = m.rc.Close()
	}
}

// controllerRetry bounds the pause between failed start-up attempts and
// between failed role changes.
const (
	controllerRetryMin = 200 * time.Millisecond
	controllerRetryMax = 5 * time.Second
)

// alterRetryPause: after a refused ALTER_SYNC_STATE_SET, slave changes do
// not trigger checks for this long (the acks of a candidate would send
// one per ack).
const alterRetryPause = time.Second

// kickCheck asks the controller loop for a SyncStateSet check without
// blocking (the HA server's OnSlaveChange, on a connection's goroutine).
func (m *controllerMode) kickCheck() {
	select {
	case m.check <- struct{}{}:
	default:
	}
}

// run registers with the controller (retrying until it works), then
// applies notifications as they come, asks for the set's master every
// syncBrokerMetadataPeriod (and sooner after a failed change) and, on a
// master, checks the SyncStateSet every checkSyncStateSetPeriod.
func (m *controllerMode) run(ctx context.Context) {
	bc := m.r.bc
	retry := backoff{min: controllerRetryMin, max: controllerRetryMax}
	for {
		err := m.startup(ctx)
		if err == nil {
			break
		}
		m.loopWarn.Log(m.log, slog.LevelWarn, "broker: controller mode: start-up failed, retrying", "err", err)
		if !sleepCtx(ctx, retry.wait()) {
			return
		}
	}
	retry.reset()
	syncT := time.NewTicker(bc.SyncBrokerMetadataPeriod)
	defer syncT.Stop()
	checkT := time.NewTicker(bc.CheckSyncStateSetPeriod)
	defer checkT.Stop()
	again := time.NewTimer(time.Hour)
	again.Stop()
	defer again.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-m.loop.Kicked():
			if mi := m.pending.Swap(nil); mi != nil {
				err = m.apply(ctx, mi, "notification")
			}
		case <-syncT.C:
			err = m.syncReplicaInfo(ctx)
		case <-again.C:
			err = m.syncReplicaInfo(ctx)
		case <-m.refresh:
			err = m.syncReplicaInfo(ctx)
		case <-checkT.C:
			m.checkSyncStateSet(ctx)
		case <-m.check:
			// A slave came, went or caught up; after a refusal the
			// ticker alone retries for a while.
			if m.now().Sub(m.alterFail) >= alterRetryPause {
				m.checkSyncStateSet(ctx)
			}
		}
		if err != nil && ctx.Err() == nil {
			m.loopWarn.Log(m.log, slog.LevelWarn, "broker: controller mode: role change failed, retrying", "err", err)
			again.Reset(retry.wait())
		} else if err == nil {
			retry.reset()
		}
	}
}

// startup is Java's startBasicService: the brokerId, the registration,
// a first heartbeat, then the role (an election when the set has no
// master). A failed role change is retried by the loop.
func (m *controllerMode) startup(ctx context.Context) error {
	bc := m.r.bc
	id, err := m.brokerID(ctx)
	if err != nil {
		return err
	}
	m.id.Store(id)
	rctx, cancel := context.WithTimeout(ctx, bc.RegisterBrokerTimeout)
	mi, err := m.cl.RegisterBroker(rctx, bc.BrokerClusterName, bc.BrokerName, id, m.r.cfg.Addr)
	cancel()
	if err != nil {
		return fmt.Errorf("broker: register with the controller as brokerId %d: %w", id, err)
	}
	m.log.Info("broker: registered with the controller", "brokerId", id, "masterId", mi.MasterBrokerID, "hasMaster", mi.HasMaster,
		"masterEpoch", mi.MasterEpoch)
	m.hb.Kick()
	if err := m.apply(ctx, mi, "registration"); err != nil {
		m.loopWarn.Log(m.log, slog.LevelWarn, "broker: controller mode: first role change failed, retrying", "err", err)
	}
	return nil
}

// brokerID is Java's register(): the id in the metadata file, else the
// one the temp file applied for, else a new one from GET_NEXT_BROKER_ID
// (persisted in the temp file with its registerCheckCode first), applied
// for with APPLY_BROKER_ID and then committed to the metadata file.
func (m *controllerMode) brokerID(ctx context.Context) (int64, error) {
	bc := m.r.bc
	md, ok, err := m.files.Metadata()
	if err != nil {
		return 0, err
	}
	if ok {
		if err := md.check(m.files.path, bc.BrokerClusterName, bc.BrokerName); err != nil {
			return 0, err
		}
		return md.BrokerID, nil
	}
	tmp, ok, err := m.files.Temp()
	if err != nil {
		return 0, err
	}
	if ok {
		if err := tmp.check(m.files.tempPath(), bc.BrokerClusterName, bc.BrokerName); err != nil {
			return 0, err
		}
	} else {
		next, err := m.cl.GetNextBrokerID(ctx, bc.BrokerClusterName, bc.BrokerName)
		if err != nil {
			return 0, fmt.Errorf("broker: get next brokerId: %w", err)
		}
		tmp = TempBrokerMetadata{BrokerMetadata: BrokerMetadata{ClusterName: bc.BrokerClusterName, BrokerName: bc.BrokerName, BrokerID: next},
			RegisterCheckCode: m.r.cfg.Addr + ";" + strconv.FormatInt(m.now().UnixMilli(), 10)}
		if err := m.files.WriteTemp(tmp); err != nil {
			return 0, err
		}
	}
	if err := m.cl.ApplyBrokerID(ctx, bc.BrokerClusterName, bc.BrokerName, tmp.BrokerID, tmp.RegisterCheckCode); err != nil {
		if client.Code(err) >= 0 {
			// Refused: another broker holds the id. Start over with a new one.
			if cerr := m.files.ClearTemp(); cerr != nil {
				return 0, errors.Join(err, cerr)
			}
		}
		return 0, fmt.Errorf("broker: apply for brokerId %d: %w", tmp.BrokerID, err)
	}
	if err := m.files.Commit(tmp.BrokerMetadata); err != nil {
		return 0, err
	}
	m.log.Info("broker: brokerId assigned by the controller", "brokerId", tmp.BrokerID)
	return tmp.BrokerID, nil
}

// notified takes a NOTIFY_BROKER_ROLE_CHANGED: one for an older master
// epoch than the broker's is fenced (dropped); a newer one is left for
// the controller loop.
func (m *controllerMode) notified(req *remoting.Command) error {
	mi, err := decodeMasterInfo(req)
	if err != nil {
		return err
	}
	if cur := m.masterEpoch.Load(); mi.MasterEpoch < cur {
		m.log.Warn("broker: role change notification fenced: stale master epoch", "epoch", mi.MasterEpoch, "current", cur,
			"masterId", mi.MasterBrokerID)
		return &StaleEpochError{Epoch: mi.MasterEpoch, Current: cur}
	}
	m.pending.Store(mi)
	m.loop.Kick()
	return nil
}

func decodeMasterInfo(req *remoting.Command) (*client.MasterInfo, error) {
	var h protocol.MasterInfoHeader
	if err := h.Decode(req.Ext()); err != nil {
		return nil, fmt.Errorf("broker: role change notification: %w", err)
	}
	mi := &client.MasterInfo{HasMaster: h.MasterBrokerID.Set, MasterBrokerID: h.MasterBrokerID.Value, MasterAddress: h.MasterAddress,
		MasterEpoch: h.MasterEpoch.Value, SyncStateSetEpoch: h.SyncStateSetEpoch.Value}
	if len(req.Body) > 0 {
		var ss protocol.SyncStateSet
		if err := protocol.UnmarshalFastJSON(req.Body, &ss); err != nil {
			return nil, fmt.Errorf("broker: role change notification: body: %w", err)
		}
		mi.SyncStateSet = ss.SyncStateSet
	}
	return mi, nil
}

// syncReplicaInfo is Java's schedulingSyncBrokerMetadata round.
func (m *controllerMode) syncReplicaInfo(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.r.bc.SyncBrokerMetadataPeriod)
	defer cancel()
	mi, err := m.cl.GetReplicaInfo(ctx, m.r.bc.BrokerName)
	if err != nil {
		if client.Code(err) == protocol.ControllerBrokerMetadataNotExist {
			// The controller forgot the set (cleanBrokerMetadata): register again.
			_, rerr := m.cl.RegisterBroker(ctx, m.r.bc.BrokerClusterName, m.r.bc.BrokerName, m.id.Load(), m.r.cfg.Addr)
			return errors.Join(err, rerr)
		}
		return fmt.Errorf("broker: get replica info: %w", err)
	}
	return m.apply(ctx, mi, "replica info")
}

// apply takes the role mi names when its epoch is newer than the one
// followed; at the same epoch a master takes a newer SyncStateSet; with
// no master it asks for an election.
func (m *controllerMode) apply(ctx context.Context, mi *client.MasterInfo, from string) error {
	if !mi.HasMaster || mi.MasterAddress == "" {
		return m.elect(ctx)
	}
	cur := m.masterEpoch.Load()
	switch {
	case mi.MasterEpoch < cur:
		m.log.Warn("broker: stale master epoch fenced", "from", from, "epoch", mi.MasterEpoch, "current", cur)
		return nil
	case mi.MasterEpoch == cur:
		if m.master && mi.MasterBrokerID == m.id.Load() {
			m.changeSyncStateSet(mi.SyncStateSet, mi.SyncStateSetEpoch)
		}
		return nil
	}
	if mi.MasterBrokerID == m.id.Load() {
		return m.changeToMaster(ctx, mi)
	}
	return m.changeToSlave(ctx, mi)
}

// elect asks the controller for an election (Java's brokerElect); the
// answer names the master, this broker or another.
func (m *controllerMode) elect(ctx context.Context) error {
	bc := m.r.bc
	mi, err := m.cl.ElectMaster(ctx, bc.BrokerClusterName, bc.BrokerName, m.id.Load(), false)
	if err != nil && client.Code(err) != protocol.ControllerMasterStillExist {
		return fmt.Errorf("broker: no master in broker set %s, election failed: %w", bc.BrokerName, err)
	}
	if !mi.HasMaster || mi.MasterAddress == "" {
		return fmt.Errorf("broker: no master in broker set %s after an election", bc.BrokerName)
	}
	return m.apply(ctx, mi, "election")
}

func (m *controllerMode) changeToMaster(ctx context.Context, mi *client.MasterInfo) error {
	m.log.Info("broker: the controller names this broker master", "epoch", mi.MasterEpoch, "syncStateSet", mi.SyncStateSet)
	set := slices.Clone(mi.SyncStateSet)
	if self := m.id.Load(); !slices.Contains(set, self) {
		set = append(set, self)
	}
	m.startSet.Store(&set)
	// minInSyncReplicas holds from the first put the promotion admits.
	m.r.inSync.Store(&inSyncPolicy{setSize: len(set), minInSync: m.r.bc.MinInSyncReplicas})
	if err := m.r.BecomeMaster(ctx, mi.MasterEpoch); err != nil {
		m.publishInSync() // back to the role held
		return err
	}
	m.masterEpoch.Store(mi.MasterEpoch)
	m.master = true
	m.sssEpoch = -1 // take the controller's set whatever its epoch
	m.changeSyncStateSet(mi.SyncStateSet, mi.SyncStateSetEpoch)
	return nil
}

func (m *controllerMode) changeToSlave(ctx context.Context, mi *client.MasterInfo) error {
	m.log.Info("broker: the controller names a master", "masterId", mi.MasterBrokerID, "master", mi.MasterAddress, "epoch", mi.MasterEpoch)
	cache, err := m.masterEpochCache(ctx, mi.MasterAddress, mi.MasterEpoch)
	if err != nil {
		return err
	}
	haAddr := cache.HAServerAddr
	if haAddr == "" {
		haAddr = defaultHAAddr(mi.MasterAddress)
	}
	// The slave no longer answers for the SyncStateSet.
	m.master = false
	m.r.inSync.Store(nil)
	// The AutoSwitch handshake cuts the store to the consistent point and
	// the transfers bring the master's epoch entries (variant.go).
	if err := m.r.BecomeSlave(ctx, mi.MasterAddress, haAddr, m.id.Load(), mi.MasterEpoch); err != nil {
		return err
	}
	m.masterEpoch.Store(mi.MasterEpoch)
	return nil
}

// defaultHAAddr is a master's HA address when it does not say (a Java
// master): haListenPort defaults to listenPort+1.
func defaultHAAddr(main string) string {
	host, port, err := net.SplitHostPort(main)
	if err != nil {
		return main
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return main
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// masterEpochCache asks the master at addr for its epoch file
// (GET_BROKER_EPOCH_CACHE) until it holds epoch and answers as master
// (brokerId 0, its HA server running): the master may still be taking
// it when the notification reaches its slaves. The answer names the
// master's HA address (rocketd's own member; the HA handshake then
// fences a master still older than epoch, ha.ClientConfig.MasterEpoch).
func (m *controllerMode) masterEpochCache(ctx context.Context, addr string, epoch int32) (*protocol.EpochEntryCache, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pause := backoff{min: 20 * time.Millisecond, max: 500 * time.Millisecond}
	for {
		cache, err := m.epochCache(ctx, addr)
		if err == nil {
			// The epoch file takes the epoch before the HA server starts;
			// brokerId 0 is answered once the promotion is complete.
			if n := len(cache.EpochList); n > 0 && cache.EpochList[n-1].Epoch >= epoch && cache.BrokerID == masterID {
				return cache, nil
			}
			err = fmt.Errorf("it has not taken epoch %d yet", epoch)
		}
		if !sleepCtx(ctx, pause.wait()) {
			return nil, fmt.Errorf("broker: epoch file of master %s: %w", addr, err)
		}
	}
}

func (m *controllerMode) epochCache(ctx context.Context, addr string) (*protocol.EpochEntryCache, error) {
	resp, err := m.r.cfg.NS.Invoke(ctx, addr, remoting.NewRequest(protocol.GetBrokerEpochCache, nil, nil))
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.Success {
		return nil, fmt.Errorf("GET_BROKER_EPOCH_CACHE: code %d: %s", resp.Code, resp.Remark)
	}
	var c protocol.EpochEntryCache
	if err := protocol.UnmarshalFastJSON(resp.Body, &c); err != nil {
		return nil, fmt.Errorf("GET_BROKER_EPOCH_CACHE: body: %w", err)
	}
	return &c, nil
}

// changeSyncStateSet takes a SyncStateSet newer than the one held (Java's
// changeSyncStateSet): the HA server's confirm offset and waits follow it.
func (m *controllerMode) changeSyncStateSet(ids []int64, epoch int32) {
	if epoch <= m.sssEpoch {
		return
	}
	m.log.Info("broker: SyncStateSet", "from", m.sss, "to", ids, "epoch", epoch)
	m.sss, m.sssEpoch = slices.Clone(ids), epoch
	if s := m.r.cur.Load().server; s != nil && m.master {
		s.SetSyncStateSet(ids)
	}
	m.publishInSync()
}

// publishInSync makes a master refuse puts that wait, before they are
// written, while the SyncStateSet is smaller than minInSyncReplicas
// (inSyncPolicy).
func (m *controllerMode) publishInSync() {
	if !m.master {
		m.r.inSync.Store(nil)
		return
	}
	self := m.id.Load()
	n := len(slices.DeleteFunc(slices.Clone(m.sss), func(id int64) bool { return id == self })) + 1
	m.r.inSync.Store(&inSyncPolicy{setSize: n, minInSync: m.r.bc.MinInSyncReplicas})
}

// checkSyncStateSet is Java's checkSyncStateSetAndDoReport: the HA
// server proposes the set from its slaves' acks and caught-up times by
// brokerId (Server.ProposeSyncStateSet), ALTER_SYNC_STATE_SET when it
// differs.
func (m *controllerMode) checkSyncStateSet(ctx context.Context) {
	if !m.master || m.sssEpoch < 0 {
		return
	}
	s := m.r.cur.Load().server
	if s == nil {
		return
	}
	bc := m.r.bc
	next, changed := s.ProposeSyncStateSet(time.Now(), bc.HAMaxTimeSlaveNotCatchup)
	if !changed {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, bc.CheckSyncStateSetPeriod)
	defer cancel()
	epoch, err := m.cl.AlterSyncStateSet(ctx, bc.BrokerName, m.id.Load(), m.masterEpoch.Load(), next, m.sssEpoch)
	if err != nil {
		m.alterFail = m.now()
		m.checkWarn.Log(m.log, slog.LevelWarn, "broker: ALTER_SYNC_STATE_SET refused", "from", m.sss, "to", next, "err", err)
		if c := client.Code(err); c == protocol.ControllerFencedSyncStateSetEpoch || c == protocol.ControllerFencedMasterEpoch {
			// Someone else moved the set or the master: learn it.
			_ = m.syncReplicaInfo(ctx)
		}
		return
	}
	m.changeSyncStateSet(next, epoch)
}

// heartbeatLoop sends BROKER_HEARTBEAT to every controller each
// brokerHeartbeatInterval once the brokerId is known (Java's
// sendHeartbeatToController): epoch, CommitLog end, confirm offset and
// election priority, which the controller's election compares.
func (m *controllerMode) heartbeatLoop(ctx context.Context) {
	bc := m.r.bc
	t := time.NewTicker(bc.BrokerHeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.hb.Kicked():
		}
		id := m.id.Load()
		if id == 0 || m.r.store == nil {
			continue
		}
		end := m.r.store.CommitLogMaxOffset()
		hctx, cancel := context.WithTimeout(ctx, bc.SendHeartbeatTimeout)
		_, err := m.cl.SendHeartbeat(hctx, client.Heartbeat{ClusterName: bc.BrokerClusterName, BrokerName: bc.BrokerName,
			BrokerAddr: m.r.cfg.Addr, BrokerID: id, Epoch: m.r.store.Epochs().LastEpoch(), MaxOffset: end,
			ConfirmOffset: m.r.confirmOffset(end), Timeout: bc.ControllerHeartBeatTimeout, ElectionPriority: bc.BrokerElectionPriority})
		cancel()
		if err != nil && ctx.Err() == nil {
			m.hbWarn.Log(m.log, slog.LevelWarn, "broker: heartbeat to a controller failed", "err", err)
		}
	}
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// HandleEpochCache answers GET_BROKER_EPOCH_CACHE (Java's
// AdminBrokerProcessor.getBrokerEpochCache): the epoch file, the CommitLog
// end and, rocketd's own member, the HA address a master serves.
func (r *Role) HandleEpochCache(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	if r.ctl == nil || r.store == nil {
		return remoting.NewResponse(protocol.SystemError, "this request only for controllerMode ")
	}
	entries := r.store.Epochs().Entries()
	list := make([]protocol.EpochEntry, len(entries))
	for i, e := range entries {
		list[i] = protocol.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset, EndOffset: e.EndOffset}
	}
	c := protocol.EpochEntryCache{ClusterName: r.bc.BrokerClusterName, BrokerName: r.bc.BrokerName, BrokerID: r.BrokerID(),
		EpochList: list, MaxOffset: r.store.CommitLogMaxOffset()}
	if r.cur.Load().server != nil {
		c.HAServerAddr = r.haServerAddr()
	}
	body, err := protocol.MarshalFastJSON(&c)
	if err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = body
	return resp
}

// HandleRoleChangedUnsigned answers a NOTIFY_BROKER_ROLE_CHANGED that
// failed authentication (authenticationEnabled): Java's and rocketd's
// controllers send it unsigned (Java's controller has no credentials), so
// its content is not trusted, but it is taken as a hint: the controller
// loop asks the controller (signed, at controllerAddr) for the set's
// master at once instead of within syncBrokerMetadataPeriod. A forged
// notification costs one GET_REPLICA_INFO (kicks coalesce). Java's
// broker drops it (AuthenticationPipeline) and learns the role from its
// next poll.
func (r *Role) HandleRoleChangedUnsigned(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	if r.ctl != nil {
		select {
		case r.ctl.refresh <- struct{}{}:
		default:
		}
	}
	return remoting.NewResponse(protocol.Success, "")
}

// HandleRoleChanged answers NOTIFY_BROKER_ROLE_CHANGED (sent oneway by
// the controller): the controller loop takes the role it names; a stale
// epoch is fenced. Outside controller mode it is ignored, as in Java.
func (r *Role) HandleRoleChanged(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if r.ctl != nil {
		if err := r.ctl.notified(req); err != nil {
			return remoting.NewResponse(protocol.SystemError, err.Error())
		}
	}
	return remoting.NewResponse(protocol.Success, "")
}

// Entries of the master's epoch file as the store's type, its last one
// ending at the master's CommitLog end.
func masterEntries(c *protocol.EpochEntryCache) []store.EpochEntry {
	out := make([]store.EpochEntry, len(c.EpochList))
	for i, e := range c.EpochList {
		out[i] = store.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset, EndOffset: e.EndOffset}
	}
	if n := len(out); n > 0 {
		out[n-1].EndOffset = c.MaxOffset
	}
	return out
}
