package main

import (
	"bytes"
	"context"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/namesrv"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startNamesrv runs a NameServer with one registered broker group (master
// and slave) serving TopicA (6 read / 8 write queues) and TopicB.
func startNamesrv(t *testing.T) string {
	t.Helper()
	nsAddr := startEmptyNamesrv(t)
	broker := remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() { broker.Close() })
	for id, addr := range []string{"127.0.0.1:10911", "127.0.0.1:10921"} {
		body := protocol.RegisterBrokerBody{FilterServerList: []string{}}
		a, b := protocol.NewTopicConfig("TopicA"), protocol.NewTopicConfig("TopicB")
		a.ReadQueueNums, a.WriteQueueNums = 6, 8
		body.TopicConfigSerializeWrapper.TopicConfigTable = map[string]protocol.TopicConfig{"TopicA": a, "TopicB": b}
		body.TopicConfigSerializeWrapper.DataVersion = protocol.DataVersion{Timestamp: 1, Counter: 1}
		raw := body.MarshalFastJSON()
		h := protocol.RegisterBrokerRequestHeader{BrokerName: "broker-a", BrokerAddr: addr, ClusterName: "DefaultCluster",
			BrokerID: int64(id), BodyCrc32: int32(crc32.ChecksumIEEE(raw) & 0x7FFFFFFF)}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := broker.Invoke(ctx, nsAddr, remoting.NewRequest(protocol.RegisterBroker, protocol.Ext(&h), raw))
		cancel()
		if err != nil || resp.Code != protocol.Success {
			t.Fatalf("register: %v %+v", err, resp)
		}
	}
	return nsAddr
}

// startEmptyNamesrv runs a NameServer with no broker.
func startEmptyNamesrv(t *testing.T) string {
	t.Helper()
	cfg := namesrv.Config{Addr: "127.0.0.1:0"}
	dir := t.TempDir()
	cfg.Namesrv.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	cfg.Namesrv.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	srv, err := namesrv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

func rocketctl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root, closeClient := newRootCommand()
	defer closeClient()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := rocketctl(t, args...)
	if err != nil {
		t.Fatalf("rocketctl %v: %v\n%s", args, err, out)
	}
	return out
}

func TestRoute(t *testing.T) {
	ns := startNamesrv(t)
	out := mustRun(t, "--namesrv", ns, "route", "--topic", "TopicA")
	for _, want := range []string{"topic TopicA", "broker-a  6     8      RW-   0",
		"broker-a  DefaultCluster  0   127.0.0.1:10911", "broker-a  DefaultCluster  1   127.0.0.1:10921"} {
		if !strings.Contains(out, want) {
			t.Errorf("route output lacks %q:\n%s", want, out)
		}
	}
	js := mustRun(t, "--namesrv", ns, "--json", "route", "--topic", "TopicA")
	if !strings.Contains(js, `"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"}`) {
		t.Errorf("route --json: %s", js)
	}
	_, err := rocketctl(t, "--namesrv", ns, "route", "--topic", "nope")
	if err == nil || !strings.Contains(err.Error(), "response code 17") {
		t.Errorf("missing topic: %v", err)
	}
	if _, err := rocketctl(t, "--namesrv", ns, "route"); err == nil {
		t.Error("route without --topic accepted")
	}
}

func TestClusterAndTopics(t *testing.T) {
	ns := startNamesrv(t)
	out := mustRun(t, "--namesrv", ns, "cluster")
	if !strings.Contains(out, "DefaultCluster  broker-a  0   127.0.0.1:10911") ||
		!strings.Contains(out, "DefaultCluster  broker-a  1   127.0.0.1:10921") {
		t.Errorf("cluster output:\n%s", out)
	}
	js := mustRun(t, "--namesrv", ns, "--json", "cluster")
	if !strings.Contains(js, `"clusterAddrTable":{"DefaultCluster":["broker-a"]}`) || !strings.Contains(js, `{"0":"127.0.0.1:10911"`) {
		t.Errorf("cluster --json (must be standard JSON): %s", js)
	}
	if out := mustRun(t, "--namesrv", ns, "topics"); out != "TopicA\nTopicB\n" {
		t.Errorf("topics: %q", out)
	}
	if out := mustRun(t, "--namesrv", ns, "topics", "--cluster", "nope"); out != "" {
		t.Errorf("topics of unknown cluster: %q", out)
	}
	if out := mustRun(t, "--namesrv", ns, "--json", "topics", "--cluster", "DefaultCluster"); out != `{"topicList":["TopicA","TopicB"]}`+"\n" {
		t.Errorf("topics --json: %q", out)
	}
}

func TestKV(t *testing.T) {
	ns := startNamesrv(t)
	mustRun(t, "--namesrv", ns, "kv", "put", "--namespace", "ORDER_TOPIC_CONFIG", "--key", "TopicA", "--value", "broker-a:8")
	mustRun(t, "--namesrv", ns, "kv", "put", "--namespace", "ORDER_TOPIC_CONFIG", "--key", "TopicB", "--value", "")
	if out := mustRun(t, "--namesrv", ns, "kv", "get", "--namespace", "ORDER_TOPIC_CONFIG", "--key", "TopicA"); out != "broker-a:8\n" {
		t.Errorf("kv get: %q", out)
	}
	if out := mustRun(t, "--namesrv", ns, "--json", "kv", "get", "--namespace", "ORDER_TOPIC_CONFIG", "--key", "TopicA"); out != `{"value":"broker-a:8"}`+"\n" {
		t.Errorf("kv get --json: %q", out)
	}
	if out := mustRun(t, "--namesrv", ns, "kv", "list", "--namespace", "ORDER_TOPIC_CONFIG"); out != "TopicA=broker-a:8\nTopicB=\n" {
		t.Errorf("kv list: %q", out)
	}
	mustRun(t, "--namesrv", ns, "kv", "delete", "--namespace", "ORDER_TOPIC_CONFIG", "--key", "TopicA")
	_, err := rocketctl(t, "--namesrv", ns, "kv", "get", "--namespace", "ORDER_TOPIC_CONFIG", "--key", "TopicA")
	if err == nil || !strings.Contains(err.Error(), "response code "+strconv.Itoa(int(protocol.QueryNotFound))) {
		t.Errorf("get of deleted key: %v", err)
	}
	if _, err := rocketctl(t, "--namesrv", ns, "kv", "put", "--namespace", "x", "--key", "k"); err == nil {
		t.Error("put without --value accepted")
	}
}

func TestUnreachableNamesrv(t *testing.T) {
	// Port 1 (tcpmux) is not served on test machines: the dial is refused.
	_, err := rocketctl(t, "--namesrv", "127.0.0.1:1", "--timeout", "500ms", "topics")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable name server: %v", err)
	}
}

func TestSeveralNamesrvAddresses(t *testing.T) {
	ns := startNamesrv(t)
	// The first address refuses the connection; the second answers.
	if out := mustRun(t, "--namesrv", "127.0.0.1:1;"+ns, "--timeout", "2s", "topics"); out != "TopicA\nTopicB\n" {
		t.Fatalf("topics via the second address: %q", out)
	}
	if _, err := rocketctl(t, "--namesrv", " ; ", "topics"); err == nil || !strings.Contains(err.Error(), "no address") {
		t.Fatalf("empty address list: %v", err)
	}
}

func TestPermString(t *testing.T) {
	for perm, want := range map[int32]string{0: "---", 2: "-W-", 4: "R--", 6: "RW-", 7: "RWX", 1: "--X"} {
		if got := permString(perm); got != want {
			t.Errorf("permString(%d) = %q, want %q", perm, got, want)
		}
	}
}
