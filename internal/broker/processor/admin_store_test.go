package processor_test

import (
	"context"
	"testing"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
)

func TestStoreCleanups(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("Kept", 1)
	// Queues without a topic config: Gone is unused, the system topic and
	// the light message queue are not.
	for _, topic := range []string{"Kept", "Gone", "rmq_sys_Own", "%LMQ%lite"} {
		res := e.store.PutMessage(context.Background(), &message.Record{Topic: topic, Body: []byte("x")}, store.PutOptions{})
		if res.Status != store.PutOK {
			t.Fatalf("put %s: %v", topic, res.Status)
		}
		e.waitMaxOffset(topic, 0, 1)
	}

	// Nothing lies below the CommitLog's min offset: every queue stays.
	if r := e.call(protocol.CleanExpiredConsumequeue, nil, nil); r.Code != protocol.Success {
		t.Fatalf("CLEAN_EXPIRED_CONSUMEQUEUE: %d %s", r.Code, r.Remark)
	}
	if got := len(e.store.Queues()); got < 4 {
		t.Fatalf("%d topics with queues after cleaning nothing expired: %v", got, e.store.Queues())
	}

	if r := e.call(protocol.CleanUnusedTopic, nil, nil); r.Code != protocol.Success {
		t.Fatalf("CLEAN_UNUSED_TOPIC: %d %s", r.Code, r.Remark)
	}
	qs := e.store.Queues()
	if _, found := qs["Gone"]; found {
		t.Error("unused topic Gone kept")
	}
	for _, topic := range []string{"Kept", "rmq_sys_Own", "%LMQ%lite"} {
		if _, found := qs[topic]; !found {
			t.Errorf("%s deleted", topic)
		}
	}

	if r := e.call(protocol.DeleteExpiredCommitlog, nil, nil); r.Code != protocol.Success {
		t.Fatalf("DELETE_EXPIRED_COMMITLOG: %d %s", r.Code, r.Remark)
	}
}
