package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buildRocketd compiles this command into a temporary directory.
func buildRocketd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rocketd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startProcess runs bin with args and returns the command, its stderr and a
// channel that yields the exit error.
func startProcess(t *testing.T, bin string, args ...string) (*exec.Cmd, *syncBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return cmd, stderr, exited
}

// waitListening polls addr until it accepts a connection.
func waitListening(t *testing.T, addr string, exited <-chan error, stderr *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("rocketd exited early: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("rocketd not listening on %s\n%s", addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopGracefully sends SIGTERM and expects a clean exit.
func stopGracefully(t *testing.T, cmd *exec.Cmd, exited <-chan error, stderr *syncBuffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("rocketd exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("rocketd did not exit after SIGTERM\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped") {
		t.Fatalf("no shutdown log:\n%s", stderr.String())
	}
}

func invoke(t *testing.T, c *remoting.Client, addr string, code int32, ext map[string]string) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, addr, remoting.NewRequest(code, ext, nil))
	if err != nil {
		t.Fatalf("invoke %d: %v", code, err)
	}
	return resp
}

func TestNamesrvProcess(t *testing.T) {
	bin := buildRocketd(t)
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	kv := filepath.Join(t.TempDir(), "kvConfig.json")
	cmd, stderr, exited := startProcess(t, bin, "namesrv", "--port", strconv.Itoa(port), "--kv-config", kv)
	waitListening(t, addr, exited, stderr)

	c := remoting.NewClient(remoting.ClientConfig{})
	defer c.Close()
	route := invoke(t, c, addr, protocol.GetRouteinfoByTopic, map[string]string{"topic": "T"})
	if route.Code != protocol.TopicNotExist {
		t.Fatalf("route: %d %q", route.Code, route.Remark)
	}
	put := invoke(t, c, addr, protocol.PutKVConfig, map[string]string{"namespace": "ns", "key": "k", "value": "v"})
	if put.Code != protocol.Success {
		t.Fatalf("put kv: %d %q", put.Code, put.Remark)
	}
	c.CloseConn(addr)
	stopGracefully(t, cmd, exited, stderr)

	data, err := os.ReadFile(kv)
	if err != nil || string(data) != `{"configTable":{"ns":{"k":"v"}}}` {
		t.Fatalf("kv file %q (%v)", data, err)
	}
}

func TestServeProcess(t *testing.T) {
	bin := buildRocketd(t)
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	data := filepath.Join(t.TempDir(), "data")
	cmd, stderr, exited := startProcess(t, bin, "serve", "--data", data, "--namesrv-port", strconv.Itoa(port))
	waitListening(t, addr, exited, stderr)
	if !strings.Contains(stderr.String(), "broker is not built yet") {
		t.Fatalf("serve does not say the broker is missing:\n%s", stderr.String())
	}
	c := remoting.NewClient(remoting.ClientConfig{})
	defer c.Close()
	if r := invoke(t, c, addr, protocol.PutKVConfig, map[string]string{"namespace": "ns", "key": "k", "value": "v"}); r.Code != protocol.Success {
		t.Fatalf("put kv: %d %q", r.Code, r.Remark)
	}
	c.CloseConn(addr)
	stopGracefully(t, cmd, exited, stderr)
	if _, err := os.Stat(filepath.Join(data, "namesrv", "kvConfig.json")); err != nil {
		t.Fatalf("kv config not under the data dir: %v", err)
	}
}

func TestCommandLine(t *testing.T) {
	run := func(args ...string) (string, error) {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.Execute()
		return out.String(), err
	}
	if out, err := run("version"); err != nil || !strings.HasPrefix(out, "rocketd ") {
		t.Fatalf("version: %q %v", out, err)
	}
	if _, err := run("namesrv", "--log-level", "loud"); err == nil {
		t.Fatal("bad log level accepted")
	}
	if _, err := run("namesrv", "--listen-addr", "127.0.0.1:notaport"); err == nil {
		t.Fatal("bad listen address accepted")
	}
	if _, err := run("namesrv", "-c", filepath.Join(t.TempDir(), "missing.conf")); err == nil {
		t.Fatal("missing config file accepted")
	}
	if _, err := run("namesrv", "extra"); err == nil {
		t.Fatal("positional argument accepted")
	}
	// A config file is read (unknown keys only warned about) and validated
	// before anything listens.
	conf := filepath.Join(t.TempDir(), "namesrv.conf")
	if err := os.WriteFile(conf, []byte("rocketmqHome=/opt/rmq\nscanNotActiveBrokerInterval=-5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run("namesrv", "-c", conf, "--log-level", "error"); err == nil || !strings.Contains(err.Error(), "scanNotActiveBrokerInterval") {
		t.Fatalf("invalid config file: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
