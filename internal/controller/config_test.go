package controller_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestUpdateControllerConfig: enableElectUncleanMaster turned on at run
// time lets the next election pick a replica outside the SyncStateSet; it
// is persisted; start-only, black-listed and malformed updates are refused
// with Java's codes.
func TestUpdateControllerConfig(t *testing.T) {
	g := startGroup(t, 1, nil)
	g.leader()
	c := g.client()
	addr := g.nodes[0].ClientAddr()
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	update := func(body string) *remoting.Command {
		resp, err := rc.Invoke(ctx(t), addr, remoting.NewRequest(protocol.UpdateControllerConfig, nil, []byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for body, code := range map[string]int32{
		"configStorePath=/tmp/x\n":         protocol.NoPermission,
		"listenPort=1\n":                   protocol.NoPermission,
		"noSuchKey=1\n":                    protocol.NoPermission,
		"enableElectUncleanMaster=maybe\n": protocol.InvalidParameter,
	} {
		if r := update(body); r.Code != code {
			t.Errorf("update %q: %d %q, want %d", body, r.Code, r.Remark, code)
		}
	}

	b1 := join(t, c, "10.0.0.1:10911")
	b2 := join(t, c, "10.0.0.2:10911")
	g.beat(b1, 0, 0)
	g.beat(b2, 0, 0)
	if _, err := c.ElectMaster(ctx(t), cluster, bname, b1.id, false); err != nil {
		t.Fatal(err)
	}
	// b1 goes silent; b2 is alive but not in the SyncStateSet {1}.
	g.clock.Add(hbTimeout + time.Second)
	g.beat(b2, 1, 0)
	wait.For(t, 10*time.Second, "no master while unclean election is off", func() bool {
		mi, err := c.GetReplicaInfo(ctx(t), bname)
		return err == nil && !mi.HasMaster
	})
	if r := update("enableElectUncleanMaster=true\n"); r.Code != protocol.Success {
		t.Fatalf("update: %d %q", r.Code, r.Remark)
	}
	mi, err := c.ElectMaster(ctx(t), cluster, bname, b2.id, false)
	if err != nil || mi.MasterBrokerID != 2 {
		t.Fatalf("unclean election after the update: %+v, %v", mi, err)
	}
	resp, err := rc.Invoke(ctx(t), addr, remoting.NewRequest(protocol.GetControllerConfig, nil, nil))
	if err != nil || !strings.Contains(string(resp.Body), "enableElectUncleanMaster=true") {
		t.Fatalf("GET_CONTROLLER_CONFIG after the update: %v %q", err, resp.Body)
	}
	data, err := os.ReadFile(g.cc[0].ConfigStorePath)
	if err != nil || !strings.Contains(string(data), "enableElectUncleanMaster=true") {
		t.Fatalf("persisted: %q, %v", data, err)
	}
}
