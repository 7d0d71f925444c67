package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Config configures a Controller.
type Config struct {
	// Controller holds the controller.conf settings; zero fields take
	// their defaults.
	Controller config.ControllerConfig
	// Addr, when set, is the remoting listen address and overrides
	// BindAddress/ListenPort ("127.0.0.1:0" in tests).
	Addr string
	// Remoting, when set, is the server the controller's codes are added
	// to (the NameServer's, enableControllerInNamesrv): the controller
	// then neither starts nor stops a server of its own.
	Remoting *remoting.Server
	// RaftListener, when set, carries the raft transport instead of a
	// listener on this node's controllerDLegerPeers address.
	RaftListener net.Listener
	// RaftTimeout is raft's heartbeat and election timeout (default 1 s,
	// hashicorp/raft's).
	RaftTimeout time.Duration
	// BrokerHeartbeatTimeout applies to heartbeats that do not carry
	// heartbeatTimeoutMills (default DefaultBrokerHeartbeatTimeout).
	BrokerHeartbeatTimeout time.Duration
	// Logger receives structured logs; default: discard.
	Logger *slog.Logger
	// Now is the clock of broker liveness; default time.Now.
	Now func() time.Time
}

// applyTimeout bounds a raft Apply (Java waits 5 s for DLedger).
const applyTimeout = 5 * time.Second

// Controller is one node of the controller group: the raft-replicated
// broker-set state, the node-local broker liveness and the remoting
// handlers of the controller codes.
type Controller struct {
	cfg   Config
	rt    *config.Runtime[config.ControllerConfig] // the keys UPDATE_CONTROLLER_CONFIG changes
	log   *slog.Logger
	now   func() time.Time
	fsm   *fsm
	live  *liveness
	peers []config.ControllerPeer
	rs    *remoting.Server
	ownRS bool
	node  *raftNode
	// notify sends NOTIFY_BROKER_ROLE_CHANGED (notifyBrokerRoleChanged).
	notify   *notifier
	notifyLp lifecycle.Loop

	// leader is set once this node is leader and has applied every entry
	// of earlier terms (a barrier) and announced its client address.
	leader      atomic.Bool
	leaderSince atomic.Int64 // unix nanos of the clock Now

	started, stopped atomic.Bool
	watch            lifecycle.Loop // follows raft leadership
	scan             lifecycle.Loop // heartbeat expiry and re-election
	closeMu          sync.Mutex
}

// New validates cfg and registers the handlers; Start opens raft and
// listens.
func New(cfg Config) (*Controller, error) {
	cfg.Controller.EnsureDefaults()
	if err := cfg.Controller.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BrokerHeartbeatTimeout <= 0 {
		cfg.BrokerHeartbeatTimeout = DefaultBrokerHeartbeatTimeout
	}
	peers, err := cfg.Controller.Peers()
	if err != nil {
		return nil, err
	}
	c := &Controller{cfg: cfg, log: cfg.Logger, now: cfg.Now, fsm: newFSM(cfg.Logger), live: newLiveness(cfg.Now), peers: peers,
		notify: newNotifier(cfg.Logger)}
	c.rt = config.NewControllerRuntime(&c.cfg.Controller, cfg.Controller.ConfigStorePath)
	c.rs = cfg.Remoting
	if c.rs == nil {
		addr := cfg.Addr
		if addr == "" {
			addr = net.JoinHostPort(cfg.Controller.BindAddress, strconv.Itoa(cfg.Controller.ListenPort))
		}
		c.rs = remoting.NewServer(remoting.ServerConfig{Addr: addr, Logger: cfg.Logger})
		c.ownRS = true
	}
	c.register()
	return c, nil
}

// Start opens the raft node and, when the controller has its own server,
// listens.
func (c *Controller) Start() error {
	if c.started.Swap(true) {
		return errors.New("controller: already started")
	}
	if c.ownRS {
		if err := c.rs.Start(); err != nil {
			return fmt.Errorf("controller: start: %w", err)
		}
	}
	n, err := openRaft(&c.cfg.Controller, c.cfg.RaftListener, c.cfg.RaftTimeout, c.fsm, c.log)
	if err != nil {
		if c.ownRS {
			_ = c.rs.Shutdown(context.Background())
		}
		return err
	}
	c.node = n
	c.watch.Start("controller-leader", c.watchLeadership)
	c.scan.Start("controller-scan", c.scanLoop)
	c.notifyLp.Start("controller-notify", c.notify.run)
	c.log.Info("controller: started", "id", c.cfg.Controller.ControllerDLegerSelfID, "addr", c.ClientAddr(),
		"peers", c.cfg.Controller.ControllerDLegerPeers, "store", c.cfg.Controller.ControllerStorePath)
	return nil
}

