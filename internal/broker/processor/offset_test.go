package processor_test

import (
	"testing"

	"github.com/rocketd/rocketd/internal/broker/processor"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

func offsetOf(t *testing.T, e *env, code int32, h protocol.ExtHeader) (int32, int64) {
	t.Helper()
	r := e.call(code, protocol.Ext(h), nil)
	var oh protocol.OffsetResponseHeader
	if r.Code == protocol.Success {
		must(t, oh.Decode(r.ExtFields))
	}
	return r.Code, oh.Offset
}

func TestConsumerOffsets(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 2)
	q := &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: 0}
	// Unknown group, empty queue starting at 0: Java answers 0.
	if code, off := offsetOf(t, e, protocol.QueryConsumerOffset, q); code != protocol.Success || off != 0 {
		t.Fatalf("new group: %d %d", code, off)
	}
	u := &protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: 0, CommitOffset: 7}
	if r := e.call(protocol.UpdateConsumerOffset, protocol.Ext(u), nil); r.Code != protocol.Success {
		t.Fatal(r.Remark)
	}
	if code, off := offsetOf(t, e, protocol.QueryConsumerOffset, q); code != protocol.Success || off != 7 {
		t.Fatalf("committed: %d %d", code, off)
	}
	for range 3 {
		e.send(sendHeader("T", 1, ""), "x")
	}
	e.waitMaxOffset("T", 1, 3)
	qh := &protocol.QueueRequestHeader{Topic: "T", QueueID: 1}
	if code, off := offsetOf(t, e, protocol.GetMaxOffset, qh); code != protocol.Success || off != 3 {
		t.Fatalf("max: %d %d", code, off)
	}
	if code, off := offsetOf(t, e, protocol.GetMinOffset, qh); code != protocol.Success || off != 0 {
		t.Fatalf("min: %d %d", code, off)
	}
	r := e.call(protocol.GetEarliestMsgStoretime, protocol.Ext(qh), nil)
	var eh protocol.GetEarliestMsgStoretimeResponseHeader
	must(t, eh.Decode(r.ExtFields))
	if r.Code != protocol.Success || eh.Timestamp <= 0 {
		t.Fatalf("earliest: %d %d", r.Code, eh.Timestamp)
	}
	sh := &protocol.SearchOffsetRequestHeader{Topic: "T", QueueID: 1, Timestamp: eh.Timestamp}
	if code, off := offsetOf(t, e, protocol.SearchOffsetByTimestamp, sh); code != protocol.Success || off != 0 {
		t.Fatalf("search: %d %d", code, off)
	}
}

// TestQueryOffsetFirstMessageOnDisk: when the queue's first message is
// no longer "in memory", an unknown group gets QUERY_NOT_FOUND (22), which
// sends clients to their consume-from-where.
func TestQueryOffsetFirstMessageOnDisk(t *testing.T) {
	e := newEnv(t, func(_ *config.BrokerConfig, d *processor.Deps) { d.InMemoryBytes = 1 })
	e.createTopic("T", 1)
	e.send(sendHeader("T", 0, ""), "x")
	e.send(sendHeader("T", 0, ""), "y")
	e.waitMaxOffset("T", 0, 2)
	q := &protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: 0}
	if code, _ := offsetOf(t, e, protocol.QueryConsumerOffset, q); code != protocol.QueryNotFound {
		t.Fatalf("code %d, want QUERY_NOT_FOUND", code)
	}
}
