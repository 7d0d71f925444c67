package protocol

// The controller's request and response headers (RocketMQ 5.x controller
// mode; Java's header/controller and BrokerHeartbeatRequestHeader). Keys are
// Java's field names. A Java Long or Integer that may be null is an
// Optional: absent means null (no master yet, for example).

// AlterSyncStateSetRequestHeader is CONTROLLER_ALTER_SYNC_STATE_SET (1001);
// the body is a SyncStateSet.
type AlterSyncStateSetRequestHeader struct {
	BrokerName     string
	MasterBrokerID int64 // key masterBrokerId
	MasterEpoch    int32
	InvokeTime     int64
}

func (h *AlterSyncStateSetRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "brokerName", h.BrokerName)
	putInt64(m, "masterBrokerId", h.MasterBrokerID)
	putInt32(m, "masterEpoch", h.MasterEpoch)
	putInt64(m, "invokeTime", h.InvokeTime)
}

func (h *AlterSyncStateSetRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "AlterSyncStateSetRequestHeader", ext: ext}
	h.BrokerName = r.str("brokerName")
	h.MasterBrokerID = r.int64("masterBrokerId")
	h.MasterEpoch = r.int32("masterEpoch")
	h.InvokeTime = r.int64("invokeTime")
	return r.err
}

// AlterSyncStateSetResponseHeader answers CONTROLLER_ALTER_SYNC_STATE_SET.
type AlterSyncStateSetResponseHeader struct {
	NewSyncStateSetEpoch int32
}

func (h *AlterSyncStateSetResponseHeader) AppendExt(m map[string]string) {
	putInt32(m, "newSyncStateSetEpoch", h.NewSyncStateSetEpoch)
}

func (h *AlterSyncStateSetResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "AlterSyncStateSetResponseHeader", ext: ext}
	h.NewSyncStateSetEpoch = r.int32("newSyncStateSetEpoch")
	return r.err
}

// ElectMasterRequestHeader is CONTROLLER_ELECT_MASTER (1002). BrokerID -1
// (Java's default) is an election the controller itself triggers;
// DesignateElect asks for BrokerID exactly (mqadmin electMaster).
type ElectMasterRequestHeader struct {
	ClusterName    string
	BrokerName     string
	BrokerID       int64 // key brokerId; default -1
	DesignateElect bool
	InvokeTime     int64
}

func (h *ElectMasterRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "brokerName", h.BrokerName)
	putInt64(m, "brokerId", h.BrokerID)
	putBool(m, "designateElect", h.DesignateElect)
	putInt64(m, "invokeTime", h.InvokeTime)
}

func (h *ElectMasterRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ElectMasterRequestHeader", ext: ext}
	h.ClusterName = r.str("clusterName")
	h.BrokerName = r.str("brokerName")
	h.BrokerID = r.optInt64("brokerId").Or(-1)
	h.DesignateElect = r.bool("designateElect")
	h.InvokeTime = r.int64("invokeTime")
	return r.err
}

// MasterInfoHeader is the response header of CONTROLLER_ELECT_MASTER
// (ElectMasterResponseHeader), CONTROLLER_GET_REPLICA_INFO
// (GetReplicaInfoResponseHeader: no syncStateSetEpoch) and
// CONTROLLER_REGISTER_BROKER (RegisterBrokerToControllerResponseHeader:
// clusterName and brokerName too). Absent fields are Java nulls.
type MasterInfoHeader struct {
	ClusterName       string
	BrokerName        string
	MasterBrokerID    Optional[int64] // key masterBrokerId
	MasterAddress     string
	MasterEpoch       Optional[int32]
	SyncStateSetEpoch Optional[int32]
}

func (h *MasterInfoHeader) AppendExt(m map[string]string) {
	if h.ClusterName != "" {
		putStr(m, "clusterName", h.ClusterName)
	}
	if h.BrokerName != "" {
		putStr(m, "brokerName", h.BrokerName)
	}
	putOptInt64(m, "masterBrokerId", h.MasterBrokerID)
	if h.MasterAddress != "" {
		putStr(m, "masterAddress", h.MasterAddress)
	}
	putOptInt32(m, "masterEpoch", h.MasterEpoch)
	putOptInt32(m, "syncStateSetEpoch", h.SyncStateSetEpoch)
}

