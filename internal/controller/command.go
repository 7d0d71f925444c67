package controller

import (
	"encoding/json"
	"fmt"

	"github.com/rocketd/rocketd/internal/protocol"
)

// op names a replicated command (the JSON "op" of a raft log entry).
type op string

const (
	opApplyBrokerID     op = "applyBrokerId"
	opRegisterBroker    op = "registerBroker"
	opElectMaster       op = "electMaster"
	opAlterSyncStateSet op = "alterSyncStateSet"
	opCleanBrokerData   op = "cleanBrokerData"
	opLeaderAddr        op = "leaderAddr"
)

// candidate is what the leader knew of a live broker when it proposed a
// command: liveness is leader-local (not replicated, as in Java), so the
// leader writes the facts a decision needs into the command and every node
// decides the same from the log alone.
type candidate struct {
	ID        int64 `json:"id"`
	Epoch     int32 `json:"epoch"`
	MaxOffset int64 `json:"maxOffset"`
	Priority  int32 `json:"priority"`
}

// command is one raft log entry: a request as the leader received it plus
// the leader-local facts it is decided on. The state machine runs Java's
// checks (ReplicasInfoManager) when it applies the entry, so two requests
// can never be checked against the same state and both applied.
type command struct {
	Op          op     `json:"op"`
	ClusterName string `json:"clusterName,omitempty"`
	BrokerName  string `json:"brokerName,omitempty"`
	BrokerID    int64  `json:"brokerId,omitempty"`
	Addr        string `json:"addr,omitempty"`
	CheckCode   string `json:"checkCode,omitempty"`
	Designate   bool   `json:"designate,omitempty"`
	MasterEpoch int32  `json:"masterEpoch,omitempty"`
	// SyncStateSet and SyncStateSetEpoch are ALTER_SYNC_STATE_SET's body.
	SyncStateSet      []int64 `json:"syncStateSet,omitempty"`
	SyncStateSetEpoch int32   `json:"syncStateSetEpoch,omitempty"`
	CleanIDs          string  `json:"cleanIds,omitempty"`
	CleanLiving       bool    `json:"cleanLiving,omitempty"`
	NodeID            string  `json:"nodeId,omitempty"`
	// Alive lists the set's brokers the leader saw alive, with their
	// last epoch, offset and election priority.
	Alive []candidate `json:"alive,omitempty"`
	// Unclean is enableElectUncleanMaster when the leader proposed.
	Unclean bool `json:"unclean,omitempty"`
}

func (c *command) alive(id int64) (candidate, bool) {
	for _, a := range c.Alive {
		if a.ID == id {
			return a, true
		}
	}
	return candidate{}, false
}

func decodeCommand(data []byte) (*command, error) {
	var c command
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("controller: decode log entry: %w", err)
	}
	return &c, nil
}

// result is the answer to a request: Java's response code and remark, the
// response header's fields and the body.
type result struct {
	Code   int32
	Remark string
	Ext    map[string]string
	Body   []byte
}

func ok() *result { return &result{Code: protocol.Success} }

func fail(code int32, format string, args ...any) *result {
	return &result{Code: code, Remark: fmt.Sprintf(format, args...)}
}

func (r *result) header(h interface{ AppendExt(map[string]string) }) *result {
	r.Ext = protocol.Ext(h)
	return r
}

func (r *result) body(v any) *result {
	b, err := protocol.MarshalFastJSON(v)
	if err != nil {
		// The bodies are plain structs of strings and numbers.
		panic(fmt.Sprintf("controller: encode body: %v", err))
	}
	r.Body = b
	return r
}
