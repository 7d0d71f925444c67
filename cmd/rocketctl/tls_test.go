package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/namesrv"
	"github.com/rocketd/rocketd/internal/testutil/certs"
)

// TestCLIOverMutualTLS runs a NameServer and a broker that enforce TLS and
// require client certificates signed by their CA (the broker presents its
// own to the NameServer): rocketctl works with --tls-ca, --tls-cert and
// --tls-key, and is refused without TLS or without a certificate.
func TestCLIOverMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := certs.NewCA(t, "ctl CA")
	caPath := ca.WriteCA(t, dir, "ca")
	srvCert, srvKey := ca.Issue(t, "server").Write(t, dir, "server")
	cliCert, cliKey := ca.Issue(t, "client").Write(t, dir, "client")
	tlsCfg := config.TLSConfig{ServerMode: "enforcing", TestModeEnable: "false",
		ServerCertPath: srvCert, ServerKeyPath: srvKey, ServerNeedClientAuth: "require", ServerAuthClient: true,
		ServerTrustCertPath: caPath, ClientCertPath: cliCert, ClientKeyPath: cliKey, ClientAuthServer: true,
		ClientTrustCertPath: caPath}

	ncfg := namesrv.Config{Addr: "127.0.0.1:0"}
	ncfg.Namesrv.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	ncfg.Namesrv.TLS = tlsCfg
	ns, err := namesrv.New(ncfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })

	bc := config.NewBrokerConfig()
	bc.BrokerIP1 = "127.0.0.1"
	bc.NamesrvAddr = ns.Addr()
	bc.StorePathRootDir = filepath.Join(dir, "store")
	bc.MappedFileSizeCommitLog = 32 << 20
	bc.MappedFileSizeConsumeQueue = 30000 * 20
	bc.TLS = tlsCfg
	b, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			t.Errorf("broker shutdown: %v", err)
		}
	})

	tlsArgs := []string{"-n", ns.Addr(), "--timeout", "3s", "--tls-ca", caPath, "--tls-cert", cliCert, "--tls-key", cliKey}
	waitFor(t, 10*time.Second, "the broker to register over TLS", func() (bool, string) {
		out, err := rocketctl(t, append(tlsArgs, "cluster", "list")...)
		return err == nil && strings.Contains(out, b.Addr()), out
	})
	mustRun(t, append(tlsArgs, "topic", "create", "-t", "TLSCtl", "-r", "1", "-w", "1")...)
	if out := mustRun(t, append(tlsArgs, "send", "-t", "TLSCtl", "-b", "over tls")...); !strings.Contains(out, "SEND_OK") {
		t.Fatalf("send over TLS: %s", out)
	}

	for _, args := range [][]string{
		{"-n", ns.Addr(), "--timeout", "3s", "cluster", "list"},                     // plaintext
		{"-n", ns.Addr(), "--timeout", "3s", "--tls-ca", caPath, "cluster", "list"}, // no client certificate
	} {
		if out, err := rocketctl(t, args...); err == nil {
			t.Fatalf("%v was served:\n%s", args, out)
		}
	}
	// A client certificate from another CA is refused too.
	rogueCert, rogueKey := certs.NewCA(t, "rogue").Issue(t, "rogue").Write(t, dir, "rogue")
	if out, err := rocketctl(t, "-n", ns.Addr(), "--timeout", "3s", "--tls-ca", caPath, "--tls-cert", rogueCert,
		"--tls-key", rogueKey, "cluster", "list"); err == nil {
		t.Fatalf("an untrusted client certificate was served:\n%s", out)
	}
}

func TestTLSFlagsRefuseHalfAPair(t *testing.T) {
	if _, err := rocketctl(t, "--tls-cert", filepath.Join(t.TempDir(), "c.pem"), "cluster", "list"); err == nil ||
		!strings.Contains(err.Error(), "--tls-key") {
		t.Fatalf("--tls-cert alone: %v", err)
	}
	pw := filepath.Join(t.TempDir(), "missing")
	if _, err := rocketctl(t, "--tls-key-password-file", pw, "cluster", "list"); err == nil || !strings.Contains(err.Error(), pw) {
		t.Fatalf("missing password file: %v", err)
	}
}
