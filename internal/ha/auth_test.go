package ha

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// haUsers is a master's user table: a SUPER replication user and a NORMAL
// application user.
func haUsers(t *testing.T) *auth.Authenticator {
	t.Helper()
	users, err := auth.OpenUsers(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []auth.User{
		{Username: "inner", Password: "inner-secret", UserType: auth.Super},
		{Username: "app", Password: "app-secret", UserType: auth.Normal},
	} {
		if err := users.Create(u); err != nil {
			t.Fatal(err)
		}
	}
	return auth.NewAuthenticator(users, nil, nil)
}

// TestAuthenticatedSlaveReplicates: with authentication on, a slave with
// the SUPER user's credentials answers the challenge and replicates byte
// for byte (SYNC_MASTER puts are acked).
func TestAuthenticatedSlaveReplicates(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{Sync: true, Authenticator: haUsers(t)})
	s := newSlaveStore(t, t.TempDir())
	c := startClient(t, s, srv.Addr().String(), func(cfg *ClientConfig) {
		cfg.Credentials = &auth.Credentials{AccessKey: "inner", SecretKey: "inner-secret"}
	})
	wait.For(t, 10*time.Second, "slave to authenticate and report", func() bool { return srv.slaveInSync() })
	if seen := putN(t, m, "HAAuth", 500, 8); seen[store.PutOK] != 500 {
		t.Fatalf("statuses %v", seen)
	}
	caughtUp(t, m, s)
	sameCommitLog(t, m, s)
	if st := c.Status(); st.State != Replicating {
		t.Fatalf("client state %v (%v)", st.State, st.Err)
	}
}

// TestSlaveWithoutCredentialsRefused: a rocketd slave without credentials
// says why it cannot replicate, and copies nothing.
func TestSlaveWithoutCredentialsRefused(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{Authenticator: haUsers(t)})
	putN(t, m, "HAAuth", 50, 2)
	s := newSlaveStore(t, t.TempDir())
	c := startClient(t, s, srv.Addr().String(), nil)
	wait.For(t, 10*time.Second, "the slave to give up", func() bool { return errors.Is(c.Status().Err, ErrAuthRequired) })
	if got := s.CommitLogMaxOffset(); got != 0 {
		t.Fatalf("slave copied %d bytes without authenticating", got)
	}
}

// TestHARawPeersStreamedNothing plays the attack (8 bytes to the
// HA port) and bad answers at the socket level: each peer reads the
// 12-byte challenge and then the connection closes, with no CommitLog
// byte sent.
func TestHARawPeersStreamedNothing(t *testing.T) {
	m, srv := newMaster(t, t.TempDir(), ServerConfig{Authenticator: haUsers(t), HousekeepingInterval: 500 * time.Millisecond})
	putN(t, m, "HAAuth", 50, 2)
	answer := func(user, secret string) func(challenge []byte) []byte {
		return func(challenge []byte) []byte {
			sig := auth.Credentials{AccessKey: user, SecretKey: secret}.SignHAChallenge(challenge)
			return appendReport(appendAnswer(nil, user, sig), 0)
		}
	}
	cases := []struct {
		name   string
		answer func(challenge []byte) []byte // nil: only offset reports (Java's slave)
	}{
		{"offset reports only (Java slave)", nil},
		{"wrong secret", answer("inner", "guess")},
		{"unknown user", answer("ghost", "x")},
		{"NORMAL user", answer("app", "app-secret")},
		{"signature of another challenge", func([]byte) []byte {
			return answer("inner", "inner-secret")([]byte{0xFF, 0xA5, 0, 0, 0, 0, 0, 1})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", srv.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if err := nc.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Fatal(err)
			}
			if _, err := nc.Write(appendReport(nil, 0)); err != nil {
				t.Fatal(err)
			}
			var hb [HeaderSize]byte
			if _, err := io.ReadFull(nc, hb[:]); err != nil {
				t.Fatal(err)
			}
			if !isChallenge(hb[:]) {
				t.Fatalf("first header %x is not a challenge", hb)
			}
			if tc.answer != nil {
				if _, err := nc.Write(tc.answer(hb[:8])); err != nil {
					t.Fatal(err)
				}
			}
			rest, err := io.ReadAll(nc)
			if err != nil && !isClosed(err) {
				t.Fatalf("read after the challenge: %v", err)
			}
			if len(rest) != 0 {
				t.Fatalf("master sent %d bytes (offset %d) to an unauthenticated peer", len(rest), binary.BigEndian.Uint64(append(rest, make([]byte, 8)...)))
			}
		})
	}
	wait.For(t, 10*time.Second, "refused peers to be dropped", func() bool { return len(srv.Slaves()) == 0 })
}

func isClosed(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.As(err, &ne) && !ne.Timeout()
}
