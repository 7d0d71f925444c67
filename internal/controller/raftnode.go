package controller

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/rocketd/rocketd/internal/config"
)

// streamLayer is raft's transport on a listener the controller owns, so
// that tests can hand in listeners bound to ephemeral ports before the
// peers' addresses are known to each other.
type streamLayer struct {
	net.Listener
	advertise net.Addr

	// raft's transport leaves the connections it accepted to the peers
	// to close; Close closes them so that no reader outlives the node.
	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

func (s *streamLayer) Accept() (net.Conn, error) {
	c, err := s.Listener.Accept()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	return c, nil
}

func (s *streamLayer) Close() error {
	err := s.Listener.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	return err
}

func (s *streamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(addr), timeout)
}

func (s *streamLayer) Addr() net.Addr { return s.advertise }

type advertiseAddr string

func (a advertiseAddr) Network() string { return "tcp" }
func (a advertiseAddr) String() string  { return string(a) }

// raftNode is the hashicorp/raft instance with its stores and transport.
type raftNode struct {
	r         *raft.Raft
	store     *raftboltdb.BoltStore
	transport *raft.NetworkTransport
}

// openRaft opens (or creates and bootstraps) this node's raft state under
// controllerStorePath/<selfId>: raft.db (log and stable store) and
// snapshots/.
func openRaft(cc *config.ControllerConfig, ln net.Listener, timeout time.Duration, f *fsm, log *slog.Logger) (*raftNode, error) {
	peers, err := cc.Peers()
	if err != nil {
		return nil, err
	}
	var self config.ControllerPeer
	servers := make([]raft.Server, 0, len(peers))
	for _, p := range peers {
		if p.ID == cc.ControllerDLegerSelfID {
			self = p
		}
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr)})
	}
	dir := filepath.Join(cc.ControllerStorePath, self.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("controller: store: %w", err)
	}
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Info, Output: &slogWriter{log: log}, DisableTime: true})
	if ln == nil {
		if ln, err = net.Listen("tcp", self.Addr); err != nil {
			return nil, fmt.Errorf("controller: raft transport: %w", err)
		}
	}
	n := &raftNode{}
	n.transport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: &streamLayer{Listener: ln, advertise: advertiseAddr(self.Addr)}, MaxPool: 3, Timeout: 10 * time.Second, Logger: hl,
	})
	fail := func(err error) (*raftNode, error) {
		n.close()
		return nil, err
	}
	if n.store, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")}); err != nil {
		return fail(fmt.Errorf("controller: raft store: %w", err))
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hl)
	if err != nil {
		return fail(fmt.Errorf("controller: raft snapshots: %w", err))
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(self.ID)
	rc.Logger = hl
	if timeout > 0 {
		rc.HeartbeatTimeout, rc.ElectionTimeout = timeout, timeout
		rc.LeaderLeaseTimeout = timeout / 2
		rc.CommitTimeout = min(rc.CommitTimeout, timeout/10)
	}
	existing, err := raft.HasExistingState(n.store, n.store, snaps)
	if err != nil {
		return fail(fmt.Errorf("controller: raft state: %w", err))
	}
	if !existing {
		// Every node bootstraps with the same peer list; raft keeps
		// that safe (the first election decides).
		if err := raft.BootstrapCluster(rc, n.store, n.store, snaps, n.transport, raft.Configuration{Servers: servers}); err != nil {
			return fail(fmt.Errorf("controller: raft bootstrap: %w", err))
		}
	}
	if n.r, err = raft.NewRaft(rc, f, n.store, n.store, snaps, n.transport); err != nil {
		return fail(fmt.Errorf("controller: raft: %w", err))
	}
	return n, nil
}

func (n *raftNode) close() error {
	var first error
	if n.r != nil {
		first = n.r.Shutdown().Error()
	}
	if n.transport != nil {
		n.transport.CloseStreams()
		if err := n.transport.Close(); err != nil && first == nil {
			first = err
		}
	}
	if n.store != nil {
		if err := n.store.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// slogWriter turns hclog's lines into slog records.
type slogWriter struct{ log *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	switch {
	case strings.Contains(line, "[ERROR]"):
		w.log.Error(line)
	case strings.Contains(line, "[WARN]"):
		w.log.Warn(line)
	default:
		w.log.Info(line)
	}
	return len(p), nil
}

var _ io.Writer = (*slogWriter)(nil)
