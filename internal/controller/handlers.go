package controller

import (
	"strings"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/configcmd"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// register adds the controller codes to the remoting server.
func (c *Controller) register() {
	cc := &c.cfg.Controller
	f := c.rs.NewFamily("controller", cc.ControllerThreadPoolNums, cc.ControllerRequestThreadPoolQueueCapacity)
	c.rs.Handle(protocol.ControllerAlterSyncStateSet, f, c.handleAlterSyncStateSet)
	c.rs.Handle(protocol.ControllerElectMaster, f, c.handleElectMaster)
	c.rs.Handle(protocol.ControllerRegisterBroker, f, c.handleRegisterBroker)
	c.rs.Handle(protocol.ControllerGetReplicaInfo, f, c.handleGetReplicaInfo)
	c.rs.Handle(protocol.ControllerGetMetadataInfo, f, c.handleGetMetadata)
	c.rs.Handle(protocol.ControllerGetSyncStateData, f, c.handleGetSyncStateData)
	c.rs.Handle(protocol.BrokerHeartbeat, f, c.handleHeartbeat)
	c.rs.Handle(protocol.GetControllerConfig, f, c.handleGetConfig)
	c.rs.Handle(protocol.UpdateControllerConfig, f, c.handleUpdateConfig)
	c.rs.Handle(protocol.CleanBrokerData, f, c.handleCleanBrokerData)
	c.rs.Handle(protocol.ControllerGetNextBrokerID, f, c.handleGetNextBrokerID)
	c.rs.Handle(protocol.ControllerApplyBrokerID, f, c.handleApplyBrokerID)
	c.rs.OnConnClose(c.connClosed)
}

func respond(r *result) *remoting.Command {
	resp := remoting.NewResponse(r.Code, r.Remark)
	resp.ExtFields = r.Ext
	resp.Body = r.Body
	return resp
}

func badHeader(err error) *remoting.Command {
	return remoting.NewResponse(protocol.ControllerInvalidRequest, err.Error())
}

// setFacts fills a command's cluster name (when the request has none) and
// the live members of its broker set.
func (c *Controller) setFacts(cmd *command) {
	var ids []int64
	c.fsm.read(func(s *state) {
		if b := s.Sets[cmd.BrokerName]; b != nil {
			if cmd.ClusterName == "" {
				cmd.ClusterName = b.ClusterName
			}
			ids = b.memberIDs()
		}
	})
	cmd.Alive = c.live.candidates(cmd.ClusterName, cmd.BrokerName, ids)
	cmd.Unclean = c.rt.Load().EnableElectUncleanMaster
}

func (c *Controller) handleAlterSyncStateSet(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.AlterSyncStateSetRequestHeader
	if err := h.Decode(req.Ext()); err != nil {
		return badHeader(err)
	}
	var body protocol.SyncStateSet
	if err := protocol.UnmarshalFastJSON(req.Body, &body); err != nil {
		return remoting.NewResponse(protocol.ControllerInvalidRequest, "SyncStateSet body: "+err.Error())
	}
	cmd := &command{Op: opAlterSyncStateSet, BrokerName: h.BrokerName, BrokerID: h.MasterBrokerID, MasterEpoch: h.MasterEpoch,
		SyncStateSet: body.SyncStateSet, SyncStateSetEpoch: body.SyncStateSetEpoch}
	c.setFacts(cmd)
	return respond(c.propose(cmd, false))
}

func (c *Controller) handleElectMaster(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ElectMasterRequestHeader
	if err := h.Decode(req.Ext()); err != nil {
		return badHeader(err)
	}
	cmd := &command{Op: opElectMaster, ClusterName: h.ClusterName, BrokerName: h.BrokerName, BrokerID: h.BrokerID, Designate: h.DesignateElect}
	c.setFacts(cmd)
	res := c.propose(cmd, false)
	c.log.Info("controller: elect master", "broker", h.BrokerName, "brokerId", h.BrokerID, "designate", h.DesignateElect,
		"code", res.Code, "remark", res.Remark, "caller", conn.RemoteAddr())
	if res.Code == protocol.Success {
		c.notifyRoleChanged(h.BrokerName)
	}
	return respond(res)
}

func (c *Controller) handleRegisterBroker(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.RegisterBrokerToControllerRequestHeader
	if err := h.Decode(req.Ext()); err != nil {
		return badHeader(err)
	}
	cmd := &command{Op: opRegisterBroker, ClusterName: h.ClusterName, BrokerName: h.BrokerName, BrokerID: h.BrokerID, Addr: h.BrokerAddress}
	c.setFacts(cmd)
	return respond(c.propose(cmd, false))
}

func (c *Controller) handleApplyBrokerID(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.ApplyBrokerIDRequestHeader
	if err := h.Decode(req.Ext()); err != nil {
		return badHeader(err)
	}
	if h.RegisterCheckCode == "" || h.BrokerName == "" {
		return remoting.NewResponse(protocol.ControllerInvalidRequest, "brokerName and registerCheckCode (brokerAddr;timestamp) are required")
	}
	return respond(c.propose(&command{Op: opApplyBrokerID, ClusterName: h.ClusterName, BrokerName: h.BrokerName,
		BrokerID: h.AppliedBrokerID, CheckCode: h.RegisterCheckCode}, false))
}

func (c *Controller) handleCleanBrokerData(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.CleanControllerBrokerDataRequestHeader
	if err := h.Decode(req.Ext()); err != nil {
		return badHeader(err)
	}
	cmd := &command{Op: opCleanBrokerData, ClusterName: h.ClusterName, BrokerName: h.BrokerName,
		CleanIDs: strings.TrimSpace(h.BrokerControllerIdsToClean), CleanLiving: h.IsCleanLivingBroker}
	c.setFacts(cmd)
	return respond(c.propose(cmd, false))
}

func (c *Controller) handleGetNextBrokerID(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.BrokerSetHeader
	_ = h.Decode(req.Ext())
	if r := c.readable(); r != nil {
		return respond(r)
	}
	resp := &protocol.GetNextBrokerIDResponseHeader{ClusterName: h.ClusterName, BrokerName: h.BrokerName, NextBrokerID: protocol.Some[int64](firstBrokerID)}
	c.fsm.read(func(s *state) {
		if b := s.Sets[h.BrokerName]; b != nil {
			resp.NextBrokerID = protocol.Some(b.NextID)
		}
	})
	return respond(ok().header(resp))
}

func (c *Controller) handleGetReplicaInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.BrokerNameHeader
	_ = h.Decode(req.Ext())
	if r := c.readable(); r != nil {
		return respond(r)
	}
	res := fail(protocol.ControllerBrokerMetadataNotExist, "Broker metadata is not existed")
	c.fsm.read(func(s *state) {
		b := s.Sets[h.BrokerName]
		if b == nil {
			return
		}
		rh := &protocol.MasterInfoHeader{MasterEpoch: protocol.Some(b.MasterEpoch)}
		if m, ok := b.masterID(); ok {
			rh.MasterBrokerID, rh.MasterAddress = protocol.Some(m), b.addr(m)
		}
		res = ok().header(rh).body(b.syncStateSetBody())
	})
	return respond(res)
}

