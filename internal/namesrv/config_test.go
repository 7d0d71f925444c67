package namesrv

import (
	"os"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

// TestUpdateNamesrvConfig: orderMessageEnable turned on at run time takes
// effect on the next route answer, GET_NAMESRV_CONFIG shows it, the file
// keeps it (and a new server reads it back); refused keys change nothing.
func TestUpdateNamesrvConfig(t *testing.T) {
	var path string
	ts := startTestServer(t, func(c *Config) { path = c.Namesrv.ConfigStorePath })
	ts.register(brokerA)
	ts.call(protocol.PutKVConfig, protocol.Ext(&protocol.PutKVConfigRequestHeader{
		Namespace: OrderTopicConfigNamespace, Key: "TopicA", Value: "broker-a:8"}), nil)
	if r := decodeRoute(t, ts.route("TopicA", 317).Body); r.OrderTopicConf != "" {
		t.Fatalf("orderTopicConf %q before the update", r.OrderTopicConf)
	}
	expectCode(t, ts.call(protocol.UpdateNamesrvConfig, nil, []byte("orderMessageEnable=true\nbrokerChannelExpiredTime=60000\n")), protocol.Success, "")
	if r := decodeRoute(t, ts.route("TopicA", 317).Body); r.OrderTopicConf != "broker-a:8" {
		t.Fatalf("orderTopicConf %q after the update", r.OrderTopicConf)
	}
	text := string(ts.call(protocol.GetNamesrvConfig, nil, nil).Body)
	for _, want := range []string{"\norderMessageEnable=true\n", "\nbrokerChannelExpiredTime=60000\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("GET_NAMESRV_CONFIG lacks %q", want)
		}
	}
	for _, c := range []struct {
		body   string
		code   int32
		remark string
	}{
		{"kvConfigPath=/tmp/x", protocol.NoPermission, "Can not update config in black list. key: kvConfigPath"},
		{"configStorePath=/tmp/x", protocol.NoPermission, "black list"},
		{"listenPort=1", protocol.NoPermission, "listenPort: read only at start"},
		{"bogus=1", protocol.NoPermission, "bogus: unknown configuration key"},
		{"brokerChannelExpiredTime=-1", protocol.InvalidParameter, "brokerChannelExpiredTime"},
		{"scanNotActiveBrokerInterval=soon", protocol.InvalidParameter, "scanNotActiveBrokerInterval"},
	} {
		expectCode(t, ts.call(protocol.UpdateNamesrvConfig, nil, []byte(c.body)), c.code, c.remark)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != "brokerChannelExpiredTime=60000\norderMessageEnable=true\n" {
		t.Fatalf("persisted %q", raw)
	}
	back, _, err := config.LoadNamesrvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !back.OrderMessageEnable || back.BrokerChannelExpiredTime.Milliseconds() != 60000 {
		t.Fatalf("read back %+v", back)
	}
}
