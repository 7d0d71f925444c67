package broker_test

import (
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// GET_BROKER_HA_STATUS on a master lists its slave with its ack; on the
// slave it describes the HA client.
func TestHAStatus(t *testing.T) {
	c := startCluster(t, nil)
	const topic = "HAStatusTopic"
	c.createTopic(topic, 2)
	s := c.startSlave(t)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 2, BornTimestamp: time.Now().UnixMilli()}
	for i := range 10 {
		if r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte{byte(i)}); r.Code != protocol.Success {
			t.Fatalf("send %d: %d %s", i, r.Code, r.Remark)
		}
	}
	haStatus := func(addr string) protocol.HARuntimeInfo {
		t.Helper()
		r := c.invoke(addr, protocol.GetBrokerHAStatus, nil, nil)
		if r.Code != protocol.Success {
			t.Fatalf("GET_BROKER_HA_STATUS from %s: %d %s", addr, r.Code, r.Remark)
		}
		var info protocol.HARuntimeInfo
		if err := protocol.UnmarshalFastJSON(r.Body, &info); err != nil {
			t.Fatalf("%v: %s", err, r.Body)
		}
		return info
	}
	var m protocol.HARuntimeInfo
	wait.For(t, 10*time.Second, "the slave to ack the master's end", func() bool {
		m = haStatus(c.b.Addr())
		return len(m.HAConnectionInfo) == 1 && m.HAConnectionInfo[0].Diff == 0
	})
	conn := m.HAConnectionInfo[0]
	if !m.Master || m.MasterCommitLogMaxOffset <= 0 || m.InSyncSlaveNums != 1 || !conn.InSync ||
		conn.SlaveAckOffset != m.MasterCommitLogMaxOffset || conn.TransferFromWhere != m.MasterCommitLogMaxOffset || conn.Addr == "" {
		t.Errorf("master status %+v", m)
	}
	sl := haStatus(s.Addr())
	cl := sl.HAClientRuntimeInfo
	if sl.Master || len(sl.HAConnectionInfo) != 0 || cl.MasterAddr != c.b.HAServer().Addr().String() ||
		cl.MaxOffset != m.MasterCommitLogMaxOffset || cl.LastReadTimestamp <= 0 || cl.LastWriteTimestamp <= 0 {
		t.Errorf("slave status %+v (master end %d)", sl, m.MasterCommitLogMaxOffset)
	}
}
