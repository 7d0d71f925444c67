package remoting

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/certs"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// tlsFixture is a CA, a server certificate it signed and a client
// certificate it signed.
type tlsFixture struct {
	ca             *certs.CA
	server, client certs.Pair
}

func newTLSFixture(t *testing.T) tlsFixture {
	ca := certs.NewCA(t, "rocketd test CA")
	return tlsFixture{ca: ca, server: ca.Issue(t, "server"), client: ca.Issue(t, "client")}
}

func (f tlsFixture) serverConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{f.server.TLS}, MinVersion: tls.VersionTLS12}
}

// clientConfig trusts the fixture's CA and verifies the server's name.
func (f tlsFixture) clientConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: f.ca.Pool, Certificates: certs, MinVersion: tls.VersionTLS12}
}

func startTLSServer(t *testing.T, l TLSListener) string {
	t.Helper()
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLS: l})
	s.Handle(protocol.SendMessage, s.NewFamily("echo", 2, 16), echoHandler)
	return startServer(t, s)
}

// echoCall invokes one echo request on a fresh client.
func echoCall(t *testing.T, addr string, cfg *tls.Config) error {
	t.Helper()
	c := newClient(t, ClientConfig{TLS: cfg, DialTimeout: 5 * time.Second})
	resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), addr, NewRequest(protocol.SendMessage, map[string]string{"k": "v"}, []byte("body")))
	if err != nil {
		return err
	}
	if resp.Code != protocol.Success || string(resp.Body) != "body" {
		t.Fatalf("echo answered %d %q %q", resp.Code, resp.Remark, resp.Body)
	}
	return nil
}

func TestTLSEnforcingRefusesPlaintext(t *testing.T) {
	f := newTLSFixture(t)
	addr := startTLSServer(t, TLSListener{Mode: TLSEnforcing, Config: f.serverConfig()})
	if err := echoCall(t, addr, f.clientConfig()); err != nil {
		t.Fatalf("TLS call: %v", err)
	}
	if err := echoCall(t, addr, nil); err == nil {
		t.Fatal("a plaintext call was served in enforcing mode")
	}
}

func TestTLSPermissiveServesBoth(t *testing.T) {
	f := newTLSFixture(t)
	addr := startTLSServer(t, TLSListener{Mode: TLSPermissive, Config: f.serverConfig()})
	for range 2 { // both kinds, in both orders
		if err := echoCall(t, addr, f.clientConfig()); err != nil {
			t.Fatalf("TLS call: %v", err)
		}
		if err := echoCall(t, addr, nil); err != nil {
			t.Fatalf("plaintext call: %v", err)
		}
	}
}

func TestTLSDisabledRefusesHandshake(t *testing.T) {
	f := newTLSFixture(t)
	addr := startTLSServer(t, TLSListener{})
	if err := echoCall(t, addr, nil); err != nil {
		t.Fatalf("plaintext call: %v", err)
	}
	if err := echoCall(t, addr, f.clientConfig()); err == nil {
		t.Fatal("a TLS call was served in disabled mode")
	}
}

// TestTLSClientCertificateVerification: with client certificates required
// and verified, a client without one or with one from another CA is
// refused, one signed by the trusted CA is served.
func TestTLSClientCertificateVerification(t *testing.T) {
	f := newTLSFixture(t)
	sc := f.serverConfig()
	sc.ClientAuth = tls.RequireAndVerifyClientCert
	sc.ClientCAs = f.ca.Pool
	addr := startTLSServer(t, TLSListener{Mode: TLSEnforcing, Config: sc})

	if err := echoCall(t, addr, f.clientConfig(f.client.TLS)); err != nil {
		t.Fatalf("trusted client certificate: %v", err)
	}
	if err := echoCall(t, addr, f.clientConfig()); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	rogue := certs.NewCA(t, "rogue CA").Issue(t, "rogue client")
	if err := echoCall(t, addr, f.clientConfig(rogue.TLS)); err == nil {
		t.Fatal("a client with an untrusted certificate was served")
	}
}

// TestTLSClientVerifiesServer: a client that trusts another CA refuses the
// server.
func TestTLSClientVerifiesServer(t *testing.T) {
	f := newTLSFixture(t)
	addr := startTLSServer(t, TLSListener{Mode: TLSEnforcing, Config: f.serverConfig()})
	other := certs.NewCA(t, "other CA")
	err := echoCall(t, addr, &tls.Config{RootCAs: other.Pool, MinVersion: tls.VersionTLS12})
	if err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Fatalf("call trusting another CA: %v, want an unknown-authority error", err)
	}
}

// TestTLSShutdownClosesUndecided: a connection that never sends its first
// byte does not hold up Shutdown (goleak checks its goroutine ended).
func TestTLSShutdownClosesUndecided(t *testing.T) {
	f := newTLSFixture(t)
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLS: TLSListener{Mode: TLSPermissive, Config: f.serverConfig()}})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wait.For(t, 5*time.Second, "the connection waiting for its first byte", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.mu.pending) == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatal("the undecided connection is still open after Shutdown")
	}
}

// TestTLSFirstByteTimeout: a silent connection is closed after the wait
// for its first byte.
func TestTLSFirstByteTimeout(t *testing.T) {
	f := newTLSFixture(t)
	addr := startTLSServer(t, TLSListener{Mode: TLSEnforcing, Config: f.serverConfig(), FirstByteTimeout: 50 * time.Millisecond})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("silent connection: read %v, want it closed by the server", err)
	}
}

func TestTLSListenerCheck(t *testing.T) {
	if err := (&TLSListener{Mode: TLSEnforcing}).Check(); err == nil {
		t.Fatal("enforcing without a certificate passed the check")
	}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLS: TLSListener{Mode: TLSPermissive}})
	if err := s.Start(); err == nil {
		_ = s.Shutdown(context.Background())
		t.Fatal("a permissive server without a certificate started")
	}
	for _, m := range []TLSMode{TLSDisabled, TLSPermissive, TLSEnforcing} {
		got, err := ParseTLSMode(m.String())
		if err != nil || got != m {
			t.Fatalf("ParseTLSMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseTLSMode("enforce"); err == nil {
		t.Fatal("a misspelt mode parsed")
	}
}
