package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// TestServeMetricsFlags: serve --pprof turns the metrics listener on (at
// metricsPromExporterPort, loopback) with /debug/pprof/ on it.
func TestServeMetricsFlags(t *testing.T) {
	bin := buildRocketd(t)
	nsPort := proc.FreePort(t)
	brokerPort := proc.FreeBrokerPort(t, nsPort)
	metricsPort := proc.FreePort(t)
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("mapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\ngrpcServerPort="+strconv.Itoa(proc.FreePort(t))+"\nhaListenPort="+
		strconv.Itoa(proc.FreePort(t))+"\nmetricsPromExporterPort="+strconv.Itoa(metricsPort)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "serve", "--data", filepath.Join(t.TempDir(), "data"), "--namesrv-port", strconv.Itoa(nsPort),
		"--listen-port", strconv.Itoa(brokerPort), "-c", conf, "--pprof")
	p.WaitLog(t, "broker ready", 15*time.Second)
	base := "http://127.0.0.1:" + strconv.Itoa(metricsPort)
	hc := &http.Client{Timeout: 10 * time.Second}
	for path, want := range map[string]string{"/metrics": "rocketmq_storage_size", "/debug/pprof/": "goroutine"} {
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, p.Log())
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("%s: %s %.200s", path, resp.Status, body)
		}
	}
	stopGracefully(t, p)
}
