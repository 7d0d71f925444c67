package controller

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
)

// apply runs a command against the state: Java's checks, then the change.
// It is deterministic (the log alone decides), so every node reaches the
// same state; the result is the answer the leader sends.
func (s *state) apply(c *command) *result {
	switch c.Op {
	case opApplyBrokerID:
		return s.applyBrokerID(c)
	case opRegisterBroker:
		return s.registerBroker(c)
	case opElectMaster:
		return s.electMaster(c)
	case opAlterSyncStateSet:
		return s.alterSyncStateSet(c)
	case opCleanBrokerData:
		return s.cleanBrokerData(c)
	case opLeaderAddr:
		s.ClientAddrs[c.NodeID] = c.Addr
		return ok()
	}
	return fail(protocol.ControllerInvalidRequest, "unknown controller log entry %q", c.Op)
}

// applyBrokerID is CONTROLLER_APPLY_BROKER_ID: the first broker of a set
// must take id 1; a later one an id nobody holds, or the one it holds
// already (same registerCheckCode).
func (s *state) applyBrokerID(c *command) *result {
	addr, _, _ := strings.Cut(c.CheckCode, ";")
	res := ok().header(&protocol.BrokerSetHeader{ClusterName: c.ClusterName, BrokerName: c.BrokerName})
	b := s.Sets[c.BrokerName]
	if b == nil {
		if c.BrokerID != firstBrokerID {
			return fail(protocol.ControllerBrokerIDInvalid,
				"Broker-set: %s hasn't been registered in controller, but broker try to apply brokerId: %d", c.BrokerName, c.BrokerID)
		}
		b = &brokerSet{ClusterName: c.ClusterName, BrokerName: c.BrokerName, NextID: firstBrokerID, Members: map[int64]member{}}
		s.Sets[c.BrokerName] = b
	} else if m, held := b.Members[c.BrokerID]; held {
		if m.CheckCode != c.CheckCode {
			return fail(protocol.ControllerBrokerIDInvalid, "Fail to apply brokerId: %d in broker-set: %s", c.BrokerID, c.BrokerName)
		}
		return res
	}
	b.Members[c.BrokerID] = member{Addr: addr, CheckCode: c.CheckCode}
	// Java counts up by one per added broker; taking the maximum keeps an
	// id applied out of order from being handed out again.
	b.NextID = max(b.NextID+1, c.BrokerID+1)
	return res
}

// registerBroker is CONTROLLER_REGISTER_BROKER: the broker learns the master
// (when it is alive) and the SyncStateSet; a changed address is recorded.
func (s *state) registerBroker(c *command) *result {
	b := s.Sets[c.BrokerName]
	if b == nil {
		return fail(protocol.ControllerBrokerNeedToBeRegistered, "Broker-set: %s hasn't been registered in controller", c.BrokerName)
	}
	if _, ok := b.Members[c.BrokerID]; !ok {
		return fail(protocol.ControllerBrokerNeedToBeRegistered, "BrokerId: %d hasn't been registered in broker-set: %s", c.BrokerID, c.BrokerName)
	}
	h := &protocol.MasterInfoHeader{ClusterName: c.ClusterName, BrokerName: c.BrokerName}
	if m, ok := b.masterID(); ok {
		if _, alive := c.alive(m); alive {
			h.MasterBrokerID = protocol.Some(m)
			h.MasterAddress = b.addr(m)
			h.MasterEpoch = protocol.Some(b.MasterEpoch)
			h.SyncStateSetEpoch = protocol.Some(b.SyncStateSetEpoch)
		}
	}
	if c.Addr != "" && c.Addr != b.Members[c.BrokerID].Addr {
		m := b.Members[c.BrokerID]
		m.Addr = c.Addr
		b.Members[c.BrokerID] = m
	}
	return ok().header(h).body(b.syncStateSetBody())
}

