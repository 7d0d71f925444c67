package broker_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// Half messages outstanding (each checked and re-appended at least once),
// the rocketd process killed with SIGKILL and started again on the same
// data: the check-back of the new process asks a producer of the group,
// which commits, and each message is delivered exactly once.
func TestRocketdKilledWithHalfMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rocketd")
	}
	sp := newServeProc(t, "transactionTimeOut=1000\ntransactionCheckInterval=300\ntransactionCheckMax=50\n")
	bin, nsAddr, brokerAddr, dir, args := sp.bin, sp.nsAddr, sp.addr, sp.dir, sp.args

	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	c := &cluster{t: t, dir: dir, nsAddr: nsAddr, rc: rc}
	rd := startRocketd(t, bin, args...)
	topic := uniq(t, "T")
	h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 2, WriteQueueNums: 2,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	if r := c.invoke(brokerAddr, protocol.UpdateAndCreateTopic, &h, nil); r.Code != protocol.Success {
		t.Fatalf("create topic: %d %s", r.Code, r.Remark)
	}
	c.waitRoute(topic, 2)

	group := uniq(t, "tg")
	l := newTxnListener()
	l.setAll(primitive.UnkonwnState)
	p := c.newTxnProducerOn(brokerAddr, group, topic, l)
	const n = 5
	for i := range n {
		sendTxn(t, p, topic, fmt.Sprintf("half-%d", i), primitive.UnkonwnState)
	}
	wait.For(t, 20*time.Second, "a check of every half message", func() bool {
		for i := range n {
			if l.checkCount(fmt.Sprintf("half-%d", i)) == 0 {
				return false
			}
		}
		return true
	})

	stopRocketd(t, rd, syscall.SIGKILL)
	rc.CloseConn(brokerAddr)
	rc.CloseConn(nsAddr)
	rd = startRocketd(t, bin, args...)
	if !strings.Contains(rd.Log(), "cleanLastExit=false") {
		t.Fatalf("restart after SIGKILL did not recover abnormally:\n%s", rd.Log())
	}
	c.waitRoute(topic, 2)

	l2 := newTxnListener()
	l2.setAll(primitive.CommitMessageState)
	c.newTxnProducerOn(brokerAddr, group, topic, l2)
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 40*time.Second, "every half message delivered", func() bool {
		for i := range n {
			if _, ok := rec.get(fmt.Sprintf("half-%d", i)); !ok {
				return false
			}
		}
		return true
	})
	// The checker has passed every half and op record: each transaction's
	// last copy was found settled, so no check (and no commit) is left to
	// come. An answer to an older check still in flight meets the settled
	// set, which is what this test checks as well.
	wait.For(t, 20*time.Second, "the checker past every half and op record", func() bool {
		for _, topic := range []string{meta.TransHalfTopic, meta.TransOpHalfTopic} {
			off, ok := c.consumerOffset(brokerAddr, meta.TransCheckGroup, topic, 0)
			if !ok || off != c.maxOffset(brokerAddr, topic, 0) {
				return false
			}
		}
		return true
	})
	rec.mu.Lock()
	dups := rec.dups
	rec.mu.Unlock()
	if dups != 0 {
		t.Fatalf("%d duplicate deliveries", dups)
	}
	// Nothing was parked as checked too often.
	r := c.invoke(brokerAddr, protocol.GetMaxOffset,
		&protocol.QueueRequestHeader{Topic: meta.TransCheckMaxTopic, QueueID: 0}, nil)
	var mh protocol.OffsetResponseHeader
	if err := mh.Decode(r.ExtFields); r.Code != protocol.Success || err != nil || mh.Offset != 0 {
		t.Fatalf("%s max offset: %d %s %v offset %d", meta.TransCheckMaxTopic, r.Code, r.Remark, err, mh.Offset)
	}
}
