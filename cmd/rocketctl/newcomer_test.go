package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// TestNewcomer is what a newcomer does after cloning: build both binaries,
// run `rocketd serve` (here on free ports and a temp data dir), send one
// message with rocketctl and see it come back with `rocketctl consume`, then
// stop rocketd with SIGTERM and expect a clean exit.
func TestNewcomer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries and runs processes")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGTERM")
	}
	rocketdBin := proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
	ctlBin := proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketctl")
	// The broker also listens on brokerPort+1 (HA): that port must be free
	// too, and not the NameServer's.
	nsPort := proc.FreePort(t)
	brokerPort := proc.FreeBrokerPort(t, nsPort)
	serve := proc.Start(t, rocketdBin, "serve", "--data", filepath.Join(t.TempDir(), "data"),
		"--namesrv-port", fmt.Sprint(nsPort), "--listen-port", fmt.Sprint(brokerPort), "--grpc-port", fmt.Sprint(proc.FreePort(t)))

	ns := fmt.Sprintf("127.0.0.1:%d", nsPort)
	ctl := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, ctlBin, args...)
		cmd.Env = append(os.Environ(), "NAMESRV_ADDR="+ns)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Up means the broker has registered with the NameServer.
	waitFor(t, 20*time.Second, "rocketd to register its broker", func() (bool, string) {
		out, err := ctl("--timeout", "1s", "cluster", "list")
		return err == nil && strings.Contains(out, fmt.Sprintf(":%d", brokerPort)), out + serve.Log()
	})

	body := "hello from a newcomer " + time.Now().Format(time.RFC3339Nano)
	sendStart := time.Now()
	out, err := ctl("send", "-t", "NewcomerTopic", "-b", body, "--tags", "hello")
	if err != nil {
		t.Fatalf("rocketctl send: %v\n%s\nrocketd log:\n%s", err, out, serve.Log())
	}
	t.Logf("rocketctl send (process, %v): %s", time.Since(sendStart).Round(time.Millisecond), strings.TrimSpace(out))
	if !strings.Contains(out, "SEND_OK") {
		t.Fatalf("send output: %s", out)
	}
	// The auto-created topic reaches the NameServer with the broker's next
	// registration: poll until consume finds it.
	waitFor(t, 20*time.Second, "rocketctl consume to show the message", func() (bool, string) {
		start := time.Now()
		out, err := ctl("consume", "-t", "NewcomerTopic")
		if err == nil && strings.Contains(out, "body: "+body) {
			t.Logf("rocketctl consume (process, %v): %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
			return true, ""
		}
		return false, fmt.Sprintf("%v\n%s", err, out)
	})

	if err := serve.Stop(t); err != nil {
		t.Fatalf("rocketd exit after SIGTERM: %v\n%s", err, serve.Log())
	}
}

// waitFor polls cond until it holds or the deadline passes; last describes
// the final failed attempt.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (ok bool, last string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last attempt:\n%s", d, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
