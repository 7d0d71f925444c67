package broker_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// ctrlAuthKeys are broker.conf's authentication keys as a Java 5.3
// deployment writes them: on, a SUPER user (authAdmin) and the brokers'
// own credentials (authInner), the same on every broker of the set.
var ctrlAuthKeys = map[string]string{
	"authenticationEnabled":                "true",
	"initAuthenticationUser":               `{"username":"rocketmq","password":"admin-secret"}`,
	"innerClientAuthenticationCredentials": `{"accessKey":"inner","secretKey":"inner-secret"}`,
}

// TestControllerModeAuthenticated (issue 17): three controllers, a
// NameServer and a set of three rocketd brokers in controller mode with
// authenticationEnabled=true, as Java 5.x runs them. The brokers sign what
// they send each other and the controller with their inner credentials:
// the set forms (slaves' GET_BROKER_EPOCH_CACHE, metadata and user copies
// pass their master's checks). A NORMAL user made on the master reaches the
// slaves; the official Go client sends with its credentials, an unsigned
// send and a Go producer without credentials are refused. The master is
// SIGKILLed mid-load: a new master takes signed writes, every acknowledged
// message is read back (signed) from it, the remaining slave's CommitLog
// is the new master's byte for byte, and the old master rejoins as a slave.
func TestControllerModeAuthenticated(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	if raceEnabled {
		// The Go client's pull consumer races with itself (race_on_test.go).
		proc.RerunWithoutRace(t)
		return
	}
	rlog.SetLogLevel("error")
	c := startCtrlCluster(t)
	// The harness's own requests (topic, epoch caches, offsets) are signed
	// by the SUPER user; the Cleanup startCtrlCluster registered closes
	// this client.
	_ = c.rc.Close()
	c.rc = remoting.NewClient(remoting.ClientConfig{BeforeRequest: authAdmin.Sign})

	first := c.addBrokerWith(t, "broker-a", ctrlAuthKeys)
	first.p.WaitLog(t, "the AutoSwitch HA port is NOT authenticated", 10*time.Second)
	c.waitMaster(t, first)
	c.addBrokerWith(t, "broker-b", ctrlAuthKeys)
	c.addBrokerWith(t, "broker-c", ctrlAuthKeys)
	c.waitInSync(t, 1, 2, 3)

	// Unsigned requests are refused by every broker of the set.
	for _, b := range c.brokers {
		r := rawInvoke(t, nil, b.addr, remoting.NewRequest(protocol.GetAllTopicConfig, nil, nil))
		if r.Code != protocol.NoPermission {
			t.Fatalf("%s answered an unsigned GET_ALL_TOPIC_CONFIG with %d %q", b.name, r.Code, r.Remark)
		}
	}

	const topic = "CtrlAuthTopic"
	c.createTopic(t, first, topic) // the slaves copy it with signed requests
	createUser(t, first.addr, "app", "app-pw")
	for _, b := range c.brokers[1:] {
		wait.For(t, 60*time.Second, b.name+" copies user app", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			r, err := c.rc.Invoke(ctx, b.addr, remoting.NewRequest(protocol.AuthGetUser, map[string]string{"username": "app"}, nil))
			return err == nil && r.Code == protocol.Success && strings.Contains(string(r.Body), `"app"`)
		})
	}
	app := primitive.Credentials{AccessKey: "app", SecretKey: "app-pw"}

	// An unsigned send is refused, and so is the Go client's without
	// credentials.
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli()}
	if r := rawInvoke(t, nil, first.addr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte("unsigned"))); r.Code != protocol.NoPermission {
		t.Fatalf("unsigned send answered %d %q", r.Code, r.Remark)
	}
	// Its own instance: the Go client shares one per instance name, the
	// first producer's credentials with it.
	anon := c.goProducer(t, producer.WithGroupName("ctrl_anon_pg"), producer.WithRetry(0), producer.WithInstanceName("ctrl_anon"))
	if r, err := anon.SendSync(context.Background(), primitive.NewMessage(topic, []byte("anonymous"))); err == nil {
		t.Fatalf("a send without credentials was answered %+v", r)
	} else {
		t.Logf("send without credentials: %v", err)
	}

	p := c.goProducer(t, producer.WithCredentials(app))
	load := startLoad(p, topic)
	defer load.close()
	wait.For(t, 60*time.Second, "1000 acknowledged signed sends", func() bool { return load.count() >= 1000 })
	first.p.Kill(t)
	load.markKill()
	before := load.count()
	newMaster := c.waitNewMaster(t, first, 2)
	t.Logf("new master %s elected %v after the kill", newMaster.name, load.sinceKill())
	// The controller's unsigned notification makes it ask at once
	// (signed) rather than at its next poll.
	wait.For(t, 30*time.Second, newMaster.name+" to serve as master", func() bool {
		ec, err := c.epochCache(newMaster.addr)
		return err == nil && ec.BrokerID == 0 && ec.HAServerAddr != ""
	})
	t.Logf("%s serves as master %v after the kill", newMaster.name, load.sinceKill())
	wait.For(t, 90*time.Second, "signed sends acknowledged by the new master", func() bool { return load.count() >= before+300 })
	t.Logf("%d acknowledged before the kill; first acknowledged send %v after it", before, load.firstBackAfterKill())

	first.start(t, c)
	wait.For(t, 60*time.Second, "the old master to rejoin as a slave", func() bool {
		ec, err := c.epochCache(first.addr)
		return err == nil && ec.BrokerID == 1 && ec.HAServerAddr == "" && len(ec.EpochList) > 0 &&
			ec.EpochList[len(ec.EpochList)-1].Epoch >= 2
	})
	acked := load.close()
	got := c.readAcked(t, newMaster, topic, acked, consumer.WithCredentials(app))
	for body := range acked {
		if got[body] == 0 {
			t.Fatalf("acknowledged %q not read back", body)
		}
	}
	t.Logf("%d acknowledged, every one read back from %s with credentials", len(acked), newMaster.name)

	// Replication under authentication: both slaves reach the new
	// master's end and hold its bytes.
	for _, b := range c.brokers {
		if b == newMaster {
			continue
		}
		wait.For(t, 60*time.Second, b.name+"'s CommitLog to reach the new master's end", func() bool {
			s, err1 := c.epochCache(b.addr)
			m, err2 := c.epochCache(newMaster.addr)
			return err1 == nil && err2 == nil && s.MaxOffset == m.MaxOffset
		})
		sameLog(t, filepath.Join(newMaster.dir, "store", "commitlog"), filepath.Join(b.dir, "store", "commitlog"))
	}
	wait.For(t, 30*time.Second, "a SyncStateSet of three again", func() bool {
		mi, err := c.replicaInfo()
		return err == nil && slices.Equal(slices.Sorted(slices.Values(mi.SyncStateSet)), []int64{1, 2, 3})
	})
}