func (c *Controller) handleGetSyncStateData(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var names []string
	if len(req.Body) > 0 {
		if err := protocol.UnmarshalFastJSON(req.Body, &names); err != nil {
			return remoting.NewResponse(protocol.ControllerInvalidRequest, "body: want a JSON array of broker names: "+err.Error())
		}
	}
	if len(names) == 0 {
		// Java answers SUCCESS without a body.
		return remoting.NewResponse(protocol.Success, "")
	}
	if r := c.readable(); r != nil {
		return respond(r)
	}
	out := protocol.BrokerReplicasInfo{ReplicasInfoTable: map[string]protocol.ReplicasInfo{}}
	type view struct {
		b *brokerSet
	}
	var sets []view
	c.fsm.read(func(s *state) {
		for _, n := range names {
			if b := s.Sets[n]; b != nil {
				sets = append(sets, view{b.clone()})
			}
		}
	})
	for _, v := range sets {
		b := v.b
		info := protocol.ReplicasInfo{MasterEpoch: b.MasterEpoch, SyncStateSetEpoch: b.SyncStateSetEpoch,
			InSyncReplicas: []protocol.ReplicaIdentity{}, NotInSyncReplicas: []protocol.ReplicaIdentity{}}
		if m, ok := b.masterID(); ok {
			info.MasterBrokerID, info.MasterAddress = &m, b.addr(m)
		}
		for _, id := range b.memberIDs() {
			r := protocol.ReplicaIdentity{BrokerName: b.BrokerName, BrokerID: id, BrokerAddress: b.addr(id),
				Alive: c.live.alive(brokerKey{b.ClusterName, b.BrokerName, id})}
			if b.inSync(id) {
				info.InSyncReplicas = append(info.InSyncReplicas, r)
			} else {
				info.NotInSyncReplicas = append(info.NotInSyncReplicas, r)
			}
		}
		out.ReplicasInfoTable[b.BrokerName] = info
	}
	return respond(ok().body(&out))
}

