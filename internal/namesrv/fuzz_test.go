package namesrv

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// fuzzCodes are the request codes FuzzHandlers drives. The KV writers are
// left out: they only add an fsync per input to the same header decoding.
var fuzzCodes = []int32{
	protocol.RegisterBroker, protocol.UnregisterBroker, protocol.GetRouteinfoByTopic,
	protocol.GetBrokerClusterInfo, protocol.GetAllTopicListFromNameserver, protocol.GetTopicsByCluster,
	protocol.DeleteTopicInNamesrv, protocol.QueryDataVersion, protocol.WipeWritePermOfBroker,
	protocol.AddWritePermOfBroker, protocol.GetKVConfig, protocol.GetKVListByNamespace,
}

// parseFuzzExt reads "key=value" lines into extFields.
func parseFuzzExt(s string) map[string]string {
	if s == "" {
		return nil
	}
	ext := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, _ := strings.Cut(line, "=")
		ext[k] = v
	}
	return ext
}

func fuzzSeedExt(m map[string]string) string {
	var lines []string
	for k, v := range m {
		lines = append(lines, k+"="+v)
	}
	return strings.Join(lines, "\n")
}

// FuzzHandlers feeds arbitrary headers and bodies to the processors (called
// directly, without a connection) and checks that every request is answered
// with one of the codes the name server uses, and that the route table stays
// consistent whatever it was told.
func FuzzHandlers(f *testing.F) {
	tt := &testing.T{}
	good := brokerA.registerRequest(tt, false)
	zipped := brokerA.registerRequest(tt, true)
	f.Add(uint8(0), fuzzSeedExt(good.ExtFields), good.Body, int32(409))
	f.Add(uint8(0), fuzzSeedExt(zipped.ExtFields), zipped.Body, int32(409))
	f.Add(uint8(0), fuzzSeedExt(good.ExtFields), good.Body, int32(20)) // pre-V3_0_11 body form
	f.Add(uint8(1), "brokerName=broker-a\nbrokerAddr=127.0.0.1:10911\nclusterName=DefaultCluster\nbrokerId=0", []byte(nil), int32(409))
	f.Add(uint8(2), "topic=TopicA", []byte(nil), int32(317))
	f.Add(uint8(5), "cluster=DefaultCluster", []byte(nil), int32(0))
	f.Add(uint8(6), "topic=TopicA\nclusterName=DefaultCluster", []byte(nil), int32(0))
	f.Add(uint8(7), "brokerAddr=127.0.0.1:10911", []byte(`{"counter":1,"timestamp":1700000000000}`), int32(0))
	f.Add(uint8(8), "brokerName=broker-a", []byte(nil), int32(0))

	cfg := Config{Addr: "127.0.0.1:0"}
	cfg.Namesrv.KVConfigPath = filepath.Join(f.TempDir(), "kvConfig.json")
	srv, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	handlers := map[int32]remoting.HandlerFunc{
		protocol.RegisterBroker:                srv.registerBroker,
		protocol.UnregisterBroker:              srv.unregisterBroker,
		protocol.GetRouteinfoByTopic:           srv.getRouteInfo,
		protocol.GetBrokerClusterInfo:          srv.getBrokerClusterInfo,
		protocol.GetAllTopicListFromNameserver: srv.getAllTopicList,
		protocol.GetTopicsByCluster:            srv.getTopicsByCluster,
		protocol.DeleteTopicInNamesrv:          srv.deleteTopic,
		protocol.QueryDataVersion:              srv.queryDataVersion,
		protocol.WipeWritePermOfBroker:         srv.wipeWritePerm,
		protocol.AddWritePermOfBroker:          srv.addWritePerm,
		protocol.GetKVConfig:                   srv.getKVConfig,
		protocol.GetKVListByNamespace:          srv.getKVListByNamespace,
	}
	f.Fuzz(func(t *testing.T, which uint8, ext string, body []byte, version int32) {
		code := fuzzCodes[int(which)%len(fuzzCodes)]
		req := remoting.NewRequest(code, parseFuzzExt(ext), body)
		req.Version = version
		resp := handlers[code](nil, req)
		if resp == nil {
			t.Fatalf("code %d: no response", code)
		}
		switch resp.Code {
		case protocol.Success, protocol.SystemError, protocol.TopicNotExist, protocol.QueryNotFound:
		default:
			t.Fatalf("code %d answered %d %q", code, resp.Code, resp.Remark)
		}
		if resp.Code == protocol.SystemError && resp.Remark == "" {
			t.Fatalf("code %d: SYSTEM_ERROR without a remark", code)
		}
		if code == protocol.GetRouteinfoByTopic && resp.Code == protocol.Success {
			if _, err := protocol.NormalizeFastJSON(resp.Body); err != nil {
				t.Fatalf("route body %q does not parse: %v", resp.Body, err)
			}
		}
		if err := srv.table.checkInvariants(); err != nil {
			t.Fatalf("after code %d: %v", code, err)
		}
	})
}