// Close stops the loops, raft and, when it owns it, the remoting server.
func (c *Controller) Close() error {
	if c.stopped.Swap(true) {
		return nil
	}
	// Cancel the loops first and stop raft, so that a loop waiting on a
	// barrier or an apply returns at once; then wait for them.
	c.watch.Cancel()
	c.scan.Cancel()
	c.notifyLp.Cancel()
	var err error
	if c.node != nil {
		err = c.node.close()
	}
	c.watch.Close()
	c.scan.Close()
	c.notifyLp.Close()
	if e := c.notify.rc.Close(); e != nil && err == nil {
		err = e
	}
	if c.ownRS && c.started.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if e := c.rs.Shutdown(ctx); e != nil && err == nil {
			err = e
		}
	}
	c.log.Info("controller: stopped", "err", err)
	return err
}

// ID is this node's id among the peers.
func (c *Controller) ID() string { return c.cfg.Controller.ControllerDLegerSelfID }

// IsLeader reports whether this node serves requests as the leader.
func (c *Controller) IsLeader() bool { return c.leader.Load() }

// ClientAddr is the remoting address brokers and tools reach this node on:
// the listener's port on bindAddress, or else on the host of this node's
// raft peer address.
func (c *Controller) ClientAddr() string {
	a := c.rs.Addr()
	if a == nil {
		return ""
	}
	_, port, _ := net.SplitHostPort(a.String())
	host := c.cfg.Controller.BindAddress
	if host == "" || host == "0.0.0.0" || host == "::" {
		for _, p := range c.peers {
			if p.ID == c.ID() {
				host, _, _ = net.SplitHostPort(p.Addr)
			}
		}
	}
	return net.JoinHostPort(host, port)
}

// LeaderClientAddr is the leader's client address as this node knows it
// ("" while unknown).
func (c *Controller) LeaderClientAddr() (id, addr string) {
	if c.node == nil {
		return "", ""
	}
	_, lid := c.node.r.LeaderWithID()
	if lid == "" {
		return "", ""
	}
	c.fsm.read(func(s *state) { addr = s.ClientAddrs[string(lid)] })
	return string(lid), addr
}

// watchLeadership follows raft's leadership signal: a new leader first
// applies everything earlier leaders committed (a barrier), announces its
// client address through the log, and only then serves.
func (c *Controller) watchLeadership(ctx context.Context) {
	ch := c.node.r.LeaderCh()
	for {
		select {
		case <-ctx.Done():
			c.leader.Store(false)
			return
		case is := <-ch:
			c.leader.Store(false)
			if !is {
				c.log.Info("controller: leadership lost", "id", c.ID())
				continue
			}
			if !c.takeOver(ctx) {
				continue
			}
			c.leaderSince.Store(c.now().UnixNano())
			c.leader.Store(true)
			c.log.Info("controller: leader", "id", c.ID(), "addr", c.ClientAddr())
			c.scan.Kick()
		}
	}
}

// takeOverRetry is the pause between a new leader's attempts to get ready.
const takeOverRetry = 100 * time.Millisecond

