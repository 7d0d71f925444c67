package role

import (
	"github.com/rocketd/rocketd/internal/ha"
	"github.com/rocketd/rocketd/internal/protocol"
)

// HARuntimeInfo is GET_BROKER_HA_STATUS's body (Java's
// DefaultHAService.getRuntimeInfo): on a master its CommitLog end and each
// connected slave; on a slave its HA client. masterFlushOffset stays 0, as
// in Java outside controller mode.
func (r *Role) HARuntimeInfo() protocol.HARuntimeInfo {
	cur := r.cur.Load()
	if cur.server == nil {
		var st ha.Status
		if cur.client != nil {
			st = cur.client.Status()
		}
		info := protocol.HARuntimeInfo{HAConnectionInfo: []protocol.HAConnectionRuntimeInfo{}}
		info.HAClientRuntimeInfo = protocol.HAClientRuntimeInfo{
			MasterAddr:              st.Master,
			TransferredByteInSecond: st.BytesPerSecond,
			MaxOffset:               r.store.CommitLogMaxOffset(),
		}
		if !st.LastRead.IsZero() {
			info.HAClientRuntimeInfo.LastReadTimestamp = st.LastRead.UnixMilli()
		}
		if !st.LastWrite.IsZero() {
			info.HAClientRuntimeInfo.LastWriteTimestamp = st.LastWrite.UnixMilli()
		}
		return info
	}
	end := r.store.CommitLogMaxOffset()
	slaves := cur.server.Slaves()
	info := protocol.HARuntimeInfo{Master: true, MasterCommitLogMaxOffset: end,
		HAConnectionInfo: make([]protocol.HAConnectionRuntimeInfo, 0, len(slaves))}
	for _, s := range slaves {
		if s.InSync {
			info.InSyncSlaveNums++
		}
		info.HAConnectionInfo = append(info.HAConnectionInfo, protocol.HAConnectionRuntimeInfo{
			Addr: s.Addr, SlaveAckOffset: s.Acked, Diff: end - s.Acked, InSync: s.InSync,
			TransferredByteInSecond: s.BytesPerSecond, TransferFromWhere: s.Next,
		})
	}
	return info
}
