package protocol

// HARuntimeInfo answers GET_BROKER_HA_STATUS (907, mqadmin haStatus): on a
// master, the CommitLog end and one HAConnectionRuntimeInfo per connected
// slave; on a slave, HAClientRuntimeInfo.
type HARuntimeInfo struct {
	Master                   bool                      `json:"master"`
	MasterCommitLogMaxOffset int64                     `json:"masterCommitLogMaxOffset"`
	InSyncSlaveNums          int32                     `json:"inSyncSlaveNums"`
	HAConnectionInfo         []HAConnectionRuntimeInfo `json:"haConnectionInfo"`
	HAClientRuntimeInfo      HAClientRuntimeInfo       `json:"haClientRuntimeInfo"`
}

// HAConnectionRuntimeInfo is one slave connection of a master.
type HAConnectionRuntimeInfo struct {
	Addr                    string `json:"addr"` // the slave's ip:port
	SlaveAckOffset          int64  `json:"slaveAckOffset"`
	Diff                    int64  `json:"diff"` // master end - SlaveAckOffset
	InSync                  bool   `json:"inSync"`
	TransferredByteInSecond int64  `json:"transferredByteInSecond"`
	TransferFromWhere       int64  `json:"transferFromWhere"` // next offset sent
}

// HAClientRuntimeInfo is a slave's replication client.
type HAClientRuntimeInfo struct {
	MasterAddr              string `json:"masterAddr,omitempty"` // null on a master
	TransferredByteInSecond int64  `json:"transferredByteInSecond"`
	MaxOffset               int64  `json:"maxOffset"` // the slave's CommitLog end
	LastReadTimestamp       int64  `json:"lastReadTimestamp"`
	LastWriteTimestamp      int64  `json:"lastWriteTimestamp"`
	MasterFlushOffset       int64  `json:"masterFlushOffset"`
}
