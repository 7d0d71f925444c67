package processor_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// syncCall sends a metadata copy request as a rocketd slave does (known
// == nil: as Java's slave does, without a version) and returns the answer
// and its version header.
func (e *env) syncCall(code int32, known *protocol.SlaveSyncResponseHeader) (*remoting.Command, protocol.SlaveSyncResponseHeader) {
	e.t.Helper()
	var ext map[string]string
	if known != nil {
		ext = protocol.Ext(&protocol.SlaveSyncRequestHeader{KnownStamp: known.Stamp, KnownCount: known.Count})
	}
	r := e.call(code, ext, nil)
	var h protocol.SlaveSyncResponseHeader
	must(e.t, h.Decode(r.ExtFields))
	return r, h
}

// A request without a version (Java's slave, mqadmin) gets the whole
// table; with the version the answer carried it gets an empty UNCHANGED
// answer until the table changes, and then the whole table again.
func TestSlaveSyncVersionedTables(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name   string
		code   int32
		change func(i int)
		has    func(body []byte, i int) bool
	}{
		{"topics", protocol.GetAllTopicConfig,
			func(i int) { e.createTopic("SyncT"+strconv.Itoa(i), 1) },
			func(body []byte, i int) bool {
				var w protocol.TopicConfigSerializeWrapper
				return protocol.UnmarshalFastJSON(body, &w) == nil && w.TopicConfigTable["SyncT"+strconv.Itoa(i)].TopicName != ""
			}},
		{"groups", protocol.GetAllSubscriptionGroupConfig,
			func(i int) {
				gc := protocol.NewSubscriptionGroupConfig("SyncG" + strconv.Itoa(i))
				body, err := protocol.MarshalFastJSON(&gc)
				must(t, err)
				if r := e.call(protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
					t.Fatalf("create group: %d %s", r.Code, r.Remark)
				}
			},
			func(body []byte, i int) bool {
				var w protocol.SubscriptionGroupTable
				return protocol.UnmarshalFastJSON(body, &w) == nil && w.SubscriptionGroupTable["SyncG"+strconv.Itoa(i)].GroupName != ""
			}},
		{"delay offsets", protocol.GetAllDelayOffset,
			func(i int) {
				name := filepath.Join(meta.ConfigDir(e.cfg.StorePathRootDir), meta.DelayOffsetFile)
				must(t, os.MkdirAll(filepath.Dir(name), 0o755))
				must(t, os.WriteFile(name, []byte(`{"offsetTable":{1:`+strconv.Itoa(i)+`}}`), 0o644))
			},
			func(body []byte, i int) bool {
				var w protocol.DelayOffsetTable
				return protocol.UnmarshalFastJSON(body, &w) == nil && w.OffsetTable[1] == int64(i)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change(1)
			r, full := e.syncCall(tc.code, nil)
			if r.Code != protocol.Success || !tc.has(r.Body, 1) || full.Unchanged.Set || full.Delta.Set {
				t.Fatalf("request without version: %d %s %v, want the whole table", r.Code, r.Body, r.ExtFields)
			}
			if _, _, ok := full.Version(); !ok {
				t.Fatalf("answer without version: %v", r.ExtFields)
			}
			r, h := e.syncCall(tc.code, &full)
			if r.Code != protocol.Success || len(r.Body) != 0 || !h.Unchanged.Value || h.Stamp != full.Stamp || h.Count != full.Count {
				t.Fatalf("request with the current version: %d %q %v, want an empty UNCHANGED answer", r.Code, r.Body, r.ExtFields)
			}
			tc.change(2)
			r, h = e.syncCall(tc.code, &full)
			if r.Code != protocol.Success || !tc.has(r.Body, 2) || h.Unchanged.Set || h == full {
				t.Fatalf("request after a change: %d %s %v, want the new table with a new version", r.Code, r.Body, r.ExtFields)
			}
			// A version the master never had (another master's) gets it all.
			other := protocol.SlaveSyncResponseHeader{Stamp: protocol.Some(int64(1)), Count: protocol.Some(int64(1))}
			if r, h := e.syncCall(tc.code, &other); !tc.has(r.Body, 2) || h.Unchanged.Set {
				t.Fatalf("request with a foreign version: %s %v", r.Body, r.ExtFields)
			}
		})
	}
	// A malformed version is refused as Java refuses a malformed header.
	if r := e.call(protocol.GetAllTopicConfig, map[string]string{"rocketdKnownStamp": "x", "rocketdKnownCount": "1"}, nil); r.Code != protocol.SystemError {
		t.Fatalf("malformed version: %d %s, want SYSTEM_ERROR", r.Code, r.Remark)
	}
}

// Consumer offsets: a slave holding a version of the open table gets only
// the topic@group entries committed since (an empty UNCHANGED answer when
// none); one without gets the whole table.
func TestSlaveSyncOffsetDelta(t *testing.T) {
	e := newEnv(t, nil)
	e.offsets.Commit("g1", "T", 0, 10)
	e.offsets.Commit("g2", "T", 0, 20)
	r, full := e.syncCall(protocol.GetAllConsumerOffset, nil)
	var w protocol.ConsumerOffsetTable
	must(t, protocol.UnmarshalFastJSON(r.Body, &w))
	if len(w.OffsetTable) != 2 || full.Delta.Set || full.Unchanged.Set {
		t.Fatalf("full answer: %s %v", r.Body, r.ExtFields)
	}
	// Java 5.x's slave assigns the body's dataVersion to its own table
	// (a NullPointerException without one).
	if w.DataVersion == nil || w.DataVersion.Counter != 2 || w.DataVersion.Timestamp == 0 {
		t.Fatalf("full answer without a usable dataVersion: %s", r.Body)
	}
	r, h := e.syncCall(protocol.GetAllConsumerOffset, &full)
	if len(r.Body) != 0 || !h.Unchanged.Value {
		t.Fatalf("nothing committed since: %q %v, want UNCHANGED", r.Body, r.ExtFields)
	}
	e.offsets.Commit("g2", "T", 1, 21)
	r, h = e.syncCall(protocol.GetAllConsumerOffset, &full)
	w = protocol.ConsumerOffsetTable{}
	must(t, protocol.UnmarshalFastJSON(r.Body, &w))
	if !h.Delta.Value || len(w.OffsetTable) != 1 || w.OffsetTable["T@g2"][0] != 20 || w.OffsetTable["T@g2"][1] != 21 {
		t.Fatalf("delta: %s %v, want only T@g2 with both queues", r.Body, r.ExtFields)
	}
	if r, h2 := e.syncCall(protocol.GetAllConsumerOffset, &h); len(r.Body) != 0 || !h2.Unchanged.Value {
		t.Fatalf("after the delta: %q %v, want UNCHANGED", r.Body, r.ExtFields)
	}
}
