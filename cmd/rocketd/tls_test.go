package main

import (
	"context"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/certs"
	"github.com/rocketd/rocketd/internal/testutil/proc"
)

// TestServeTLSEnforcing runs serve with TLS enforced on every port and a
// password-protected key: TLS clients are served (the broker registered
// with the NameServer over TLS too), plaintext ones are refused, and the
// first log line names the loopback addresses. The key password appears
// in no log line.
func TestServeTLSEnforcing(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("openssl not found")
		}
		t.Skip("openssl not found")
	}
	bin := buildRocketd(t)
	dir := t.TempDir()
	ca := certs.NewCA(t, "serve CA")
	caPath := ca.WriteCA(t, dir, "ca")
	certPath, plainKey := ca.Issue(t, "server").Write(t, dir, "server")
	const password = "pw-Never-Logged-42"
	keyPath := filepath.Join(dir, "server-enc.key")
	if b, err := exec.Command("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", plainKey, "-out", keyPath,
		"-passout", "pass:"+password).CombinedOutput(); err != nil {
		t.Fatalf("openssl: %v\n%s", err, b)
	}
	nsPort, brokerPort := proc.FreePort(t), proc.FreeBrokerPort(t)
	conf := filepath.Join(dir, "broker.conf")
	text := "mapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\ngrpcServerPort=" + strconv.Itoa(proc.FreePort(t)) + "\nhaListenPort=" + strconv.Itoa(proc.FreePort(t)) +
		"\ntls.server.mode=enforcing\ntls.test.mode.enable=false\ntls.server.certPath=" + certPath +
		"\ntls.server.keyPath=" + keyPath + "\ntls.server.keyPassword=" + password +
		"\ntls.client.authServer=true\ntls.client.trustCertPath=" + caPath + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "serve", "--log-level", "debug", "--data", filepath.Join(dir, "data"),
		"--namesrv-port", strconv.Itoa(nsPort), "--listen-port", strconv.Itoa(brokerPort), "-c", conf)
	p.WaitLog(t, "broker ready", 15*time.Second)
	nsAddr := "127.0.0.1:" + strconv.Itoa(nsPort)
	brokerAddr := "127.0.0.1:" + strconv.Itoa(brokerPort)

	first, _, _ := strings.Cut(p.Log(), "\n")
	for _, want := range []string{"serve listening", "namesrv=" + nsAddr, "broker=" + brokerAddr, "tls=enforcing"} {
		if !strings.Contains(first, want) {
			t.Fatalf("first log line %q lacks %q", first, want)
		}
	}

	tc := remoting.NewClient(remoting.ClientConfig{TLS: &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}})
	defer tc.Close()
	// The broker registered over TLS: its route is known.
	waitRoute(t, tc, nsAddr, "TBW102")
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "TLSTopic", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
	if r := invoke(t, tc, brokerAddr, protocol.SendMessage, protocol.Ext(&h)); r.Code != protocol.Success {
		t.Fatalf("send over TLS: %d %s", r.Code, r.Remark)
	}

	pc := remoting.NewClient(remoting.ClientConfig{})
	defer pc.Close()
	for _, addr := range []string{nsAddr, brokerAddr} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := pc.Invoke(ctx, addr, remoting.NewRequest(protocol.GetBrokerClusterInfo, nil, nil))
		cancel()
		if err == nil {
			t.Fatalf("plaintext request to %s served in enforcing mode", addr)
		}
	}
	tc.CloseConn(nsAddr)
	tc.CloseConn(brokerAddr)
	stopGracefully(t, p)
	if strings.Contains(p.Log(), password) {
		t.Fatalf("the key password is in the log:\n%s", p.Log())
	}
}

// TestServeBindAddress: serve listens where it advertises unless told.
func TestServeBindAddress(t *testing.T) {
	for ip1, want := range map[string]string{"127.0.0.1": "127.0.0.1", "::1": "127.0.0.1", "10.1.2.3": "0.0.0.0", " 192.168.0.7 ": "0.0.0.0"} {
		if got := serveBindAddress(ip1); got != want {
			t.Errorf("brokerIP1 %q: bind %q, want %q", ip1, got, want)
		}
	}
	for bind, want := range map[string]string{"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "127.0.0.1", "10.1.2.3": "10.1.2.3"} {
		if got := dialHost(bind); got != want {
			t.Errorf("bind %q: dial %q, want %q", bind, got, want)
		}
	}
}

// TestBrokerListenAddr: --listen-addr (or bindAddress) binds both the
// remoting and the HA port.
func TestBrokerListenAddr(t *testing.T) {
	bin := buildRocketd(t)
	port, haPort := proc.FreeBrokerPort(t), proc.FreePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	text := "brokerIP1=127.0.0.1\nbindAddress=0.0.0.0\nlistenPort=" + strconv.Itoa(port) + "\ngrpcServerPort=" + strconv.Itoa(proc.FreePort(t)) + "\nhaListenPort=" + strconv.Itoa(haPort) +
		"\nstorePathRootDir=" + filepath.Join(dir, "store") + "\nmapedFileSizeCommitLog=16777216\ntls.server.mode=disabled\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := proc.Start(t, bin, "broker", "-c", conf, "--listen-addr", "127.0.0.1")
	p.WaitLog(t, "broker ready", 15*time.Second)
	for _, want := range []string{
		`msg="remoting: listening" addr=127.0.0.1:` + strconv.Itoa(port) + " tls=disabled",
		`msg="ha: master listening" addr=127.0.0.1:` + strconv.Itoa(haPort),
	} {
		if !strings.Contains(p.Log(), want) {
			t.Fatalf("no %q in\n%s", want, p.Log())
		}
	}
	stopGracefully(t, p)
}
