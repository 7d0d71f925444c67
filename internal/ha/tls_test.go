package ha

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/certs"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestTLSReplication: a master enforcing TLS on the HA port replicates to
// a slave that dials with TLS and verifies the master's certificate; a
// plaintext slave gets nothing.
func TestTLSReplication(t *testing.T) {
	ca := certs.NewCA(t, "ha CA")
	server := ca.Issue(t, "master")
	listener := remoting.TLSListener{Mode: remoting.TLSEnforcing,
		Config: &tls.Config{Certificates: []tls.Certificate{server.TLS}, MinVersion: tls.VersionTLS12}}
	m, srv := newMaster(t, t.TempDir(), ServerConfig{Sync: true, TLS: listener})

	plain := newSlaveStore(t, t.TempDir())
	startClient(t, plain, srv.Addr().String(), nil)

	s := newSlaveStore(t, t.TempDir())
	startClient(t, s, srv.Addr().String(), func(c *ClientConfig) {
		c.TLS = &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}
	})
	wait.For(t, 10*time.Second, "the TLS slave to connect and report", func() bool { return srv.slaveInSync() })
	const n = 200
	if seen := putN(t, m, "HATLS", n, 4); seen[store.PutOK] != n {
		t.Fatalf("statuses %v, want %d PUT_OK", seen, n)
	}
	caughtUp(t, m, s)
	sameCommitLog(t, m, s)
	if got := len(srv.Slaves()); got != 1 {
		t.Fatalf("%d slaves connected, want only the TLS one", got)
	}
	if plain.CommitLogMaxOffset() != 0 {
		t.Fatalf("the plaintext slave received %d bytes", plain.CommitLogMaxOffset())
	}
}
