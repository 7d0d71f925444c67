package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConfigCommands: broker and namesrv config get/set against a real
// NameServer and broker, in text and JSON, and the refusals.
func TestConfigCommands(t *testing.T) {
	ns := startRocketd(t)
	out := mustRun(t, "-n", ns, "broker", "config", "get", "-c", "DefaultCluster", "maxMessageSize", "brokerName")
	if out != "brokerName=broker-a\nmaxMessageSize=4194304\n" {
		t.Fatalf("broker config get:\n%s", out)
	}
	out = mustRun(t, "-n", ns, "broker", "config", "set", "-c", "DefaultCluster", "maxMessageSize=65536", "rejectTransactionMessage=true")
	if !strings.Contains(out, "updated 127.0.0.1:") {
		t.Fatalf("broker config set:\n%s", out)
	}
	out = mustRun(t, "-n", ns, "--json", "broker", "config", "get", "-c", "DefaultCluster", "maxMessageSize", "rejectTransactionMessage")
	var byAddr map[string]map[string]string
	if err := json.Unmarshal([]byte(out), &byAddr); err != nil || len(byAddr) != 1 {
		t.Fatalf("json get: %v\n%s", err, out)
	}
	for addr, props := range byAddr {
		if props["maxMessageSize"] != "65536" || props["rejectTransactionMessage"] != "true" {
			t.Fatalf("after set: %v", props)
		}
		// The same through -b.
		out = mustRun(t, "-n", ns, "broker", "config", "get", "-b", addr, "maxMessageSize")
		if out != "maxMessageSize=65536\n" {
			t.Fatalf("get -b: %q", out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"broker", "config", "set", "-c", "DefaultCluster", "listenPort=1"}, "response code 16: listenPort: read only at start"},
		{[]string{"broker", "config", "set", "-c", "DefaultCluster", "brokerConfigPath=/x"}, "response code 16: Can not update config in black list"},
		{[]string{"broker", "config", "set", "-c", "DefaultCluster", "maxMessageSize=-3"}, "response code 29"},
		{[]string{"broker", "config", "set", "-c", "DefaultCluster", "novalue"}, `"novalue": want key=value`},
		{[]string{"broker", "config", "get"}, "give -b broker or -c cluster"},
		{[]string{"broker", "config", "get", "-c", "NoSuchCluster"}, `cluster "NoSuchCluster" is not known`},
		{[]string{"broker", "config", "get", "-c", "DefaultCluster", "noSuchKey"}, `no key "noSuchKey"`},
		{[]string{"namesrv", "config", "set", "kvConfigPath=/x"}, "black list"},
	} {
		out, err := rocketctl(t, append([]string{"-n", ns}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v (want %q)\n%s", c.args, err, c.want, out)
		}
	}

	out = mustRun(t, "-n", ns, "namesrv", "config", "set", "orderMessageEnable=true")
	if out != "updated "+ns+": orderMessageEnable=true\n" {
		t.Fatalf("namesrv config set: %q", out)
	}
	out = mustRun(t, "-n", ns, "namesrv", "config", "get", "orderMessageEnable")
	if out != "orderMessageEnable=true\n" {
		t.Fatalf("namesrv config get: %q", out)
	}
}