func (h *MasterInfoHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ElectMasterResponseHeader", ext: ext}
	h.ClusterName = r.str("clusterName")
	h.BrokerName = r.str("brokerName")
	h.MasterBrokerID = r.optInt64("masterBrokerId")
	h.MasterAddress = r.str("masterAddress")
	h.MasterEpoch = r.optInt32("masterEpoch")
	h.SyncStateSetEpoch = r.optInt32("syncStateSetEpoch")
	return r.err
}

// BrokerNameHeader is the request of CONTROLLER_GET_REPLICA_INFO
// (GetReplicaInfoRequestHeader).
type BrokerNameHeader struct {
	BrokerName string
}

func (h *BrokerNameHeader) AppendExt(m map[string]string) { putStr(m, "brokerName", h.BrokerName) }

func (h *BrokerNameHeader) Decode(ext map[string]string) error {
	h.BrokerName = ext["brokerName"]
	return nil
}

// GetMetaDataResponseHeader answers CONTROLLER_GET_METADATA_INFO (1005):
// the controller group, its leader and the peers ("id:addr;" each).
type GetMetaDataResponseHeader struct {
	Group                   string
	ControllerLeaderID      string // key controllerLeaderId
	ControllerLeaderAddress string
	IsLeader                bool
	Peers                   string
}

func (h *GetMetaDataResponseHeader) AppendExt(m map[string]string) {
	putStr(m, "group", h.Group)
	if h.ControllerLeaderID != "" {
		putStr(m, "controllerLeaderId", h.ControllerLeaderID)
	}
	if h.ControllerLeaderAddress != "" {
		putStr(m, "controllerLeaderAddress", h.ControllerLeaderAddress)
	}
	putBool(m, "isLeader", h.IsLeader)
	putStr(m, "peers", h.Peers)
}

func (h *GetMetaDataResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "GetMetaDataResponseHeader", ext: ext}
	h.Group = r.str("group")
	h.ControllerLeaderID = r.str("controllerLeaderId")
	h.ControllerLeaderAddress = r.str("controllerLeaderAddress")
	h.IsLeader = r.bool("isLeader")
	h.Peers = r.str("peers")
	return r.err
}

// CleanControllerBrokerDataRequestHeader is CLEAN_BROKER_DATA (1011).
// BrokerControllerIdsToClean is ';'-separated broker ids; empty = the
// whole broker set.
type CleanControllerBrokerDataRequestHeader struct {
	ClusterName                string
	BrokerName                 string
	BrokerControllerIdsToClean string
	IsCleanLivingBroker        bool
	InvokeTime                 int64
}

func (h *CleanControllerBrokerDataRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "brokerName", h.BrokerName)
	if h.BrokerControllerIdsToClean != "" {
		putStr(m, "brokerControllerIdsToClean", h.BrokerControllerIdsToClean)
	}
	putBool(m, "isCleanLivingBroker", h.IsCleanLivingBroker)
	putInt64(m, "invokeTime", h.InvokeTime)
}

func (h *CleanControllerBrokerDataRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "CleanControllerBrokerDataRequestHeader", ext: ext}
	h.ClusterName = r.str("clusterName")
	h.BrokerName = r.str("brokerName")
	h.BrokerControllerIdsToClean = r.str("brokerControllerIdsToClean")
	h.IsCleanLivingBroker = r.bool("isCleanLivingBroker")
	h.InvokeTime = r.int64("invokeTime")
	return r.err
}

// BrokerSetHeader is the request of CONTROLLER_GET_NEXT_BROKER_ID
// (GetNextBrokerIdRequestHeader) and the response of
// CONTROLLER_APPLY_BROKER_ID (ApplyBrokerIdResponseHeader).
type BrokerSetHeader struct {
	ClusterName string
	BrokerName  string
}

func (h *BrokerSetHeader) AppendExt(m map[string]string) {
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "brokerName", h.BrokerName)
}

func (h *BrokerSetHeader) Decode(ext map[string]string) error {
	h.ClusterName = ext["clusterName"]
	h.BrokerName = ext["brokerName"]
	return nil
}

// GetNextBrokerIDResponseHeader answers CONTROLLER_GET_NEXT_BROKER_ID (1012).
type GetNextBrokerIDResponseHeader struct {
	ClusterName  string
	BrokerName   string
	NextBrokerID Optional[int64] // key nextBrokerId
}

func (h *GetNextBrokerIDResponseHeader) AppendExt(m map[string]string) {
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "brokerName", h.BrokerName)
	putOptInt64(m, "nextBrokerId", h.NextBrokerID)
}

