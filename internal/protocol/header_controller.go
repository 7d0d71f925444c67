package protocol

// The controller's request and response headers (RocketMQ 5.x controller
// mode; Java's header/controller and BrokerHeartbeatRequestHeader). Keys are
// Java's field names. A Java Long or Integer that may be null is an
// Optional: absent means null (no master yet, for example).

// AlterSyncStateSetRequestHeader is CONTROLLER_ALTER_SYNC_STATE_SET (1001);
// the body is a SyncStateSet.
type AlterSyncStateSetRequestHeader struct {
	BrokerName     string `ext:"brokerName"`
	MasterBrokerID int64  `ext:"masterBrokerId"`
	MasterEpoch    int32  `ext:"masterEpoch"`
	InvokeTime     int64  `ext:"invokeTime"`
}

// AlterSyncStateSetResponseHeader answers CONTROLLER_ALTER_SYNC_STATE_SET.
type AlterSyncStateSetResponseHeader struct {
	NewSyncStateSetEpoch int32 `ext:"newSyncStateSetEpoch"`
}

// ElectMasterRequestHeader is CONTROLLER_ELECT_MASTER (1002). BrokerID -1
// (Java's default) is an election the controller itself triggers;
// DesignateElect asks for BrokerID exactly (mqadmin electMaster).
type ElectMasterRequestHeader struct {
	ClusterName    string `ext:"clusterName"`
	BrokerName     string `ext:"brokerName"`
	BrokerID       int64  `ext:"brokerId,default=-1"`
	DesignateElect bool   `ext:"designateElect"`
	InvokeTime     int64  `ext:"invokeTime"`
}

// MasterInfoHeader is the response header of CONTROLLER_ELECT_MASTER
// (ElectMasterResponseHeader), CONTROLLER_GET_REPLICA_INFO
// (GetReplicaInfoResponseHeader: no syncStateSetEpoch) and
// CONTROLLER_REGISTER_BROKER (RegisterBrokerToControllerResponseHeader:
// clusterName and brokerName too). Absent fields are Java nulls.
//
//ext:header ElectMasterResponseHeader
type MasterInfoHeader struct {
	ClusterName       string          `ext:"clusterName,opt"`
	BrokerName        string          `ext:"brokerName,opt"`
	MasterBrokerID    Optional[int64] `ext:"masterBrokerId"`
	MasterAddress     string          `ext:"masterAddress,opt"`
	MasterEpoch       Optional[int32] `ext:"masterEpoch"`
	SyncStateSetEpoch Optional[int32] `ext:"syncStateSetEpoch"`
}

// BrokerNameHeader is the request of CONTROLLER_GET_REPLICA_INFO
// (GetReplicaInfoRequestHeader).
type BrokerNameHeader struct {
	BrokerName string `ext:"brokerName"`
}

// GetMetaDataResponseHeader answers CONTROLLER_GET_METADATA_INFO (1005):
// the controller group, its leader and the peers ("id:addr;" each).
type GetMetaDataResponseHeader struct {
	Group                   string `ext:"group"`
	ControllerLeaderID      string `ext:"controllerLeaderId,opt"`
	ControllerLeaderAddress string `ext:"controllerLeaderAddress,opt"`
	IsLeader                bool   `ext:"isLeader"`
	Peers                   string `ext:"peers"`
}

// CleanControllerBrokerDataRequestHeader is CLEAN_BROKER_DATA (1011).
// BrokerControllerIdsToClean is ';'-separated broker ids; empty = the
// whole broker set.
type CleanControllerBrokerDataRequestHeader struct {
	ClusterName                string `ext:"clusterName"`
	BrokerName                 string `ext:"brokerName"`
	BrokerControllerIdsToClean string `ext:"brokerControllerIdsToClean,opt"`
	IsCleanLivingBroker        bool   `ext:"isCleanLivingBroker"`
	InvokeTime                 int64  `ext:"invokeTime"`
}

// BrokerSetHeader is the request of CONTROLLER_GET_NEXT_BROKER_ID
// (GetNextBrokerIdRequestHeader) and the response of
// CONTROLLER_APPLY_BROKER_ID (ApplyBrokerIdResponseHeader).
type BrokerSetHeader struct {
	ClusterName string `ext:"clusterName"`
	BrokerName  string `ext:"brokerName"`
}

// GetNextBrokerIDResponseHeader answers CONTROLLER_GET_NEXT_BROKER_ID (1012).
//
//ext:header GetNextBrokerIdResponseHeader
type GetNextBrokerIDResponseHeader struct {
	ClusterName  string          `ext:"clusterName"`
	BrokerName   string          `ext:"brokerName"`
	NextBrokerID Optional[int64] `ext:"nextBrokerId"`
}

// ApplyBrokerIDRequestHeader is CONTROLLER_APPLY_BROKER_ID (1013).
// RegisterCheckCode is "brokerAddr;timestamp": the address part becomes
// the broker's address, the whole string proves a later apply comes from
// the broker that got the id first.
//
//ext:header ApplyBrokerIdRequestHeader
type ApplyBrokerIDRequestHeader struct {
	ClusterName       string `ext:"clusterName"`
	BrokerName        string `ext:"brokerName"`
	AppliedBrokerID   int64  `ext:"appliedBrokerId"`
	RegisterCheckCode string `ext:"registerCheckCode"`
}

// RegisterBrokerToControllerRequestHeader is CONTROLLER_REGISTER_BROKER (1003).
type RegisterBrokerToControllerRequestHeader struct {
	ClusterName   string `ext:"clusterName"`
	BrokerName    string `ext:"brokerName"`
	BrokerID      int64  `ext:"brokerId"`
	BrokerAddress string `ext:"brokerAddress"`
	InvokeTime    int64  `ext:"invokeTime"`
}

// BrokerHeartbeatRequestHeader is BROKER_HEARTBEAT (904) as a controller
// receives it. HeartbeatTimeoutMills (Java's spelling) is how long the
// controller may wait for the next one.
type BrokerHeartbeatRequestHeader struct {
	ClusterName           string          `ext:"clusterName"`
	BrokerAddr            string          `ext:"brokerAddr"`
	BrokerName            string          `ext:"brokerName"`
	BrokerID              Optional[int64] `ext:"brokerId"`
	Epoch                 Optional[int32] `ext:"epoch"`
	MaxOffset             Optional[int64] `ext:"maxOffset"`
	ConfirmOffset         Optional[int64] `ext:"confirmOffset"`
	HeartbeatTimeoutMills Optional[int64] `ext:"heartbeatTimeoutMills"`
	ElectionPriority      Optional[int32] `ext:"electionPriority"`
}
