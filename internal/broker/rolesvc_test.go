package broker_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// storedBy reads every message of topic's queue 0 from s: body -> the
// store host of each copy.
func storedBy(t *testing.T, s *store.Store, topic string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for off := s.MinOffset(topic, 0); off < s.MaxOffset(topic, 0); {
		res, err := s.GetMessage("test", topic, 0, off, 32, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != store.Found {
			res.Release()
			t.Fatalf("read %s@%d: %v", topic, off, res.Status)
		}
		for _, m := range res.Messages {
			for _, r := range primitive.DecodeMessage(m.Bytes) {
				got[string(r.Body)] = append(got[string(r.Body)], r.StoreHost)
			}
		}
		off = res.NextBeginOffset
		res.Release()
	}
	return got
}

// TestMasterServicesFollowRole: the delay-level delivery, the timer and
// the transaction check-back follow a runtime role change. Sent to the
// old master: a level-1 delay message and a timer message it delivers
// before the switch, a level-2 one and a timer message due after the
// switch, and a half message whose producer answers its checks "unknown"
// until after the switch. The promoted slave delivers the later two and
// commits the half message on its check-back, each once, and delivers
// none of the first two again (it went on from the delay offsets and the
// timer checkpoint it copied); the demoted master runs none of the
// services.
func TestMasterServicesFollowRole(t *testing.T) {
	const later = 8 * time.Second // due after the switch, with margin
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.MessageDelayLevel = "1s 8s" + strings.Repeat(" 1s", 16)
		// Checked once it is as old as the late ones: by the new master
		// only, and the old one puts nothing while the roles switch.
		bc.TransactionTimeout = later
		bc.TransactionCheckInterval = 300 * time.Millisecond
		// delayOffset.json, which the slave copies, follows closely.
		bc.FlushDelayOffsetInterval = 100 * time.Millisecond
	})
	topic, group := uniq(t, "RoleSvc"), uniq(t, "tpg")
	c.createTopic(topic, 1)
	a := c.b
	b := c.startSlave(t)
	if d, tx := broker.MasterServicesRunning(b); d || tx {
		t.Fatalf("slave runs delivery %v, check-back %v", d, tx)
	}
	l := newTxnListener()
	p := c.newTxnProducer(group, topic, l)
	plain := c.newProducer()
	t.Cleanup(func() { _ = plain.Shutdown() })
	send := func(m *primitive.Message) {
		t.Helper()
		res, err := plain.SendSync(context.Background(), m)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", m.Body, res, err)
		}
	}
	timed := func(body string, due time.Time) *primitive.Message {
		m := primitive.NewMessage(topic, []byte(body))
		m.WithProperty(message.PropertyTimerDeliverMS, strconv.FormatInt(due.UnixMilli(), 10))
		return m
	}

	// Delivered by the old master before the switch.
	earlyDue := time.Now().Add(time.Second)
	send(primitive.NewMessage(topic, []byte("delay-early")).WithDelayTimeLevel(1))
	send(timed("timer-early", earlyDue))
	wait.For(t, 20*time.Second, "the early ones delivered by the old master", func() bool {
		got := storedBy(t, a.Store(), topic)
		return len(got["delay-early"]) == 1 && len(got["timer-early"]) == 1
	})
	// Due after the switch; the half message stays unknown until then.
	sent := time.Now()
	send(primitive.NewMessage(topic, []byte("delay-late")).WithDelayTimeLevel(2))
	send(timed("timer-late", sent.Add(later)))
	sendTxn(t, p, topic, "never-half", primitive.UnkonwnState)

	// The slave holds everything and the old master's progress: level 1
	// past delay-early, the timer past timer-early.
	wait.For(t, 10*time.Second, "the slave's copy of the master's log and progress", func() bool {
		if b.Store().CommitLogMaxOffset() != a.Store().CommitLogMaxOffset() {
			return false
		}
		r := c.invoke(b.Addr(), protocol.GetAllDelayOffset, nil, nil)
		var d protocol.DelayOffsetTable
		if r.Code != protocol.Success || protocol.UnmarshalFastJSON(r.Body, &d) != nil || d.OffsetTable[1] < 1 {
			return false
		}
		body, err := os.ReadFile(filepath.Join(meta.ConfigDir(b.Store().Dir()), broker.MasterTimerCheckpointFile))
		if err != nil {
			return false
		}
		cp, err := protocol.DecodeTimerCheckpoint(body)
		return err == nil && cp.LastTimerQueueOffset >= 1 && cp.LastReadTimeMs > earlyDue.UnixMilli()
	})
	t.Logf("slave caught up %v after the late sends", time.Since(sent))
	switchRoles(t, a, b, 1)
	t.Logf("switched %v after the late sends", time.Since(sent))
	if time.Since(sent) >= later {
		t.Fatalf("the switch took %v, the late messages may have been delivered before it", time.Since(sent))
	}
	if got := storedBy(t, a.Store(), topic); len(got["delay-late"])+len(got["timer-late"])+len(got["never-half"]) != 0 {
		t.Fatalf("delivered before the switch: %v", got)
	}
	if d, tx := broker.MasterServicesRunning(a); d || tx {
		t.Fatalf("demoted master still runs delivery %v, check-back %v", d, tx)
	}
	if d, tx := broker.MasterServicesRunning(b); !d || !tx {
		t.Fatalf("promoted slave runs delivery %v, check-back %v", d, tx)
	}

	wait.For(t, 30*time.Second, "the late ones delivered by the new master", func() bool {
		got := storedBy(t, b.Store(), topic)
		return len(got["delay-late"]) > 0 && len(got["timer-late"]) > 0
	})
	got := storedBy(t, b.Store(), topic)
	for body, host := range map[string]string{"delay-early": a.Addr(), "timer-early": a.Addr(),
		"delay-late": b.Addr(), "timer-late": b.Addr()} {
		if hosts := got[body]; len(hosts) != 1 || hosts[0] != host {
			t.Errorf("%s stored by %v, want once by %s", body, hosts, host)
		}
	}
	if at := time.Now(); at.Before(sent.Add(later)) {
		t.Errorf("late messages delivered at %v, before they were due (%v)", at, sent.Add(later))
	}
	// The new master's check-back goes on from the old master's progress:
	// it checks the half message (a copy with the check count, stored by
	// the new master, appended to the half queue).
	wait.For(t, 30*time.Second, "the new master's check of the half message", func() bool {
		return len(storedBy(t, b.Store(), meta.TransHalfTopic)["never-half"]) > 1
	})
	if hosts := storedBy(t, b.Store(), meta.TransHalfTopic)["never-half"]; hosts[0] != a.Addr() || hosts[1] != b.Addr() {
		t.Fatalf("half message copies stored by %v, want the old master's first, then the new master's", hosts)
	}
}
