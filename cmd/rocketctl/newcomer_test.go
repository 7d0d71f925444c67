package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	bin := t.TempDir()
	root := filepath.Join("..", "..")
	for _, name := range []string{"rocketd", "rocketctl"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, name), "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}
	nsPort, brokerPort := freePort(t), freePort(t)
	// The broker also listens on brokerPort+1 (HA): that port must be free
	// too, and not the NameServer's.
	haFree := func(p int) bool {
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err == nil {
			ln.Close()
		}
		return err == nil
	}
	for brokerPort == nsPort || brokerPort+1 == nsPort || !haFree(brokerPort+1) {
		brokerPort = freePort(t)
	}
	var serveLog lockedBuffer
	serve := exec.Command(filepath.Join(bin, "rocketd"), "serve", "--data", filepath.Join(t.TempDir(), "data"),
		"--namesrv-port", fmt.Sprint(nsPort), "--listen-port", fmt.Sprint(brokerPort))
	serve.Stdout, serve.Stderr = &serveLog, &serveLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = serve.Process.Kill()
			<-exited
		}
	})

	ns := fmt.Sprintf("127.0.0.1:%d", nsPort)
	ctl := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "rocketctl"), args...)
		cmd.Env = append(os.Environ(), "NAMESRV_ADDR="+ns)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Up means the broker has registered with the NameServer.
	waitFor(t, 20*time.Second, "rocketd to register its broker", func() (bool, string) {
		out, err := ctl("--timeout", "1s", "cluster", "list")
		return err == nil && strings.Contains(out, fmt.Sprintf(":%d", brokerPort)), out + serveLog.String()
	})

	body := "hello from a newcomer " + time.Now().Format(time.RFC3339Nano)
	sendStart := time.Now()
	out, err := ctl("send", "-t", "NewcomerTopic", "-b", body, "--tags", "hello")
	if err != nil {
		t.Fatalf("rocketctl send: %v\n%s\nrocketd log:\n%s", err, out, serveLog.String())
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

	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("rocketd exit after SIGTERM: %v\n%s", err, serveLog.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("rocketd still running 20 s after SIGTERM\n%s", serveLog.String())
	}
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
