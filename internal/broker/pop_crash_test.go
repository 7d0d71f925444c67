package broker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// Two messages popped, one acked, the rocketd process killed with SIGKILL
// and started again on the same data: the unacked one becomes visible
// again (through the pop retry topic, reconsume count 1) once its
// invisible time is over, the acked one never comes back.
func TestPopSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rocketd")
	}
	sp := newServeProc(t, "reviveInterval=100\nflushConsumerOffsetInterval=100\n")
	bin, nsAddr, addr, dir, data, args := sp.bin, sp.nsAddr, sp.addr, sp.dir, sp.data, sp.args
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	c := &cluster{t: t, dir: dir, nsAddr: nsAddr, rc: rc}
	rd := startRocketd(t, bin, args...)

	topic, group := uniq(t, "PopK"), uniq(t, "PopG")
	th := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	if r := c.invoke(addr, protocol.UpdateAndCreateTopic, &th, nil); r.Code != protocol.Success {
		t.Fatalf("create topic: %d %s", r.Code, r.Remark)
	}
	c.sendRaw(addr, topic, "TagA", "acked", "unacked")
	var got []popMsg
	wait.For(t, 10*time.Second, "both popped", func() bool {
		got = append(got, c.popRaw(addr, popReq{group: group, topic: topic, queue: 0, invisible: 4000}).msgs...)
		return len(got) >= 2
	})
	popped := time.Now()
	for _, m := range got {
		if string(m.rec.Body) == "acked" {
			c.ackRaw(addr, group, m)
		}
	}
	// The group's pop offset is on disk (consumerOffset.json, every 100 ms).
	offsets := filepath.Join(data, "store", "config", "consumerOffset.json")
	wait.For(t, 10*time.Second, "pop offset persisted", func() bool {
		b, _ := os.ReadFile(offsets)
		return regexp.MustCompile(fmt.Sprintf(`"%s@%s":\{0:2\s`, topic, group)).Match(b)
	})

	stopRocketd(t, rd, syscall.SIGKILL)
	rc.CloseConn(addr)
	rc.CloseConn(nsAddr)
	rd = startRocketd(t, bin, args...)
	defer stopRocketd(t, rd, syscall.SIGTERM)
	if !strings.Contains(rd.Log(), "cleanLastExit=false") {
		t.Fatalf("restart after SIGKILL did not recover abnormally:\n%s", rd.Log())
	}

	var back []popMsg
	wait.For(t, 20*time.Second, "the unacked message back", func() bool {
		back = append(back, c.popRaw(addr, popReq{group: group, topic: topic, queue: -1, invisible: 60_000, pollTime: 500}).msgs...)
		return len(back) > 0
	})
	if time.Since(popped) < 4*time.Second {
		t.Fatalf("redelivered %v after the pop, before its 4 s invisible time", time.Since(popped))
	}
	if len(back) != 1 || string(back[0].rec.Body) != "unacked" || back[0].rec.ReconsumeTimes != 1 {
		t.Fatalf("after the restart popped %v", popBodies(back))
	}
	// Both messages shared one check point, now resolved: the retry topic
	// holds the unacked message only.
	r := c.invoke(addr, protocol.GetMaxOffset, &protocol.QueueRequestHeader{Topic: pop.RetryTopic(topic, group, false), QueueID: 0}, nil)
	var mh protocol.OffsetResponseHeader
	if err := mh.Decode(r.ExtFields); r.Code != protocol.Success || err != nil || mh.Offset != 1 {
		t.Fatalf("retry topic max offset: %d %s %v offset %d", r.Code, r.Remark, err, mh.Offset)
	}
}
