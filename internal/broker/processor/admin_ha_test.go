package processor_test

import (
	"testing"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

func TestHAStatusBody(t *testing.T) {
	e := newEnv(t, func(_ *config.BrokerConfig, d *processor.Deps) {
		d.HARuntime = func() protocol.HARuntimeInfo {
			return protocol.HARuntimeInfo{Master: true, MasterCommitLogMaxOffset: 300, InSyncSlaveNums: 1,
				HAConnectionInfo: []protocol.HAConnectionRuntimeInfo{{Addr: "127.0.0.1:5", SlaveAckOffset: 200, Diff: 100, InSync: true}}}
		}
	})
	r := e.call(protocol.GetBrokerHAStatus, nil, nil)
	want := `{"haClientRuntimeInfo":{"lastReadTimestamp":0,"lastWriteTimestamp":0,"masterFlushOffset":0,"maxOffset":0,"transferredByteInSecond":0},` +
		`"haConnectionInfo":[{"addr":"127.0.0.1:5","diff":100,"inSync":true,"slaveAckOffset":200,"transferFromWhere":0,"transferredByteInSecond":0}],` +
		`"inSyncSlaveNums":1,"master":true,"masterCommitLogMaxOffset":300}`
	if r.Code != protocol.Success || string(r.Body) != want {
		t.Errorf("GET_BROKER_HA_STATUS: %d %s\n got %s\nwant %s", r.Code, r.Remark, r.Body, want)
	}

	// Without an HA service: Java's remark.
	e = newEnv(t, nil)
	r = e.call(protocol.GetBrokerHAStatus, nil, nil)
	if r.Code != protocol.SystemError || r.Remark != "Can not get HARuntimeInfo, may be duplicationEnable is true" {
		t.Errorf("no HA service: %d %q", r.Code, r.Remark)
	}
}
