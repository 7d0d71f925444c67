package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// TestServeRuntimeConfigSurvivesRestart: keys changed with
// UPDATE_BROKER_CONFIG land in the -c file (its other lines kept), keys
// changed with UPDATE_NAMESRV_CONFIG in <data>/namesrv/namesrv.properties,
// and the next start uses both.
func TestServeRuntimeConfigSurvivesRestart(t *testing.T) {
	bin := buildRocketd(t)
	nsPort := proc.FreePort(t)
	brokerPort := proc.FreeBrokerPort(t, nsPort)
	nsAddr := "127.0.0.1:" + strconv.Itoa(nsPort)
	brokerAddr := "127.0.0.1:" + strconv.Itoa(brokerPort)
	data := filepath.Join(t.TempDir(), "data")
	conf := filepath.Join(t.TempDir(), "broker.conf")
	original := "# small files for the test\nmapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\nhaListenPort=" + strconv.Itoa(proc.FreePort(t)) + "\n"
	if err := os.WriteFile(conf, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--data", data, "--namesrv-port", strconv.Itoa(nsPort),
		"--listen-port", strconv.Itoa(brokerPort), "-c", conf}
	c := remoting.NewClient(remoting.ClientConfig{})
	defer c.Close()
	call := func(addr string, code int32, ext map[string]string, body []byte) *remoting.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
		if err != nil {
			t.Fatalf("invoke %d: %v", code, err)
		}
		return resp
	}

	p := proc.Start(t, bin, args...)
	p.WaitLog(t, "broker ready", 15*time.Second)
	if r := call(brokerAddr, protocol.UpdateBrokerConfig, nil, []byte("maxMessageSize=1000")); r.Code != protocol.Success {
		t.Fatalf("update broker config: %d %s", r.Code, r.Remark)
	}
	if r := call(nsAddr, protocol.UpdateNamesrvConfig, nil, []byte("orderMessageEnable=true")); r.Code != protocol.Success {
		t.Fatalf("update namesrv config: %d %s", r.Code, r.Remark)
	}
	c.CloseConn(brokerAddr)
	c.CloseConn(nsAddr)
	stopGracefully(t, p)
	raw, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != original+"maxMessageSize=1000\n" {
		t.Fatalf("broker.conf after the update:\n%s", raw)
	}

	p = proc.Start(t, bin, args...)
	p.WaitLog(t, "broker ready", 15*time.Second)
	if body := string(call(brokerAddr, protocol.GetBrokerConfig, nil, nil).Body); !strings.Contains(body, "\nmaxMessageSize=1000\n") {
		t.Fatalf("maxMessageSize not kept over the restart:\n%s", body)
	}
	if body := string(call(nsAddr, protocol.GetNamesrvConfig, nil, nil).Body); !strings.Contains(body, "\norderMessageEnable=true\n") {
		t.Fatalf("orderMessageEnable not kept over the restart:\n%s", body)
	}
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "RuntimeConfigTopic", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli()}
	if r := call(brokerAddr, protocol.SendMessage, protocol.Ext(&h), make([]byte, 2000)); r.Code != protocol.MessageIllegal {
		t.Fatalf("2000-byte send with maxMessageSize=1000: %d %s", r.Code, r.Remark)
	}
	c.CloseConn(brokerAddr)
	c.CloseConn(nsAddr)
	stopGracefully(t, p)
}
