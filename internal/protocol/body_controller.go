package protocol

// The controller's JSON bodies (Java's body/SyncStateSet,
// ElectMasterResponseBody, BrokerMemberGroup and BrokerReplicasInfo),
// written with MarshalFastJSON and read with UnmarshalFastJSON.

// SyncStateSet is the body of CONTROLLER_ALTER_SYNC_STATE_SET's request
// and of the answers to ALTER_SYNC_STATE_SET, REGISTER_BROKER and
// GET_REPLICA_INFO: the broker ids in sync with the master, and the
// epoch of that set.
type SyncStateSet struct {
	SyncStateSet      []int64 `json:"syncStateSet"`
	SyncStateSetEpoch int32   `json:"syncStateSetEpoch"`
}

// BrokerMemberGroup is a broker set's members by broker id.
type BrokerMemberGroup struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
}

// ElectMasterResponseBody is the body of CONTROLLER_ELECT_MASTER's answer.
type ElectMasterResponseBody struct {
	BrokerMemberGroup *BrokerMemberGroup `json:"brokerMemberGroup,omitempty"`
	SyncStateSet      []int64            `json:"syncStateSet"`
}

// ReplicaIdentity is one broker of a set in BrokerReplicasInfo.
type ReplicaIdentity struct {
	BrokerName    string `json:"brokerName"`
	BrokerID      int64  `json:"brokerId"`
	BrokerAddress string `json:"brokerAddress"`
	Alive         bool   `json:"alive"`
}

// ReplicasInfo is a broker set's master and replicas in BrokerReplicasInfo.
// MasterBrokerID is nil when the set has no master.
type ReplicasInfo struct {
	MasterBrokerID    *int64            `json:"masterBrokerId,omitempty"`
	MasterAddress     string            `json:"masterAddress,omitempty"`
	MasterEpoch       int32             `json:"masterEpoch"`
	SyncStateSetEpoch int32             `json:"syncStateSetEpoch"`
	InSyncReplicas    []ReplicaIdentity `json:"inSyncReplicas"`
	NotInSyncReplicas []ReplicaIdentity `json:"notInSyncReplicas"`
}

// BrokerReplicasInfo is the body of CONTROLLER_GET_SYNC_STATE_DATA's
// answer (the request body is a JSON array of broker names).
type BrokerReplicasInfo struct {
	ReplicasInfoTable map[string]ReplicasInfo `json:"replicasInfoTable"`
}

// EpochEntry is one entry of EpochEntryCache's epochList (Java's
// remoting.protocol.EpochEntry).
type EpochEntry struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"startOffset"`
	EndOffset   int64 `json:"endOffset"`
}

// EpochEntryCache is the body of GET_BROKER_EPOCH_CACHE's answer: the
// broker's epoch file and CommitLog end. HAServerAddr is rocketd's own
// member (fastjson readers skip it): the master's HA address, which a
// slave ordered to follow it replicates from.
type EpochEntryCache struct {
	ClusterName  string       `json:"clusterName"`
	BrokerName   string       `json:"brokerName"`
	BrokerID     int64        `json:"brokerId"`
	EpochList    []EpochEntry `json:"epochList"`
	MaxOffset    int64        `json:"maxOffset"`
	HAServerAddr string       `json:"haServerAddr,omitempty"`
}
