package controller

import (
	"maps"
	"slices"
)

// firstBrokerID is the id the first broker of a set gets (Java's
// MixAll.FIRST_BROKER_CONTROLLER_ID); ids below it are not controller ids.
const firstBrokerID = 1

// member is one broker of a set: its address and the registerCheckCode
// ("addr;timestamp") it applied for its id with.
type member struct {
	Addr      string `json:"addr"`
	CheckCode string `json:"checkCode"`
}

// brokerSet is the replicated state of one broker set (Java's
// BrokerReplicaInfo and SyncStateInfo together).
type brokerSet struct {
	ClusterName string           `json:"clusterName"`
	BrokerName  string           `json:"brokerName"`
	NextID      int64            `json:"nextBrokerId"`
	Members     map[int64]member `json:"members"`
	// Master is the master's broker id; nil while the set has none.
	Master            *int64  `json:"master,omitempty"`
	MasterEpoch       int32   `json:"masterEpoch"`
	SyncStateSet      []int64 `json:"syncStateSet"` // sorted
	SyncStateSetEpoch int32   `json:"syncStateSetEpoch"`
}

func (b *brokerSet) clone() *brokerSet {
	c := *b
	c.Members = maps.Clone(b.Members)
	c.SyncStateSet = slices.Clone(b.SyncStateSet)
	if b.Master != nil {
		m := *b.Master
		c.Master = &m
	}
	return &c
}

func (b *brokerSet) masterID() (int64, bool) {
	if b.Master == nil {
		return 0, false
	}
	return *b.Master, true
}

func (b *brokerSet) addr(id int64) string { return b.Members[id].Addr }

func (b *brokerSet) inSync(id int64) bool {
	_, ok := slices.BinarySearch(b.SyncStateSet, id)
	return ok
}

func (b *brokerSet) setMaster(id *int64) {
	b.Master = id
	b.MasterEpoch++
}

func (b *brokerSet) setSyncStateSet(ids []int64) {
	b.SyncStateSet = sortedIDs(ids)
	b.SyncStateSetEpoch++
}

// memberIDs returns the set's broker ids in ascending order.
func (b *brokerSet) memberIDs() []int64 { return slices.Sorted(maps.Keys(b.Members)) }

// state is everything the controllers replicate: the broker sets by
// brokerName (Java keys them by name alone, too) and the client address
// each controller node announced when it became leader.
type state struct {
	Sets        map[string]*brokerSet `json:"sets"`
	ClientAddrs map[string]string     `json:"clientAddrs"` // raft server id -> remoting address
}

func newState() *state {
	return &state{Sets: map[string]*brokerSet{}, ClientAddrs: map[string]string{}}
}

func sortedIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}
