package broker_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestHalfCountsSurviveKill: three half messages stored and one
// committed, the rocketd process killed with SIGKILL before any save of
// config/transactionMetrics (transactionMetricFlushInterval=1h) and
// started again on the same data: rocketmq_half_messages of the topic is
// 2 again, rebuilt from the half and op queues. Restarted cleanly with
// transactionMetricFlushInterval=100, a commit takes it to 1 and the
// periodic flush, not a close, writes 1 to the file.
func TestHalfCountsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rocketd")
	}
	mPort := proc.FreePort(t)
	conf := func(interval string) string {
		return "metricsExporterType=PROM\nmetricsPromExporterPort=" + strconv.Itoa(mPort) +
			"\ntransactionMetricFlushInterval=" + interval + "\n"
	}
	sp := newServeProc(t, conf("3600000"))
	mAddr := "127.0.0.1:" + strconv.Itoa(mPort)
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	c := &cluster{t: t, dir: sp.dir, nsAddr: sp.nsAddr, rc: rc}
	rd := startRocketd(t, sp.bin, sp.args...)

	topic := uniq(t, "HalfKill")
	th := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	if r := c.invoke(sp.addr, protocol.UpdateAndCreateTopic, &th, nil); r.Code != protocol.Success {
		t.Fatalf("create topic: %d %s", r.Code, r.Remark)
	}
	half := message.SetProperty("", message.PropertyTransactionPrepared, "true")
	half = message.SetProperty(half, message.PropertyProducerGroup, "pg")
	commit := func(rh protocol.SendMessageResponseHeader) {
		t.Helper()
		_, off, err := message.ParseOffsetMsgID(rh.MsgID)
		if err != nil {
			t.Fatal(err)
		}
		eh := protocol.EndTransactionRequestHeader{ProducerGroup: "pg", TranStateTableOffset: rh.QueueOffset,
			CommitLogOffset: off, CommitOrRollback: protocol.TransactionCommitType, MsgID: rh.MsgID}
		if resp := c.invoke(sp.addr, protocol.EndTransaction, &eh, nil); resp.Code != protocol.Success {
			t.Fatalf("end transaction: %d %s", resp.Code, resp.Remark)
		}
	}
	h1 := c.sendRawMsg(sp.addr, topic, half, "h1")
	h2 := c.sendRawMsg(sp.addr, topic, half, "h2")
	c.sendRawMsg(sp.addr, topic, half, "h3")
	commit(h1)

	halfCount := func() (float64, int) {
		return sumOf(scrape(t, mAddr), "rocketmq_half_messages", "topic="+topic)
	}
	if v, n := halfCount(); n != 1 || v != 2 {
		t.Fatalf("rocketmq_half_messages %v over %d series, want 2 in one", v, n)
	}
	file := filepath.Join(sp.data, "store", "config", "transactionMetrics")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("%s before any save: %v", file, err)
	}

	stopRocketd(t, rd, syscall.SIGKILL)
	rc.CloseConn(sp.addr)
	rc.CloseConn(sp.nsAddr)
	rd = startRocketd(t, sp.bin, sp.args...)
	if !strings.Contains(rd.Log(), "cleanLastExit=false") || !strings.Contains(rd.Log(), "half-message counts rebuilt") {
		t.Fatalf("restart after SIGKILL did not recover abnormally and rebuild the counts:\n%s", rd.Log())
	}
	if v, n := halfCount(); n != 1 || v != 2 {
		t.Fatalf("after SIGKILL: rocketmq_half_messages %v over %d series, want 2 in one", v, n)
	}

	// The periodic flush.
	if err := os.WriteFile(filepath.Join(sp.dir, "broker.conf"),
		[]byte("brokerIP1=127.0.0.1\nmapedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\n"+conf("100")), 0o644); err != nil {
		t.Fatal(err)
	}
	stopRocketd(t, rd, syscall.SIGTERM)
	rc.CloseConn(sp.addr)
	rc.CloseConn(sp.nsAddr)
	rd = startRocketd(t, sp.bin, sp.args...)
	defer stopRocketd(t, rd, syscall.SIGTERM)
	commit(h2)
	if v, n := halfCount(); n != 1 || v != 1 {
		t.Fatalf("after a commit: rocketmq_half_messages %v over %d series, want 1 in one", v, n)
	}
	wait.For(t, 10*time.Second, "count 1 in "+file, func() bool {
		b, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		var f struct {
			TransactionCount map[string]struct{ Count int64 } `json:"transactionCount"`
		}
		return json.Unmarshal(b, &f) == nil && f.TransactionCount[topic].Count == 1
	})
}
