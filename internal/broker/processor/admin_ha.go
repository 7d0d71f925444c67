package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleHAStatus serves GET_BROKER_HA_STATUS (907, mqadmin haStatus): the
// broker's HARuntimeInfo, as Java's getBrokerHaStatus; SYSTEM_ERROR with
// Java's remark when the broker has no HA service to ask.
func (ba *brokerAdmin) handleHAStatus(_ *remoting.Conn, _ *remoting.Command) *remoting.Command {
	if ba.haRuntime == nil {
		return remoting.NewResponse(protocol.SystemError, "Can not get HARuntimeInfo, may be duplicationEnable is true")
	}
	info := ba.haRuntime()
	if info.HAConnectionInfo == nil {
		info.HAConnectionInfo = []protocol.HAConnectionRuntimeInfo{}
	}
	return bodyResponse(&info)
}
