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

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestServeAuthNeedsInnerCredentials: serve with authenticationEnabled
// but no innerClientAuthenticationCredentials would refuse its own
// broker's registrations; it does not start.
func TestServeAuthNeedsInnerCredentials(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("authenticationEnabled=true\ninitAuthenticationUser={\"username\":\"a\",\"password\":\"b\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"serve", "--data", t.TempDir(), "-c", conf, "--log-level", "error"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "innerClientAuthenticationCredentials") {
		t.Fatalf("serve without inner credentials: %v", err)
	}
}

// TestServeAuthProcess: rocketd serve with authentication on: the broker
// registers with the embedded NameServer (signed, one user table), and
// both refuse unsigned requests with NO_PERMISSION; the gRPC service runs.
func TestServeAuthProcess(t *testing.T) {
	bin := buildRocketd(t)
	nsPort, brokerPort := proc.FreePort(t), proc.FreePort(t)
	nsAddr := "127.0.0.1:" + strconv.Itoa(nsPort)
	brokerAddr := "127.0.0.1:" + strconv.Itoa(brokerPort)
	data := filepath.Join(t.TempDir(), "data")
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("mapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\ngrpcServerPort="+strconv.Itoa(proc.FreePort(t))+"\nhaListenPort="+strconv.Itoa(proc.FreePort(t))+"\n"+
		"authenticationEnabled=true\n"+
		`initAuthenticationUser={"username":"admin","password":"admin-pw"}`+"\n"+
		`innerClientAuthenticationCredentials={"accessKey":"inner","secretKey":"inner-pw"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "serve", "--data", data, "--namesrv-port", strconv.Itoa(nsPort),
		"--listen-port", strconv.Itoa(brokerPort), "-c", conf)
	p.WaitLog(t, "broker ready", 15*time.Second)
	defer stopGracefully(t, p)
	// serve turns the gRPC service on with authentication (it
	// authenticates too: internal/broker TestGRPCAuthRaw).
	p.WaitLog(t, "grpc: MessagingService listening", 5*time.Second)

	anon := remoting.NewClient(remoting.ClientConfig{})
	defer anon.Close()
	signed := remoting.NewClient(remoting.ClientConfig{BeforeRequest: auth.Credentials{AccessKey: "admin", SecretKey: "admin-pw"}.Sign})
	defer signed.Close()
	call := func(c *remoting.Client, addr string, code int32) *remoting.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.Invoke(ctx, addr, remoting.NewRequest(code, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, addr := range []string{nsAddr, brokerAddr} {
		if r := call(anon, addr, protocol.GetBrokerClusterInfo); r.Code != protocol.NoPermission || r.Remark != "username cannot be null." {
			t.Fatalf("unsigned request to %s: %d %q", addr, r.Code, r.Remark)
		}
	}
	wait.For(t, 15*time.Second, "the broker's signed registration", func() bool {
		r := call(signed, nsAddr, protocol.GetBrokerClusterInfo)
		return r.Code == protocol.Success && strings.Contains(string(r.Body), brokerAddr)
	})
	if _, err := os.Stat(filepath.Join(data, "store", "config", auth.UsersFile)); err != nil {
		t.Fatalf("users file: %v", err)
	}
	signed.CloseConn(nsAddr)
	anon.CloseConn(nsAddr)
	anon.CloseConn(brokerAddr)
}
