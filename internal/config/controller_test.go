package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestControllerConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "controller.conf")
	text := "controllerDLegerGroup=g\ncontrollerDLegerPeers=n0-127.0.0.1:9877;n1-127.0.0.1:9878\ncontrollerDLegerSelfId=n1\n" +
		"controllerStorePath=/data/ctl\nscanNotActiveBrokerInterval=2000\nenableElectUncleanMaster=true\nmappedFileSize=1024\nbogusKey=1\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, unknown, noEffect, err := LoadControllerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(unknown, ",") != "bogusKey" || strings.Join(noEffect, ",") != "mappedFileSize" {
		t.Fatalf("unknown %v, no effect %v", unknown, noEffect)
	}
	if c.ScanNotActiveBrokerInterval != 2*time.Second || c.ScanInactiveMasterInterval != DefaultControllerScanInterval ||
		!c.EnableElectUncleanMaster || !c.NotifyBrokerRoleChanged || c.ListenPort != DefaultControllerPort || c.ControllerType != "DLedger" {
		t.Fatalf("bound %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	peers, err := c.Peers()
	if err != nil || len(peers) != 2 || peers[1] != (ControllerPeer{ID: "n1", Addr: "127.0.0.1:9878"}) {
		t.Fatalf("peers %v, %v", peers, err)
	}
}

func TestControllerConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*ControllerConfig)
		want string
	}{
		{"no peers", func(c *ControllerConfig) { c.ControllerDLegerPeers = "" }, "controllerDLegerPeers is empty"},
		{"peer without id", func(c *ControllerConfig) { c.ControllerDLegerPeers = "127.0.0.1:1" }, "not id-host:port"},
		{"peer without port", func(c *ControllerConfig) { c.ControllerDLegerPeers = "n0-localhost" }, "missing port"},
		{"same id twice", func(c *ControllerConfig) { c.ControllerDLegerPeers = "n0-a:1;n0-b:2" }, "twice"},
		{"self not a peer", func(c *ControllerConfig) { c.ControllerDLegerSelfID = "n7" }, "not among"},
		{"jRaft", func(c *ControllerConfig) { c.ControllerType = "jRaft" }, "jRaft is not offered"},
		{"bad interval", func(c *ControllerConfig) { c.ScanInactiveMasterInterval = -1 }, "scanInactiveMasterInterval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewControllerConfig()
			c.ControllerDLegerPeers, c.ControllerDLegerSelfID = "n0-127.0.0.1:1", "n0"
			c.EnsureDefaults()
			tc.mod(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestControllerInNamesrvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv.conf")
	text := "listenPort=9876\nenableControllerInNamesrv=true\ncontrollerDLegerPeers=n0-127.0.0.1:9877\ncontrollerDLegerSelfId=n0\nbogusKey=1\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ns, nsUnknown, err := LoadNamesrvFile(path)
	if err != nil || !ns.EnableControllerInNamesrv {
		t.Fatalf("namesrv: %+v, %v", ns, err)
	}
	c, unknown, _, err := LoadControllerInNamesrv(path, nsUnknown)
	if err != nil || c.ControllerDLegerSelfID != "n0" || strings.Join(unknown, ",") != "bogusKey" {
		t.Fatalf("controller %+v, unknown %v, %v", c, unknown, err)
	}
}
