package controller

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/rocketd/rocketd/internal/protocol"
)

// fsm is the raft state machine: the state, changed only by applying log
// entries, read by the leader's request handlers under the read lock.
type fsm struct {
	log *slog.Logger
	mu  sync.RWMutex
	st  *state
}

func newFSM(log *slog.Logger) *fsm { return &fsm{log: log, st: newState()} }

// Apply implements raft.FSM; its return value is the *result the leader
// answers with.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	c, err := decodeCommand(l.Data)
	if err != nil {
		// Every node fails the same way on the same entry: it changes
		// nothing, and the leader reports it.
		f.log.Error("controller: undecodable log entry", "index", l.Index, "err", err)
		return fail(protocol.SystemError, "%v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st.apply(c)
}

// read runs fn on the state under the read lock.
func (f *fsm) read(fn func(*state)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.st)
}

// Snapshot implements raft.FSM: a deep copy, written as JSON by Persist.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	cp := newState()
	for k, v := range f.st.Sets {
		cp.Sets[k] = v.clone()
	}
	for k, v := range f.st.ClientAddrs {
		cp.ClientAddrs[k] = v
	}
	return &snapshot{st: cp}, nil
}

// Restore implements raft.FSM.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	st := newState()
	if err := json.NewDecoder(rc).Decode(st); err != nil {
		return fmt.Errorf("controller: restore snapshot: %w", err)
	}
	if st.Sets == nil {
		st.Sets = map[string]*brokerSet{}
	}
	if st.ClientAddrs == nil {
		st.ClientAddrs = map[string]string{}
	}
	for _, b := range st.Sets {
		if b.Members == nil {
			b.Members = map[int64]member{}
		}
	}
	f.mu.Lock()
	f.st = st
	f.mu.Unlock()
	return nil
}

type snapshot struct{ st *state }

func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode(s.st); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("controller: persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s *snapshot) Release() {}
