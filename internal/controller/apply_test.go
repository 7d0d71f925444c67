package controller

import (
	"slices"
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
)

// threeBrokers is a state with broker-a's ids 1-3, 1 master, SyncStateSet ss.
func threeBrokers(ss ...int64) *state {
	s := newState()
	for id := int64(1); id <= 3; id++ {
		s.apply(&command{Op: opApplyBrokerID, ClusterName: "c", BrokerName: "a", BrokerID: id, CheckCode: "10.0.0.1:1;1"})
	}
	s.apply(&command{Op: opElectMaster, ClusterName: "c", BrokerName: "a", BrokerID: 1})
	if len(ss) > 0 {
		s.Sets["a"].setSyncStateSet(ss)
	}
	return s
}

// TestElectionOrder: with the master gone, the live SyncStateSet member
// with the highest epoch wins, then the larger offset, then the lower
// electionPriority, then the lower id; a dead or out-of-sync replica never.
func TestElectionOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alive []candidate
		want  int64
	}{
		{"higher epoch beats larger offset", []candidate{{ID: 2, Epoch: 1, MaxOffset: 900}, {ID: 3, Epoch: 2, MaxOffset: 10}}, 3},
		{"larger offset", []candidate{{ID: 2, Epoch: 1, MaxOffset: 900}, {ID: 3, Epoch: 1, MaxOffset: 10}}, 2},
		{"lower priority", []candidate{{ID: 2, Epoch: 1, MaxOffset: 10, Priority: 5}, {ID: 3, Epoch: 1, MaxOffset: 10, Priority: 1}}, 3},
		{"lower id on a tie", []candidate{{ID: 3, Epoch: 1, MaxOffset: 10}, {ID: 2, Epoch: 1, MaxOffset: 10}}, 2},
		{"only live members", []candidate{{ID: 3, Epoch: 1}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := threeBrokers(1, 2, 3)
			res := s.apply(&command{Op: opElectMaster, BrokerName: "a", BrokerID: -1, Alive: tc.alive})
			if res.Code != protocol.Success || *s.Sets["a"].Master != tc.want {
				t.Fatalf("elected %v (%d %q), want %d", s.Sets["a"].Master, res.Code, res.Remark, tc.want)
			}
			if b := s.Sets["a"]; b.MasterEpoch != 2 || !slices.Equal(b.SyncStateSet, []int64{tc.want}) {
				t.Fatalf("after election: %+v", b)
			}
		})
	}
	// Out of sync: 3 is alive but not in {1, 2}; 2 is dead.
	s := threeBrokers(1, 2)
	res := s.apply(&command{Op: opElectMaster, BrokerName: "a", BrokerID: -1, Alive: []candidate{{ID: 3, Epoch: 9, MaxOffset: 9}}})
	if res.Code != protocol.ControllerMasterNotAvailable || s.Sets["a"].Master != nil || s.Sets["a"].MasterEpoch != 2 {
		t.Fatalf("unclean candidate: %d %q, master %v", res.Code, res.Remark, s.Sets["a"].Master)
	}
	// The same with enableElectUncleanMaster.
	s = threeBrokers(1, 2)
	res = s.apply(&command{Op: opElectMaster, BrokerName: "a", BrokerID: -1, Unclean: true, Alive: []candidate{{ID: 3}}})
	if res.Code != protocol.Success || *s.Sets["a"].Master != 3 {
		t.Fatalf("unclean allowed: %d %q", res.Code, res.Remark)
	}
	// A live old master stays.
	s = threeBrokers(1, 2)
	res = s.apply(&command{Op: opElectMaster, BrokerName: "a", BrokerID: 2, Alive: []candidate{{ID: 1}, {ID: 2}}})
	if res.Code != protocol.ControllerMasterStillExist || *s.Sets["a"].Master != 1 || s.Sets["a"].MasterEpoch != 1 {
		t.Fatalf("live master: %d %q", res.Code, res.Remark)
	}
}

// TestSnapshotRoundTrip: a snapshot restores the same state.
func TestSnapshotRoundTrip(t *testing.T) {
	f := newFSM(nil)
	f.st = threeBrokers(1, 2)
	f.st.ClientAddrs["n0"] = "127.0.0.1:1"
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	g := newFSM(nil)
	if err := g.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	a, b := f.st.Sets["a"], g.st.Sets["a"]
	if b == nil || *b.Master != *a.Master || b.MasterEpoch != a.MasterEpoch || !slices.Equal(b.SyncStateSet, a.SyncStateSet) ||
		b.NextID != a.NextID || len(b.Members) != 3 || b.Members[2] != a.Members[2] || g.st.ClientAddrs["n0"] != "127.0.0.1:1" {
		t.Fatalf("restored %+v from %+v", b, a)
	}
}
