package broker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// RESUME_CHECK_HALF_MESSAGE puts the half message an offset id names back
// into the half queue; anything else is SYSTEM_ERROR with a reason.
func TestResumeCheckHalfMessage(t *testing.T) {
	c := startCluster(t, nil)
	const topic = "ResumeHalfTopic"
	c.createTopic(topic, 1)
	send := func(props string) string {
		t.Helper()
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli(), Properties: props}
		if props != "" {
			h.SysFlag = message.TransactionPreparedType
		}
		r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte("body"))
		if r.Code != protocol.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
		return r.Ext()["msgId"]
	}
	half := send(message.SetProperty(message.SetProperty("", message.PropertyTransactionPrepared, "true"),
		message.PropertyProducerGroup, "pg"))
	plain := send("")
	wait.For(t, 5*time.Second, "the half message dispatched", func() bool {
		return c.b.Store().MaxOffset(meta.TransHalfTopic, 0) == 1
	})

	resume := func(id string) (int32, string) {
		t.Helper()
		r := c.invoke(c.b.Addr(), protocol.ResumeCheckHalfMessage, &protocol.ResumeCheckHalfMessageRequestHeader{MsgID: id}, nil)
		return r.Code, r.Remark
	}
	if code, remark := resume(half); code != protocol.Success {
		t.Fatalf("resume %s: %d %s", half, code, remark)
	}
	wait.For(t, 5*time.Second, "the resumed copy dispatched", func() bool {
		return c.b.Store().MaxOffset(meta.TransHalfTopic, 0) == 2
	})
	host, _, err := message.ParseOffsetMsgID(plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ id, remark string }{
		{"", "msgId is required"},
		{"zz", "msgId zz"},
		{plain, "not a half message"},
		{message.OffsetMsgID(host, 1<<40), "can not find message by the offset"},
	} {
		if code, remark := resume(bad.id); code != protocol.SystemError || !strings.Contains(remark, bad.remark) {
			t.Errorf("resume %q: %d %q, want SYSTEM_ERROR %q", bad.id, code, remark, bad.remark)
		}
	}
}