func (b *brokerSet) syncStateSetBody() *protocol.SyncStateSet {
	return &protocol.SyncStateSet{SyncStateSet: nonNil(b.SyncStateSet), SyncStateSetEpoch: b.SyncStateSetEpoch}
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// electMaster is CONTROLLER_ELECT_MASTER, asked by a broker, by an admin
// (designateElect) or by the leader when a master's heartbeats stop
// (BrokerID -1). Only a live member of the SyncStateSet can become master
// unless enableElectUncleanMaster; with none, the set keeps no master and
// the answer says why.
func (s *state) electMaster(c *command) *result {
	b := s.Sets[c.BrokerName]
	if b == nil {
		return fail(protocol.ControllerBrokerNeedToBeRegistered, "Broker hasn't been registered")
	}
	old, hasOld := b.masterID()
	var (
		newMaster int64
		found     bool
	)
	if b.MasterEpoch == 0 && c.BrokerID > 0 {
		// The set never had a master: the broker that asks first takes it.
		if _, ok := b.Members[c.BrokerID]; !ok {
			return fail(protocol.ControllerElectMasterFailed, "Failed to elect a new master: brokerId %d is not registered in broker-set %s", c.BrokerID, c.BrokerName)
		}
		newMaster, found = c.BrokerID, true
	}
	if !found {
		var prefer *int64
		if c.Designate {
			prefer = &c.BrokerID
		}
		newMaster, found = c.elect(b.SyncStateSet, old, hasOld, prefer)
		if !found && c.Unclean {
			newMaster, found = c.elect(b.memberIDs(), old, hasOld, prefer)
		}
	}
	if found && hasOld && newMaster == old {
		res := fail(protocol.ControllerMasterStillExist,
			"The old master %d is still alive, not need to elect new master for broker %s", old, c.BrokerName)
		res.header(&protocol.MasterInfoHeader{MasterBrokerID: protocol.Some(old), MasterAddress: b.addr(old),
			MasterEpoch: protocol.Some(b.MasterEpoch), SyncStateSetEpoch: protocol.Some(b.SyncStateSetEpoch)})
		return res.body(&protocol.ElectMasterResponseBody{SyncStateSet: nonNil(b.SyncStateSet)})
	}
	if found {
		m := newMaster
		b.setMaster(&m)
		b.setSyncStateSet([]int64{m})
		group := &protocol.BrokerMemberGroup{Cluster: b.ClusterName, BrokerName: b.BrokerName, BrokerAddrs: map[int64]string{}}
		for id, mem := range b.Members {
			group.BrokerAddrs[id] = mem.Addr
		}
		return ok().header(&protocol.MasterInfoHeader{MasterBrokerID: protocol.Some(m), MasterAddress: b.addr(m),
			MasterEpoch: protocol.Some(b.MasterEpoch), SyncStateSetEpoch: protocol.Some(b.SyncStateSetEpoch)}).
			body(&protocol.ElectMasterResponseBody{BrokerMemberGroup: group, SyncStateSet: b.SyncStateSet})
	}
	why := c.noMasterReason(b)
	if c.BrokerID == -1 {
		// The controller's own election: the old master is gone, record
		// that the set has none (the SyncStateSet stays, for its return).
		if hasOld {
			b.setMaster(nil)
		}
		return fail(protocol.ControllerMasterNotAvailable, "Old master has down and failed to elect a new broker master: %s", why)
	}
	return fail(protocol.ControllerElectMasterFailed, "Failed to elect a new master: %s", why)
}

// elect is Java's DefaultElectPolicy.tryElect over ids: the live ones;
// the old master if it is among them and nothing else is preferred; the
// preferred id if live; else the best by (epoch desc, maxOffset desc,
// electionPriority asc), lower id on a tie.
func (c *command) elect(ids []int64, old int64, hasOld bool, prefer *int64) (int64, bool) {
	var live []candidate
	for _, id := range ids {
		if a, ok := c.alive(id); ok {
			live = append(live, a)
		}
	}
	if len(live) == 0 {
		return 0, false
	}
	has := func(id int64) bool {
		return slices.ContainsFunc(live, func(a candidate) bool { return a.ID == id })
	}
	if hasOld && has(old) && (prefer == nil || *prefer == old) {
		return old, true
	}
	if prefer != nil {
		return *prefer, has(*prefer)
	}
	best := slices.MinFunc(live, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(y.Epoch, x.Epoch), cmp.Compare(y.MaxOffset, x.MaxOffset),
			cmp.Compare(x.Priority, y.Priority), cmp.Compare(x.ID, y.ID))
	})
	return best.ID, true
}

func (c *command) noMasterReason(b *brokerSet) string {
	if c.Designate {
		if _, ok := b.Members[c.BrokerID]; !ok {
			return fmt.Sprintf("brokerId %d is not a member of broker-set %s", c.BrokerID, b.BrokerName)
		}
		if _, ok := c.alive(c.BrokerID); !ok {
			return fmt.Sprintf("brokerId %d is not alive", c.BrokerID)
		}
		if !c.Unclean && !b.inSync(c.BrokerID) {
			return fmt.Sprintf("brokerId %d is not in the SyncStateSet %v and enableElectUncleanMaster=false", c.BrokerID, b.SyncStateSet)
		}
	}
	if c.Unclean {
		return fmt.Sprintf("no alive replica in broker-set %s", b.BrokerName)
	}
	return fmt.Sprintf("no alive replica in the SyncStateSet %v of broker-set %s (enableElectUncleanMaster=false)", b.SyncStateSet, b.BrokerName)
}

