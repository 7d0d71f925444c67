// Package controller is RocketMQ 5.x's controller (controller mode
// fail-over): per broker set (brokerName, with its clusterName) it keeps the
// broker ids, the master and its epoch, and the SyncStateSet and its epoch,
// replicated by a Raft group; it elects a new master from the SyncStateSet
// when the master's heartbeats stop, and answers Java's controller request
// codes so that Java brokers and mqadmin work against it unchanged.
//
// # Consensus
//
// The group is github.com/hashicorp/raft (the library Consul, Nomad and
// Vault run on) with github.com/hashicorp/raft-boltdb/v2 as log and stable
// store: a single bbolt file per node whose writes are fsynced
// transactions, kept by the same maintainers as the raft library and used
// with it in production for years. The project's vfs has no transactional
// key/value store, and a home-made log store would be a second consensus
// component to get right. Snapshots are raft's FileSnapshotStore.
//
// On disk, under controllerStorePath/<controllerDLegerSelfId>/: raft.db
// (log entries and raft's term/vote) and snapshots/ (raft's format; the
// snapshot body is the JSON of the state below).
//
// Configuration (config.ControllerConfig): controllerDLegerPeers
// "n0-host:port;n1-host:port" names each node and its Raft transport
// address, controllerDLegerSelfId this node; every node bootstraps the
// same configuration once. Brokers and tools use listenPort (the
// NameServer's port when embedded, enableControllerInNamesrv=true): unlike
// Java's DLedger controller, which serves clients on the DLedger port, the
// Raft transport has a port of its own.
//
// # Replicated state and log entries
//
// A log entry is a JSON command: {"op": ..., request fields, "alive":
// [{"id","epoch","maxOffset","priority"}...], "unclean": bool}. Ops:
// applyBrokerId, registerBroker, electMaster, alterSyncStateSet,
// cleanBrokerData, and leaderAddr (a new leader records its client
// address, so that followers can name it). Liveness is not replicated (as
// in Java), so the leader writes the live members it knows, with their
// epoch/offset, and enableElectUncleanMaster into the command; applying an
// entry runs Java's checks (ReplicasInfoManager) against the state and
// then changes it, so every node decides the same from the log, and two
// requests are never both checked against the same state. The answer to a
// write is the state machine's result for its entry.
//
// The state ("sets" by brokerName): clusterName, brokerName, nextBrokerId,
// members {id: {addr, checkCode}}, master (absent: none), masterEpoch,
// syncStateSet (sorted ids), syncStateSetEpoch; and "clientAddrs" {raft id:
// remoting address}.
//
// Reads (GET_NEXT_BROKER_ID, GET_REPLICA_INFO, GET_SYNC_STATE_DATA) are
// answered by the leader after raft's VerifyLeader. A node serves as leader
// only after a barrier (every entry of earlier terms applied) and its
// leaderAddr entry. Any other node answers CONTROLLER_NOT_LEADER (2007),
// with controllerLeaderId/controllerLeaderAddress in the header when it
// knows the leader; GET_CONTROLLER_METADATA_INFO is answered by every node.
//
// # Liveness and election
//
// BROKER_HEARTBEAT (904) is recorded by every node that receives it (Java
// brokers send it to every controller): the broker's timeout is its
// heartbeatTimeoutMills (default DefaultBrokerHeartbeatTimeout). Every
// scanNotActiveBrokerInterval a node expires silent brokers and closes
// their connections; a closed connection forgets its brokers at once.
// The leader checks every scanInactiveMasterInterval (and at once after a
// connection closed) for sets whose master is not alive while a member is,
// and proposes an election (brokerId -1). A master the leader never heard
// from is judged only once it has led for the broker heartbeat timeout.
//
// Election follows Java's DefaultElectPolicy: the first election of a set
// takes the asking broker; then the live members of the SyncStateSet, the
// old master if it is among them, else the designated broker (mqadmin
// electMaster), else the best by (epoch desc, maxOffset desc,
// electionPriority asc, id asc). Only with enableElectUncleanMaster=true are
// the other members considered. With no eligible replica the set keeps no
// master (an election by the controller records that) and the answer's
// remark says why.
//
// After an election with a new master, with notifyBrokerRoleChanged=true
// (the default), the leader sends NOTIFY_BROKER_ROLE_CHANGED (1008, oneway;
// header masterAddress, masterBrokerId, masterEpoch, syncStateSetEpoch;
// body SyncStateSet) to the set's live brokers from a loop of its own, so
// that they switch roles at once instead of on their next poll.
//
// A write whose raft Apply fails with "not leader" was never appended and
// is answered CONTROLLER_NOT_LEADER (the client retries on the leader); one
// that loses leadership after it was appended is answered SYSTEM_ERROR
// saying it may or may not have taken effect, since a blind retry could
// apply it twice.
//
// # Wire (Java's field names)
//
// Request headers: CONTROLLER_ALTER_SYNC_STATE_SET brokerName,
// masterBrokerId, masterEpoch, invokeTime, body SyncStateSet
// {"syncStateSet":[ids],"syncStateSetEpoch":n}; answer header
// newSyncStateSetEpoch, body the new SyncStateSet. CONTROLLER_ELECT_MASTER
// clusterName, brokerName, brokerId (-1: by the controller),
// designateElect, invokeTime; answer header masterBrokerId, masterAddress,
// masterEpoch, syncStateSetEpoch, body {"brokerMemberGroup":{"cluster",
// "brokerName","brokerAddrs":{id:addr}},"syncStateSet":[ids]}.
// CONTROLLER_REGISTER_BROKER clusterName, brokerName, brokerId,
// brokerAddress, invokeTime; answer header clusterName, brokerName and,
// when the master is alive, masterBrokerId, masterAddress, masterEpoch,
// syncStateSetEpoch; body SyncStateSet. CONTROLLER_GET_REPLICA_INFO
// brokerName; answer masterBrokerId, masterAddress, masterEpoch, body
// SyncStateSet. CONTROLLER_GET_METADATA_INFO answer group,
// controllerLeaderId, controllerLeaderAddress, isLeader, peers ("id:addr;"
// each). CONTROLLER_GET_SYNC_STATE_DATA body ["brokerName",...], answer
// {"replicasInfoTable":{name:{"masterBrokerId","masterAddress",
// "masterEpoch","syncStateSetEpoch","inSyncReplicas":[{"brokerName",
// "brokerId","brokerAddress","alive"}],"notInSyncReplicas":[...]}}}.
// CLEAN_BROKER_DATA clusterName, brokerName, brokerControllerIdsToClean
// ("1;2"), isCleanLivingBroker. CONTROLLER_GET_NEXT_BROKER_ID clusterName,
// brokerName; answer nextBrokerId. CONTROLLER_APPLY_BROKER_ID clusterName,
// brokerName, appliedBrokerId, registerCheckCode ("addr;timestamp").
// BROKER_HEARTBEAT clusterName, brokerAddr, brokerName, brokerId, epoch,
// maxOffset, confirmOffset, heartbeatTimeoutMills, electionPriority.
// GET_CONTROLLER_CONFIG answers the settings as properties text;
// UPDATE_CONTROLLER_CONFIG (body: properties text) changes
// enableElectUncleanMaster and notifyBrokerRoleChanged on the node it
// reaches and writes them to configStorePath (the -c file of rocketd
// controller); other keys are refused with NO_PERMISSION.
//
// Deviations from Java, on purpose: a first election by an id that is not
// a member is refused (CONTROLLER_ELECT_MASTER_FAILED); nextBrokerId never
// falls back to an id applied out of order; cleaning the master's id leaves
// the set without a master; an expired broker's connection is closed only
// when no live broker heartbeats over it.
package controller
