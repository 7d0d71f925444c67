package namesrv

import (
	"slices"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func decodeTopicList(t *testing.T, resp *remoting.Command) protocol.TopicList {
	t.Helper()
	expectCode(t, resp, protocol.Success, "")
	var l protocol.TopicList
	if err := protocol.UnmarshalFastJSON(resp.Body, &l); err != nil {
		t.Fatalf("topic list %s: %v", resp.Body, err)
	}
	return l
}

func TestSystemTopicList(t *testing.T) {
	ts := startTestServer(t, nil)
	if l := decodeTopicList(t, ts.call(protocol.GetSystemTopicListFromNS, nil, nil)); len(l.TopicList) != 0 || l.BrokerAddr != "" {
		t.Fatalf("empty NameServer: %+v", l)
	}
	ts.register(brokerA)
	slave := brokerA
	slave.id, slave.addr = 1, "127.0.0.1:20911"
	ts.register(slave)
	ts.register(brokerSpec{cluster: "Other", name: "broker-b", addr: "127.0.0.1:30911", dv: 1})
	l := decodeTopicList(t, ts.call(protocol.GetSystemTopicListFromNS, nil, nil))
	if want := []string{"DefaultCluster", "Other", "broker-a", "broker-b"}; !slices.Equal(l.TopicList, want) {
		t.Errorf("system topics %v, want %v", l.TopicList, want)
	}
	if l.BrokerAddr != brokerA.addr {
		t.Errorf("brokerAddr %q, want broker-a's master %q", l.BrokerAddr, brokerA.addr)
	}
}

func TestUnitTopicLists(t *testing.T) {
	ts := startTestServer(t, nil)
	unit, unitSub, both := topic("Unit", 1, 1), topic("UnitSub", 1, 1), topic("Both", 1, 1)
	unit.TopicSysFlag, unitSub.TopicSysFlag, both.TopicSysFlag = 1, 2, 3
	b := brokerA
	b.topics = append(slices.Clone(b.topics), unit, unitSub, both)
	ts.register(b)
	for _, c := range []struct {
		code int32
		want []string
	}{
		{protocol.GetUnitTopicList, []string{"Both", "Unit"}},
		{protocol.GetHasUnitSubTopicList, []string{"Both", "UnitSub"}},
		{protocol.GetHasUnitSubUnunitTopicList, []string{"UnitSub"}},
	} {
		if l := decodeTopicList(t, ts.call(c.code, nil, nil)); !slices.Equal(l.TopicList, c.want) {
			t.Errorf("code %d: %v, want %v", c.code, l.TopicList, c.want)
		}
	}
}

func TestRegisterTopicInNamesrv(t *testing.T) {
	ts := startTestServer(t, nil)
	ts.register(brokerA)
	body := func(brokers ...string) []byte {
		d := protocol.TopicRouteData{BrokerDatas: []protocol.BrokerData{}, FilterServerTable: map[string][]string{}}
		for _, b := range brokers {
			d.QueueDatas = append(d.QueueDatas, protocol.QueueData{BrokerName: b, ReadQueueNums: 3, WriteQueueNums: 2, Perm: 6})
		}
		return d.MarshalFastJSON(protocol.JSONStandard)
	}
	ext := protocol.Ext(&protocol.RegisterTopicRequestHeader{Topic: "Registered"})
	// An unknown broker group: answered SUCCESS, nothing recorded (Java).
	expectCode(t, ts.call(protocol.RegisterTopicInNamesrv, ext, body("broker-a", "nobody")), protocol.Success, "")
	expectCode(t, ts.route("Registered", protocol.VersionV4_9_8), protocol.TopicNotExist, "")
	// A bad body and a missing topic are refused.
	expectCode(t, ts.call(protocol.RegisterTopicInNamesrv, ext, []byte("{")), protocol.SystemError, "TopicRouteData")
	expectCode(t, ts.call(protocol.RegisterTopicInNamesrv, nil, body("broker-a")), protocol.SystemError, "topic")

	expectCode(t, ts.call(protocol.RegisterTopicInNamesrv, ext, body("broker-a")), protocol.Success, "")
	r := decodeRoute(t, ts.route("Registered", protocol.VersionV4_9_8).Body)
	if len(r.QueueDatas) != 1 || r.QueueDatas[0].ReadQueueNums != 3 || r.QueueDatas[0].WriteQueueNums != 2 || len(r.BrokerDatas) != 1 {
		t.Fatalf("route after REGISTER_TOPIC_IN_NAMESRV: %+v", r)
	}
}

func TestGetNamesrvConfig(t *testing.T) {
	ts := startTestServer(t, func(c *Config) { c.Namesrv.OrderMessageEnable = true })
	resp := ts.call(protocol.GetNamesrvConfig, nil, nil)
	expectCode(t, resp, protocol.Success, "")
	text := string(resp.Body)
	for _, want := range []string{"orderMessageEnable=true\n", "brokerChannelExpiredTime=120000\n", "kvConfigPath="} {
		if !strings.Contains(text, want) {
			t.Errorf("config lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "tls.") || strings.Contains(text, "authentication") {
		t.Errorf("config shows tls or authentication settings:\n%s", text)
	}
}