// takeOver readies a new leader: a barrier (every entry of earlier terms
// applied), then its leaderAddr entry. It tries again while this node
// still leads, and reports whether it got ready.
func (c *Controller) takeOver(ctx context.Context) bool {
	for {
		err := c.node.r.Barrier(applyTimeout).Error()
		if err == nil {
			res := c.propose(&command{Op: opLeaderAddr, NodeID: c.ID(), Addr: c.ClientAddr()}, true)
			if res.Code == protocol.Success {
				return true
			}
			err = errors.New(res.Remark)
		}
		if c.node.r.State() != raft.Leader {
			return false
		}
		c.log.Warn("controller: new leader not ready yet, retrying", "err", err)
		t := time.NewTimer(takeOverRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// propose appends cmd to the raft log and returns the state machine's
// answer; a node that is not the ready leader answers CONTROLLER_NOT_LEADER.
func (c *Controller) propose(cmd *command, announcing bool) *result {
	if !announcing && !c.leader.Load() {
		return c.notLeader()
	}
	data, err := json.Marshal(cmd)
	if err != nil {
		return fail(protocol.SystemError, "controller: encode command: %v", err)
	}
	f := c.node.r.Apply(data, applyTimeout)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			// Never appended: the client may retry with the leader.
			return c.notLeader()
		}
		if errors.Is(err, raft.ErrLeadershipLost) {
			// Appended but maybe not committed: a blind retry could apply
			// it twice, so the caller is told it is unknown.
			return fail(protocol.SystemError, "controller: leadership lost while applying %s; it may or may not have taken effect, read the state before retrying", cmd.Op)
		}
		return fail(protocol.SystemError, "controller: raft apply: %v", err)
	}
	res, _ := f.Response().(*result)
	if res == nil {
		return fail(protocol.SystemError, "controller: no result from the state machine")
	}
	return res
}

// readable checks that this node may answer reads of the replicated state:
// it is the ready leader and still holds a quorum.
func (c *Controller) readable() *result {
	if !c.leader.Load() {
		return c.notLeader()
	}
	if err := c.node.r.VerifyLeader().Error(); err != nil {
		return c.notLeader()
	}
	return nil
}

// notLeader is Java's CONTROLLER_NOT_LEADER answer, with the leader's
// id and address in the header (controllerLeaderId,
// controllerLeaderAddress) and the remark when this node knows them.
func (c *Controller) notLeader() *result {
	id, addr := c.LeaderClientAddr()
	r := fail(protocol.ControllerNotLeader, "The controller is not in leader state")
	if addr != "" {
		r.Remark += ", the leader is " + id + " at " + addr
		r.Ext = map[string]string{"controllerLeaderId": id, "controllerLeaderAddress": addr}
	}
	return r
}

// scanLoop expires silent brokers on every node (scanNotActiveBrokerInterval)
// and, on the leader, elects a new master for sets whose master is gone
// (scanInactiveMasterInterval, and at once when a broker's connection
// closes).
func (c *Controller) scanLoop(ctx context.Context) {
	expire := time.NewTicker(c.cfg.Controller.ScanNotActiveBrokerInterval)
	defer expire.Stop()
	reelect := time.NewTicker(c.cfg.Controller.ScanInactiveMasterInterval)
	defer reelect.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expire.C:
			for _, k := range c.live.expire() {
				c.log.Warn("controller: broker heartbeat timed out", "cluster", k.cluster, "broker", k.name, "brokerId", k.id)
			}
		case <-reelect.C:
		case <-c.scan.Kicked():
		}
		c.reelect()
	}
}

// reelect is Java's scanNeedReelectBrokerSets on the leader: a set whose
// master is not alive while another member is gets an election. A master
// this leader never heard from is judged only after it has led for the
// broker heartbeat timeout (liveness starts afresh with each leader).
func (c *Controller) reelect() {
	if !c.leader.Load() {
		return
	}
	type target struct {
		cluster, name string
		master        int64
		ids           []int64
	}
	var targets []target
	c.fsm.read(func(s *state) {
		for name, b := range s.Sets {
			if m, ok := b.masterID(); ok {
				targets = append(targets, target{b.ClusterName, name, m, b.memberIDs()})
			}
		}
	})
	grace := c.now().Sub(time.Unix(0, c.leaderSince.Load())) >= c.cfg.BrokerHeartbeatTimeout
	for _, t := range targets {
		k := brokerKey{t.cluster, t.name, t.master}
		if c.live.alive(k) || (!grace && !c.live.known(k)) {
			continue
		}
		alive := c.live.candidates(t.cluster, t.name, t.ids)
		if len(alive) == 0 {
			continue
		}
		res := c.propose(&command{Op: opElectMaster, ClusterName: t.cluster, BrokerName: t.name, BrokerID: -1,
			Alive: alive, Unclean: c.rt.Load().EnableElectUncleanMaster}, false)
		c.log.Warn("controller: master gone, election", "broker", t.name, "oldMaster", t.master,
			"code", res.Code, "remark", res.Remark, "newMaster", res.Ext["masterBrokerId"])
		if res.Code == protocol.Success {
			c.notifyRoleChanged(t.name)
		}
	}
}
