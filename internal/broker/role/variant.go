package role

import (
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/ha"
	"github.com/rocketd/rocketd/internal/store"
)

// Controller mode replicates with RocketMQ 5's AutoSwitch HA protocol
// (internal/ha, doc.go "AutoSwitch mode"), master/slave mode without a
// controller with the classic one. What AutoSwitch does that the broker
// would otherwise have to do itself:
//
//   - the slave's handshake carries its brokerId, so the master knows
//     each slave's ack and caught-up time by id (Server.SlaveInfos) and
//     proposes the SyncStateSet from them (Server.ProposeSyncStateSet:
//     Java's shrink and expand rules, the one copy of them);
//   - the master's answer carries its epoch file: the slave cuts its
//     store to the consistent point before it reports anything, and
//     appends each new epoch's entry before that epoch's first byte, so
//     its epoch file always describes the log it holds (no truncation or
//     epoch copying by the broker before replication starts);
//   - with allAckInSyncStateSet a put waits in the HA server for every
//     slave of the set the broker gave it (Server.SetSyncStateSet), woken
//     by each slave's ack.

// autoSwitchServer makes cfg an AutoSwitch master's: the broker's id, the
// SyncStateSet waits, and a SyncStateSet check whenever a slave comes,
// goes or catches up.
func (m *controllerMode) autoSwitchServer(cfg *ha.ServerConfig, role config.BrokerRole) {
	bc := m.r.bc
	cfg.AutoSwitch = true
	cfg.LocalBrokerID = m.id.Load()
	cfg.AllAckInSyncStateSet = bc.AllAckInSyncStateSet
	cfg.Sync = role == config.SyncMaster || bc.AllAckInSyncStateSet
	// The AutoSwitch protocol has no challenge (Java's has none; its
	// slaves could not answer one): with authenticationEnabled the port
	// is open as Java's, and newControllerMode warns naming it.
	cfg.Authenticator = nil
	cfg.OnSlaveChange = m.kickCheck
}

// autoSwitchClient makes cfg an AutoSwitch slave's: its brokerId in the
// handshake, and masters older than epoch (the one the controller named)
// fenced before anything is truncated.
func (m *controllerMode) autoSwitchClient(cfg *ha.ClientConfig, brokerID int64, epoch int32) {
	bc := m.r.bc
	cfg.AutoSwitch = true
	cfg.BrokerID = brokerID
	cfg.MasterEpoch = func() int32 { return epoch }
	cfg.SyncFromLastFile = bc.SyncFromLastFile
	cfg.AsyncLearner = bc.AsyncLearner
	cfg.Credentials = nil // no AutoSwitch challenge (see autoSwitchServer)
}

// inSyncPolicy is minInSyncReplicas on a controller-mode master: a put
// that waits is refused before it is written, IN_SYNC_REPLICAS_NOT_ENOUGH,
// while the SyncStateSet (the master included) has fewer members
// (Java's CommitLog.asyncPutMessage checks inSyncReplicasNums before the
// append, whatever allAckInSyncStateSet says: a controller-mode master
// is always SYNC_MASTER there). The set is the one the controller
// accepted; Java also counts a proposed larger set while its
// ALTER_SYNC_STATE_SET is in flight, so rocketd may refuse for that one
// round trip longer after an expansion. Replaced whole when the set
// changes. What a put then waits for is the HA server's
// (ServerConfig.AllAckInSyncStateSet: every member's ack).
type inSyncPolicy struct {
	setSize   int // the SyncStateSet's members, the master included
	minInSync int
}

// admit answers InSyncReplicasNotEnough while the set is too small.
func (p *inSyncPolicy) admit() store.PutStatus {
	if p.setSize < p.minInSync {
		return store.InSyncReplicasNotEnough
	}
	return store.PutOK
}
