package processor_test

import (
	"testing"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TestGroupForbidden: UPDATE_AND_GET_GROUP_FORBIDDEN forbids and allows a
// group's pulls of a topic, and answers the state; bad headers get
// SYSTEM_ERROR.
func TestGroupForbidden(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	if r := e.send(sendHeader("T", 0, ""), "m"); r.Code != protocol.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset("T", 0, 1)
	if r := e.call(protocol.HeartBeat, nil, heartbeatBody("c1", "cg", "T")); r.Code != protocol.Success {
		t.Fatalf("heartbeat: %d %s", r.Code, r.Remark)
	}
	pull := func() *protocol.PullMessageRequestHeader {
		h := pullHeader("cg", "T", 0, 0, "")
		h.SysFlag = 0 // the registered subscription, as Java checks the forbidden table there
		return h
	}
	forbidden := func(readable *bool) protocol.GroupForbidden {
		t.Helper()
		h := protocol.UpdateGroupForbiddenRequestHeader{Group: "cg", Topic: "T"}
		if readable != nil {
			h.Readable = protocol.Some(*readable)
		}
		r := e.call(protocol.UpdateAndGetGroupForbidden, protocol.Ext(&h), nil)
		if r.Code != protocol.Success {
			t.Fatalf("UPDATE_AND_GET_GROUP_FORBIDDEN: %d %s", r.Code, r.Remark)
		}
		var gf protocol.GroupForbidden
		must(t, protocol.UnmarshalFastJSON(r.Body, &gf))
		if gf.Group != "cg" || gf.Topic != "T" {
			t.Fatalf("body %s", r.Body)
		}
		return gf
	}
	if r := e.call(protocol.PullMessage, protocol.Ext(pull()), nil); r.Code != protocol.Success {
		t.Fatalf("pull before: %d %s", r.Code, r.Remark)
	}
	if !forbidden(nil).Readable {
		t.Fatal("readable before any update")
	}
	no, yes := false, true
	if forbidden(&no).Readable {
		t.Fatal("readable after readable=false")
	}
	if r := e.call(protocol.PullMessage, protocol.Ext(pull()), nil); r.Code != protocol.NoPermission || r.Remark != "the consumer group[cg] is forbidden for topic[T]" {
		t.Fatalf("pull while forbidden: %d %s", r.Code, r.Remark)
	}
	if forbidden(nil).Readable {
		t.Fatal("a read-only request changed the state")
	}
	if !forbidden(&yes).Readable {
		t.Fatal("not readable after readable=true")
	}
	if r := e.call(protocol.PullMessage, protocol.Ext(pull()), nil); r.Code != protocol.Success {
		t.Fatalf("pull after allowing again: %d %s", r.Code, r.Remark)
	}
	for _, ext := range []map[string]string{
		{"topic": "T"},
		{"group": "cg"},
		{"group": "", "topic": "T"},
	} {
		if r := e.call(protocol.UpdateAndGetGroupForbidden, ext, nil); r.Code != protocol.SystemError {
			t.Errorf("%v: %d %s", ext, r.Code, r.Remark)
		}
	}
}
