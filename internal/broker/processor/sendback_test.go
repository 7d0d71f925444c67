package processor_test

import (
	"testing"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

func TestSendBack(t *testing.T) {
	e := newEnv(t, nil)
	e.createTopic("T", 1)
	r := e.send(sendHeader("T", 0, "TAGS\x01a\x02UNIQ_KEY\x01U1"), "failed")
	var sh protocol.SendMessageResponseHeader
	must(t, sh.Decode(r.ExtFields))
	_, off, err := message.ParseOffsetMsgID(sh.MsgID)
	must(t, err)

	// Broker-chosen delay: level 3 for a first retry, parked in the
	// schedule topic's queue 2 until the schedule service delivers it.
	h := &protocol.ConsumerSendMsgBackRequestHeader{Offset: off, Group: "cg", OriginMsgID: "U1"}
	if r := e.call(protocol.ConsumerSendMsgBack, protocol.Ext(h), nil); r.Code != protocol.Success {
		t.Fatalf("send back: %d %s", r.Code, r.Remark)
	}
	if !e.topics.Contains("%RETRY%cg") {
		t.Fatal("retry topic not created")
	}
	e.waitMaxOffset(message.ScheduleTopic, 2, 1)

	// Straight to the DLQ.
	h.DelayLevel = -1
	if r := e.call(protocol.ConsumerSendMsgBack, protocol.Ext(h), nil); r.Code != protocol.Success {
		t.Fatalf("send back to DLQ: %d %s", r.Code, r.Remark)
	}
	e.waitMaxOffset("%DLQ%cg", 0, 1)
	res, err := e.store.GetMessage("x", "%DLQ%cg", 0, 0, 1, nil)
	must(t, err)
	rec, _, err := message.DecodeRecord(res.Messages[0].Bytes, false)
	res.Release()
	must(t, err)
	props := message.ParseProperties(rec.Properties)
	if string(rec.Body) != "failed" || rec.ReconsumeTimes != 1 || props["RETRY_TOPIC"] != "T" ||
		props["ORIGIN_MESSAGE_ID"] != "U1" || props["UNIQ_KEY"] != "U1" || props["DELAY"] != "" {
		t.Fatalf("dead letter: body %q reconsume %d props %v", rec.Body, rec.ReconsumeTimes, props)
	}

	// An offset with no message behind it.
	h.Offset = 1 << 40
	if r := e.call(protocol.ConsumerSendMsgBack, protocol.Ext(h), nil); r.Code != protocol.SystemError {
		t.Fatalf("bad offset: %d %s", r.Code, r.Remark)
	}
}
