package namesrv

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// benchTable returns a table with groups broker-0..broker-(groups-1), each a
// master and a slave, each master serving the same topics T0..T(topics-1).
func benchTable(groups, topics int) *Table {
	tbl := NewTable()
	now := time.Now()
	tcs := make([]TopicConfig, topics)
	for i := range tcs {
		tcs[i] = TopicConfig{TopicName: fmt.Sprintf("T%d", i), ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}
	}
	for g := range groups {
		name := fmt.Sprintf("broker-%d", g)
		tbl.Register(Registration{ClusterName: "c", BrokerName: name, BrokerAddr: fmt.Sprintf("10.0.%d.1:10911", g),
			DataVersion: DataVersion{Counter: 1}, Topics: tcs}, now)
		tbl.Register(Registration{ClusterName: "c", BrokerName: name, BrokerID: 1, BrokerAddr: fmt.Sprintf("10.0.%d.2:10911", g)}, now)
	}
	return tbl
}

// BenchmarkRoute is the table side of GET_ROUTEINFO_BY_TOPIC: the lookup
// and copy of a topic served by 4 broker groups.
func BenchmarkRoute(b *testing.B) {
	tbl := benchTable(4, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := tbl.Route("T500"); !ok {
			b.Fatal("no route")
		}
	}
}

// BenchmarkGetRouteInfo is the whole handler, including the legacy JSON body.
func BenchmarkGetRouteInfo(b *testing.B) {
	cfg := Config{Addr: "127.0.0.1:0"}
	cfg.Namesrv.KVConfigPath = filepath.Join(b.TempDir(), "kv.json")
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv.table = benchTable(4, 1000)
	req := remoting.NewRequest(protocol.GetRouteinfoByTopic, map[string]string{"topic": "T500"}, nil)
	req.Version = 317
	resp := srv.getRouteInfo(nil, req)
	if resp.Code != protocol.Success {
		b.Fatalf("code %d", resp.Code)
	}
	b.SetBytes(int64(len(resp.Body)))
	b.ReportAllocs()
	for b.Loop() {
		srv.getRouteInfo(nil, req)
	}
}

// BenchmarkRegisterUnchanged is the common heartbeat: a master with 1000
// topics registers again with the same data version (no queue rebuild).
func BenchmarkRegisterUnchanged(b *testing.B) {
	tbl := benchTable(4, 1000)
	tcs := make([]TopicConfig, 1000)
	reg := Registration{ClusterName: "c", BrokerName: "broker-0", BrokerAddr: "10.0.0.1:10911",
		DataVersion: DataVersion{Counter: 1}, Topics: tcs}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		tbl.Register(reg, now)
	}
}

// BenchmarkRegisterBrokerRequest is REGISTER_BROKER end to end in the
// handler: CRC, JSON body of 1000 topics decoded, table updated (data
// version changes every time, so queue data is rebuilt).
func BenchmarkRegisterBrokerRequest(b *testing.B) {
	cfg := Config{Addr: "127.0.0.1:0"}
	cfg.Namesrv.KVConfigPath = filepath.Join(b.TempDir(), "kv.json")
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	spec := brokerSpec{cluster: "c", name: "broker-0", addr: "10.0.0.1:10911", dv: 1}
	for i := range 1000 {
		spec.topics = append(spec.topics, topic(fmt.Sprintf("T%d", i), 8, 8))
	}
	req := spec.registerRequest(&testing.T{}, false)
	b.SetBytes(int64(len(req.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if resp := srv.registerBroker(nil, req); resp.Code != protocol.Success {
			b.Fatalf("code %d %s", resp.Code, resp.Remark)
		}
	}
}
