package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/controller/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// electOne makes broker 1 of broker-a master through the client.
func electOne(t *testing.T, c *client.Client) *client.MasterInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.ApplyBrokerID(ctx, "c1", "broker-a", 1, "127.0.0.1:10911;1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterBroker(ctx, "c1", "broker-a", 1, "127.0.0.1:10911"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendHeartbeat(ctx, client.Heartbeat{ClusterName: "c1", BrokerName: "broker-a", BrokerAddr: "127.0.0.1:10911",
		BrokerID: 1, Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	mi, err := c.ElectMaster(ctx, "c1", "broker-a", 1, false)
	if err != nil || mi.MasterBrokerID != 1 {
		t.Fatalf("elect: %+v, %v", mi, err)
	}
	return mi
}

func replicaInfo(t *testing.T, c *client.Client) *client.MasterInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mi, err := c.GetReplicaInfo(ctx, "broker-a")
	if err != nil {
		t.Fatal(err)
	}
	return mi
}

// TestControllerProcess runs `rocketd controller -c controller.conf`: it
// leads its one-node group, serves the controller codes, reports its
// config, and keeps its state across a restart.
func TestControllerProcess(t *testing.T) {
	bin := buildRocketd(t)
	dir := t.TempDir()
	port, raftPort := proc.FreePort(t), proc.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conf := filepath.Join(dir, "controller.conf")
	text := fmt.Sprintf("controllerDLegerGroup=group1\ncontrollerDLegerPeers=n0-127.0.0.1:%d\ncontrollerDLegerSelfId=n0\n"+
		"controllerStorePath=%s\nlistenPort=%d\nscanNotActiveBrokerInterval=1000\nmappedFileSize=1024\n", raftPort, filepath.Join(dir, "store"), port)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "controller", "-c", conf)
	p.WaitLog(t, "rocketd: controller ready", 15*time.Second)
	c, err := client.New(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	electOne(t, c)
	if !strings.Contains(p.Log(), "mappedFileSize") {
		t.Errorf("no warning about the key without effect:\n%s", p.Log())
	}

	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	cfg := invoke(t, rc, addr, protocol.GetControllerConfig, nil)
	if cfg.Code != protocol.Success || !strings.Contains(string(cfg.Body), "controllerDLegerSelfId=n0") ||
		!strings.Contains(string(cfg.Body), "scanNotActiveBrokerInterval=1000") {
		t.Fatalf("GET_CONTROLLER_CONFIG: %d %q", cfg.Code, cfg.Body)
	}
	rc.CloseConn(addr)
	c.Close()
	stopGracefully(t, p)

	// The state survives a restart (raft log and snapshots on disk).
	p = proc.Start(t, bin, "controller", "-c", conf)
	p.WaitLog(t, "rocketd: controller ready", 15*time.Second)
	c2, err := client.New(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	// The client retries until the restarted node leads.
	mi := replicaInfo(t, c2)
	if mi.MasterEpoch != 1 || len(mi.SyncStateSet) != 1 || mi.SyncStateSet[0] != 1 {
		t.Fatalf("after restart: %+v", mi)
	}
	c2.Close()
	stopGracefully(t, p)
}

// TestNamesrvEmbedsController: enableControllerInNamesrv=true answers the
// controller codes on the NameServer's port, next to its own.
func TestNamesrvEmbedsController(t *testing.T) {
	bin := buildRocketd(t)
	dir := t.TempDir()
	port, raftPort := proc.FreePort(t), proc.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conf := filepath.Join(dir, "namesrv.conf")
	text := fmt.Sprintf("listenPort=%d\nkvConfigPath=%s\nenableControllerInNamesrv=true\ncontrollerDLegerPeers=n0-127.0.0.1:%d\n"+
		"controllerDLegerSelfId=n0\ncontrollerStorePath=%s\n", port, filepath.Join(dir, "kv.json"), raftPort, filepath.Join(dir, "store"))
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "namesrv", "-c", conf)
	p.WaitLog(t, "rocketd: controller ready in the NameServer", 15*time.Second)
	if strings.Contains(p.Log(), "unknown keys") {
		t.Errorf("controller keys reported unknown:\n%s", p.Log())
	}
	c, err := client.New(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	electOne(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	md, err := c.GetMetadata(ctx, addr)
	if err != nil || !md.IsLeader || md.ControllerLeaderAddress != addr {
		t.Fatalf("metadata: %+v, %v", md, err)
	}
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	if r := invoke(t, rc, addr, protocol.GetRouteinfoByTopic, map[string]string{"topic": "T"}); r.Code != protocol.TopicNotExist {
		t.Fatalf("route: %d %q", r.Code, r.Remark)
	}
	rc.CloseConn(addr)
	c.Close()
	stopGracefully(t, p)
}
