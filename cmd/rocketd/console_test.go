package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestServeConsoleFlag: rocketd serve --console --console-addr serves the
// web console on that address, showing the embedded broker, and a clean
// stop closes it.
func TestServeConsoleFlag(t *testing.T) {
	bin := buildRocketd(t)
	nsPort := proc.FreePort(t)
	brokerPort := proc.FreeBrokerPort(t, nsPort)
	consoleAddr := "127.0.0.1:" + strconv.Itoa(proc.FreePort(t))
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("mapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\ngrpcServerPort="+strconv.Itoa(proc.FreePort(t))+"\nhaListenPort="+strconv.Itoa(proc.FreePort(t))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "serve", "--data", filepath.Join(t.TempDir(), "data"), "--namesrv-port", strconv.Itoa(nsPort),
		"--listen-port", strconv.Itoa(brokerPort), "-c", conf, "--console", "--console-addr", consoleAddr)
	p.WaitLog(t, "broker ready", 15*time.Second)
	if !strings.Contains(p.Log(), "console: listening") {
		t.Fatalf("no console log line:\n%s", p.Log())
	}
	var cl struct {
		Brokers []struct {
			Name string `json:"name"`
		} `json:"brokers"`
	}
	wait.For(t, 15*time.Second, "console lists the broker", func() bool {
		resp, err := http.Get("http://" + consoleAddr + "/api/cluster")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&cl) == nil && len(cl.Brokers) == 1
	})
	stopGracefully(t, p)
	if _, err := http.Get("http://" + consoleAddr + "/"); err == nil {
		t.Fatal("console still serving after rocketd stopped")
	}
}