func (h *GetNextBrokerIDResponseHeader) Decode(ext map[string]string) error {
	r := extReader{header: "GetNextBrokerIdResponseHeader", ext: ext}
	h.ClusterName = r.str("clusterName")
	h.BrokerName = r.str("brokerName")
	h.NextBrokerID = r.optInt64("nextBrokerId")
	return r.err
}

// ApplyBrokerIDRequestHeader is CONTROLLER_APPLY_BROKER_ID (1013).
// RegisterCheckCode is "brokerAddr;timestamp": the address part becomes
// the broker's address, the whole string proves a later apply comes from
// the broker that got the id first.
type ApplyBrokerIDRequestHeader struct {
	ClusterName       string
	BrokerName        string
	AppliedBrokerID   int64 // key appliedBrokerId
	RegisterCheckCode string
}

func (h *ApplyBrokerIDRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "brokerName", h.BrokerName)
	putInt64(m, "appliedBrokerId", h.AppliedBrokerID)
	putStr(m, "registerCheckCode", h.RegisterCheckCode)
}

func (h *ApplyBrokerIDRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "ApplyBrokerIdRequestHeader", ext: ext}
	h.ClusterName = r.str("clusterName")
	h.BrokerName = r.str("brokerName")
	h.AppliedBrokerID = r.int64("appliedBrokerId")
	h.RegisterCheckCode = r.str("registerCheckCode")
	return r.err
}

// RegisterBrokerToControllerRequestHeader is CONTROLLER_REGISTER_BROKER (1003).
type RegisterBrokerToControllerRequestHeader struct {
	ClusterName   string
	BrokerName    string
	BrokerID      int64 // key brokerId
	BrokerAddress string
	InvokeTime    int64
}

func (h *RegisterBrokerToControllerRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "brokerName", h.BrokerName)
	putInt64(m, "brokerId", h.BrokerID)
	putStr(m, "brokerAddress", h.BrokerAddress)
	putInt64(m, "invokeTime", h.InvokeTime)
}

func (h *RegisterBrokerToControllerRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "RegisterBrokerToControllerRequestHeader", ext: ext}
	h.ClusterName = r.str("clusterName")
	h.BrokerName = r.str("brokerName")
	h.BrokerID = r.int64("brokerId")
	h.BrokerAddress = r.str("brokerAddress")
	h.InvokeTime = r.int64("invokeTime")
	return r.err
}

// BrokerHeartbeatRequestHeader is BROKER_HEARTBEAT (904) as a controller
// receives it. HeartbeatTimeoutMills (Java's spelling) is how long the
// controller may wait for the next one.
type BrokerHeartbeatRequestHeader struct {
	ClusterName           string
	BrokerAddr            string
	BrokerName            string
	BrokerID              Optional[int64] // key brokerId
	Epoch                 Optional[int32]
	MaxOffset             Optional[int64]
	ConfirmOffset         Optional[int64]
	HeartbeatTimeoutMills Optional[int64]
	ElectionPriority      Optional[int32]
}

func (h *BrokerHeartbeatRequestHeader) AppendExt(m map[string]string) {
	putStr(m, "clusterName", h.ClusterName)
	putStr(m, "brokerAddr", h.BrokerAddr)
	putStr(m, "brokerName", h.BrokerName)
	putOptInt64(m, "brokerId", h.BrokerID)
	putOptInt32(m, "epoch", h.Epoch)
	putOptInt64(m, "maxOffset", h.MaxOffset)
	putOptInt64(m, "confirmOffset", h.ConfirmOffset)
	putOptInt64(m, "heartbeatTimeoutMills", h.HeartbeatTimeoutMills)
	putOptInt32(m, "electionPriority", h.ElectionPriority)
}

func (h *BrokerHeartbeatRequestHeader) Decode(ext map[string]string) error {
	r := extReader{header: "BrokerHeartbeatRequestHeader", ext: ext}
	h.ClusterName = r.str("clusterName")
	h.BrokerAddr = r.str("brokerAddr")
	h.BrokerName = r.str("brokerName")
	h.BrokerID = r.optInt64("brokerId")
	h.Epoch = r.optInt32("epoch")
	h.MaxOffset = r.optInt64("maxOffset")
	h.ConfirmOffset = r.optInt64("confirmOffset")
	h.HeartbeatTimeoutMills = r.optInt64("heartbeatTimeoutMills")
	h.ElectionPriority = r.optInt32("electionPriority")
	return r.err
}