// alterSyncStateSet is CONTROLLER_ALTER_SYNC_STATE_SET: only the current
// master, at the current master and SyncStateSet epochs, may change the
// set, and only to live members that include itself.
func (s *state) alterSyncStateSet(c *command) *result {
	b := s.Sets[c.BrokerName]
	if b == nil {
		return fail(protocol.ControllerAlterSyncStateSetFailed, "Broker metadata is not existed")
	}
	next := sortedIDs(c.SyncStateSet)
	if slices.Equal(next, b.SyncStateSet) {
		return fail(protocol.ControllerAlterSyncStateSetFailed, "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet")
	}
	m, hasMaster := b.masterID()
	if !hasMaster || m != c.BrokerID {
		cur := "null"
		if hasMaster {
			cur = strconv.FormatInt(m, 10)
		}
		return fail(protocol.ControllerInvalidMaster, "Rejecting alter syncStateSet request because the current leader is:{%s}, not {%d}", cur, c.BrokerID)
	}
	if c.MasterEpoch != b.MasterEpoch {
		return fail(protocol.ControllerFencedMasterEpoch, "Rejecting alter syncStateSet request because the current master epoch is:{%d}, not {%d}", b.MasterEpoch, c.MasterEpoch)
	}
	if c.SyncStateSetEpoch != b.SyncStateSetEpoch {
		return fail(protocol.ControllerFencedSyncStateSetEpoch, "Rejecting alter syncStateSet request because the current syncStateSet epoch is:{%d}, not {%d}", b.SyncStateSetEpoch, c.SyncStateSetEpoch)
	}
	for _, id := range next {
		if _, ok := b.Members[id]; !ok {
			return fail(protocol.ControllerInvalidReplicas, "Rejecting alter syncStateSet request because the replicas {%d} don't exist", id)
		}
		if _, ok := c.alive(id); !ok {
			return fail(protocol.ControllerBrokerNotAlive, "Rejecting alter syncStateSet request because the replicas {%d} don't alive", id)
		}
	}
	if !slices.Contains(next, m) {
		return fail(protocol.ControllerAlterSyncStateSetFailed, "Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader {%d}", m)
	}
	b.setSyncStateSet(next)
	return ok().header(&protocol.AlterSyncStateSetResponseHeader{NewSyncStateSetEpoch: b.SyncStateSetEpoch}).body(b.syncStateSetBody())
}

// cleanBrokerData is CLEAN_BROKER_DATA (mqadmin cleanBrokerMetadata):
// forget a whole set or some of its ids, refused while they are alive
// unless isCleanLivingBroker.
func (s *state) cleanBrokerData(c *command) *result {
	var ids []int64
	if c.CleanIDs != "" {
		for _, f := range strings.Split(c.CleanIDs, ";") {
			id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return fail(protocol.ControllerInvalidCleanBrokerMetadata,
					"Please set the option <brokerControllerIdsToClean> according to the format, exception: %v", err)
			}
			ids = append(ids, id)
		}
	}
	b := s.Sets[c.BrokerName]
	if !c.CleanLiving {
		if len(ids) == 0 && b != nil && b.Master != nil {
			return fail(protocol.ControllerInvalidCleanBrokerMetadata, "Broker %s is still alive, clean up failure", c.BrokerName)
		}
		for _, id := range ids {
			if _, alive := c.alive(id); alive {
				return fail(protocol.ControllerInvalidCleanBrokerMetadata, "Broker [%s,  %d] is still alive, clean up failure", c.BrokerName, id)
			}
		}
	}
	if b == nil {
		return fail(protocol.ControllerInvalidCleanBrokerMetadata, "Broker %s is not existed,clean broker data failure.", c.BrokerName)
	}
	if len(ids) == 0 {
		delete(s.Sets, c.BrokerName)
		return ok()
	}
	for _, id := range ids {
		delete(b.Members, id)
		b.SyncStateSet = slices.DeleteFunc(b.SyncStateSet, func(x int64) bool { return x == id })
		if m, ok := b.masterID(); ok && m == id {
			// Java keeps a master id it no longer knows; nobody could
			// reach it, so the set is left without one instead.
			b.Master = nil
		}
	}
	if len(b.Members) == 0 || len(b.SyncStateSet) == 0 {
		delete(s.Sets, c.BrokerName)
	}
	return ok()
}