// handleHeartbeat records a broker's heartbeat in this node's liveness
// table; brokers send it to every controller, as Java's do.
func (c *Controller) handleHeartbeat(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.BrokerHeartbeatRequestHeader
	if err := h.Decode(req.Ext()); err != nil {
		return badHeader(err)
	}
	if !h.BrokerID.Set {
		return remoting.NewResponse(protocol.ControllerInvalidRequest, "Heart beat with empty brokerId")
	}
	timeout := c.cfg.BrokerHeartbeatTimeout
	if h.HeartbeatTimeoutMills.Set && h.HeartbeatTimeoutMills.Value > 0 {
		timeout = time.Duration(h.HeartbeatTimeoutMills.Value) * time.Millisecond
	}
	c.live.beat(heartbeat{key: brokerKey{h.ClusterName, h.BrokerName, h.BrokerID.Value}, addr: h.BrokerAddr, timeout: timeout,
		conn: conn, epoch: h.Epoch.Or(-1), maxOffset: h.MaxOffset.Or(-1), confirm: h.ConfirmOffset.Or(-1),
		priority: h.ElectionPriority.Or(1<<31 - 1)})
	return remoting.NewResponse(protocol.Success, "Heart beat success")
}

// handleGetMetadata is CONTROLLER_GET_METADATA_INFO, answered by every
// node: the group, the leader and the peers.
func (c *Controller) handleGetMetadata(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	id, addr := c.LeaderClientAddr()
	var peers strings.Builder
	for _, p := range c.peers {
		peers.WriteString(p.ID + ":" + p.Addr + ";")
	}
	return respond(ok().header(&protocol.GetMetaDataResponseHeader{Group: c.cfg.Controller.ControllerDLegerGroup,
		ControllerLeaderID: id, ControllerLeaderAddress: addr, IsLeader: c.leader.Load(), Peers: peers.String()}))
}

// handleGetConfig is GET_CONTROLLER_CONFIG: the settings as properties text.
func (c *Controller) handleGetConfig(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = []byte(config.PropertiesText(c.rt.Load()))
	return resp
}

// handleUpdateConfig is UPDATE_CONTROLLER_CONFIG (mqadmin
// updateControllerConfig): the body is properties text; the live keys
// (config.ControllerLiveKeys) change on this node and are written to
// configStorePath. NO_PERMISSION for a black-listed, start-only or unknown
// key (Java's remark for the black list), INVALID_PARAMETER for a bad
// value, SYSTEM_ERROR for a body that is not properties text or a failed
// write.
func (c *Controller) handleUpdateConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return configcmd.Update(c.rt, req.Body, func(props config.Properties) {
		c.log.Info("controller: config updated", "keys", props, "caller", conn.RemoteAddr())
	})
}

// connClosed forgets the brokers that heartbeat over conn and, on the
// leader, checks their sets at once: a killed master's connection closes
// long before its heartbeat times out.
func (c *Controller) connClosed(conn *remoting.Conn) {
	if gone := c.live.dropConn(conn); len(gone) > 0 {
		for _, k := range gone {
			c.log.Info("controller: broker connection closed", "cluster", k.cluster, "broker", k.name, "brokerId", k.id)
		}
		c.scan.Kick()
	}
}
