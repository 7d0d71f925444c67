package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buildRocketd compiles this command into a temporary directory.
func buildRocketd(t *testing.T) string {
	t.Helper()
	return proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
}

// stopGracefully sends SIGTERM and expects a clean exit.
func stopGracefully(t *testing.T, p *proc.Process) {
	t.Helper()
	if err := p.Stop(t); err != nil {
		t.Fatalf("rocketd exit: %v\n%s", err, p.Log())
	}
	if !strings.Contains(p.Log(), "stopped") {
		t.Fatalf("no shutdown log:\n%s", p.Log())
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
	port := proc.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	kv := filepath.Join(t.TempDir(), "kvConfig.json")
	p := proc.Start(t, bin, "namesrv", "--port", strconv.Itoa(port), "--kv-config", kv)
	p.WaitTCP(t, addr, 15*time.Second)

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
	stopGracefully(t, p)

	data, err := os.ReadFile(kv)
	if err != nil || string(data) != `{"configTable":{"ns":{"k":"v"}}}` {
		t.Fatalf("kv file %q (%v)", data, err)
	}
}

func TestServeProcess(t *testing.T) {
	bin := buildRocketd(t)
	nsPort := proc.FreePort(t)
	brokerPort := proc.FreeBrokerPort(t, nsPort)
	nsAddr := "127.0.0.1:" + strconv.Itoa(nsPort)
	brokerAddr := "127.0.0.1:" + strconv.Itoa(brokerPort)
	data := filepath.Join(t.TempDir(), "data")
	conf := filepath.Join(t.TempDir(), "broker.conf")
	// Small files: the test should not write a 1 GiB segment.
	// haListenPort: listenPort+1 may be taken on a busy test machine.
	if err := os.WriteFile(conf, []byte("mapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\ngrpcServerPort="+strconv.Itoa(proc.FreePort(t))+"\nhaListenPort="+strconv.Itoa(proc.FreePort(t))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--data", data, "--namesrv-port", strconv.Itoa(nsPort),
		"--listen-port", strconv.Itoa(brokerPort), "-c", conf}
	abort := filepath.Join(data, "store", "abort")

	c := remoting.NewClient(remoting.ClientConfig{})
	defer c.Close()
	const topic = "ServeTopic"

	// First run: send three messages through the broker, pull them back.
	p := proc.Start(t, bin, args...)
	p.WaitLog(t, "broker ready", 15*time.Second)
	if _, err := os.Stat(abort); err != nil {
		t.Fatalf("no abort file while running: %v", err)
	}
	for i := range 3 {
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: 0, BornTimestamp: time.Now().UnixMilli(),
			Properties: "TAGS\x01a"}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := c.Invoke(ctx, brokerAddr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte("body-"+strconv.Itoa(i))))
		cancel()
		if err != nil || resp.Code != protocol.Success {
			t.Fatalf("send %d: %v %+v\n%s", i, err, resp, p.Log())
		}
	}
	pullAll(t, c, brokerAddr, topic, 3)
	// The NameServer knows the auto-created topic.
	waitRoute(t, c, nsAddr, topic)
	c.CloseConn(brokerAddr)
	c.CloseConn(nsAddr)
	stopGracefully(t, p)
	if _, err := os.Stat(abort); !os.IsNotExist(err) {
		t.Fatalf("abort file left after a clean stop: %v", err)
	}

	// Second run: normal recovery, the messages are still there.
	p = proc.Start(t, bin, args...)
	p.WaitLog(t, "broker ready", 15*time.Second)
	if !strings.Contains(p.Log(), "cleanLastExit=true") {
		t.Fatalf("second start did not see a clean exit:\n%s", p.Log())
	}
	pullAll(t, c, brokerAddr, topic, 3)
	c.CloseConn(brokerAddr)
	stopGracefully(t, p)
	if _, err := os.Stat(filepath.Join(data, "namesrv", "kvConfig.json")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

func TestBrokerProcess(t *testing.T) {
	bin := buildRocketd(t)
	port := proc.FreeBrokerPort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	text := "brokerClusterName=C1\nbrokerName=b1\nbrokerIP1=127.0.0.1\nlistenPort=" + strconv.Itoa(port) +
		"\nstorePathRootDir=" + filepath.Join(dir, "store") + "\nmapedFileSizeCommitLog=16777216\nnoSuchKey=1\n" +
		"grpcServerPort=" + strconv.Itoa(proc.FreePort(t)) + "\nhaListenPort=" + strconv.Itoa(proc.FreePort(t)) + "\n" +
		// Java values that once stopped rocketd ("disk ratios must grow"),
		// one clamped as Java clamps it (95 -> 85).
		"diskMaxUsedSpaceRatio=88\ndiskSpaceCleanForciblyRatio=95\ncleanFileForciblyEnable=false\ncleanResourceInterval=5000\n" +
		// Keys rocketd accepts but has no use for: one warning names both.
		"transferMsgByHeap=false\nforceRegister=true\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "broker", "-c", conf)
	p.WaitLog(t, "broker ready", 15*time.Second)
	p.WaitLog(t, "store: cleanup", 5*time.Second)
	for _, want := range []string{"interval=5s", "diskMaxUsedSpaceRatio=88", "diskSpaceCleanForciblyRatio=85",
		"diskSpaceWarningLevelRatio=90", "cleanFileForciblyEnable=false"} {
		if !strings.Contains(p.Log(), want) {
			t.Fatalf("disk settings not in effect: no %q in\n%s", want, p.Log())
		}
	}
	if !strings.Contains(p.Log(), "unknown keys") || !strings.Contains(p.Log(), "noSuchKey") {
		t.Fatalf("unknown key not warned about:\n%s", p.Log())
	}
	if n := strings.Count(p.Log(), config.NoEffectWarning); n != 1 ||
		!strings.Contains(p.Log(), "keys=\"[forceRegister transferMsgByHeap]\"") {
		t.Fatalf("%d no-effect warnings, want one naming forceRegister and transferMsgByHeap:\n%s", n, p.Log())
	}
	c := remoting.NewClient(remoting.ClientConfig{})
	defer c.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
	if r := invoke(t, c, addr, protocol.SendMessage, protocol.Ext(&h)); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	c.CloseConn(addr)
	stopGracefully(t, p)
	if _, err := os.Stat(filepath.Join(dir, "store", "abort")); !os.IsNotExist(err) {
		t.Fatalf("abort file after a clean stop: %v", err)
	}
}

// pullAll pulls queue 0 of topic from offset 0 (retrying while dispatch
// has not caught up) and counts the records, checking their bodies.
func pullAll(t *testing.T, c *remoting.Client, addr, topic string, want int) {
	t.Helper()
	h := protocol.PullMessageRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 0, QueueOffset: 0,
		MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: "*"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := invoke(t, c, addr, protocol.PullMessage, protocol.Ext(&h))
		n := 0
		if resp.Code == protocol.Success {
			var sc message.Scanner
			sc.Reset(resp.Body)
			for sc.Next() {
				if w := "body-" + strconv.Itoa(n); string(sc.Record().Body) != w {
					t.Fatalf("record %d body %q, want %q", n, sc.Record().Body, w)
				}
				n++
			}
		}
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pull: %d %s, %d records, want %d", resp.Code, resp.Remark, n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRoute polls the NameServer until it routes topic.
func waitRoute(t *testing.T, c *remoting.Client, addr, topic string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := invoke(t, c, addr, protocol.GetRouteinfoByTopic, map[string]string{"topic": topic})
		if resp.Code == protocol.Success {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route for %s: %d %s", topic, resp.Code, resp.Remark)
		}
		time.Sleep(20 * time.Millisecond)
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
	// broker and serve: an invalid value is a start-up error naming the key.
	bconf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(bconf, []byte("listenPort=abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"broker", "-c", bconf}, {"serve", "--data", t.TempDir(), "-c", bconf}} {
		if _, err := run(append(args, "--log-level", "error")...); err == nil || !strings.Contains(err.Error(), "listenPort") {
			t.Fatalf("%v with an invalid listenPort: %v", args, err)
		}
	}
}
