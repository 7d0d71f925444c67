package broker_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// startRocketd runs `rocketd serve` and waits until its broker is ready.
func startRocketd(t *testing.T, bin string, args ...string) *proc.Process {
	t.Helper()
	p := proc.Start(t, bin, args...)
	p.WaitLog(t, "broker ready", 20*time.Second)
	return p
}

// stopRocketd ends p with sig (SIGTERM or SIGKILL) and waits for it; after
// SIGTERM the exit must be clean.
func stopRocketd(t *testing.T, p *proc.Process, sig syscall.Signal) {
	t.Helper()
	if sig == syscall.SIGKILL {
		p.Kill(t)
		return
	}
	if err := p.Stop(t); err != nil {
		t.Fatalf("rocketd exit after SIGTERM: %v\n%s", err, p.Log())
	}
}

// TestDelayedDeliverySurvivesRestart: messages pending on several delay
// levels and timers when a rocketd process stops (SIGTERM, and SIGKILL)
// are all delivered after the restart, none before it is due. A clean stop
// delivers nothing twice; after SIGKILL duplicates are allowed (at least
// once) and logged.
func TestDelayedDeliverySurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rocketd processes")
	}
	bin := proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			restartWhilePending(t, bin, sig)
		})
	}
}

// restartLevels are the test broker's delay levels (level 1 = 2 s...).
var restartLevels = []time.Duration{2 * time.Second, 3 * time.Second, 4 * time.Second}

func restartWhilePending(t *testing.T, bin string, sig syscall.Signal) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	// delayOffset.json is saved every 100 ms: the test reads the delay
	// levels' progress from it (GET_ALL_DELAY_OFFSET).
	confText := "mappedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\nmessageDelayLevel=2s 3s 4s\n" +
		"flushDelayOffsetInterval=100\n"
	if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
		t.Fatal(err)
	}
	brokerAddr := ""
	start := func() *proc.Process {
		// The broker's HA port is listenPort+1: keep it free of the NameServer too.
		nsPort := proc.FreePort(t)
		brokerPort := proc.FreeBrokerPort(t, nsPort)
		brokerAddr = "127.0.0.1:" + strconv.Itoa(brokerPort)
		return startRocketd(t, bin, "serve", "--data", filepath.Join(dir, "data"), "--namesrv-port", strconv.Itoa(nsPort),
			"--listen-port", strconv.Itoa(brokerPort), "--grpc-port", strconv.Itoa(proc.FreePort(t)), "-c", conf)
	}
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	c := &cluster{t: t, rc: rc}
	const topic = "DelayRestart"

	rd := start()
	due := map[string]int64{} // body -> earliest acceptable store time
	send := func(body, props string, earliest int64) {
		h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: props}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := rc.Invoke(ctx, brokerAddr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte(body)))
		if err != nil || resp.Code != protocol.Success {
			t.Fatalf("send %s: %v %+v", body, err, resp)
		}
		due[body] = earliest
	}
	now := time.Now()
	var early []string // due within 2.5 s: delivered before the stop
	lastTimer := int64(0)
	for i := range 9 {
		level := 1 + i%3
		props := "TAGS\x01t\x02" + message.PropertyDelayTimeLevel + "\x01" + strconv.Itoa(level) + "\x02"
		body := "delay-" + strconv.Itoa(i)
		send(body, props, now.Add(restartLevels[level-1]).UnixMilli())
		if level == 1 {
			early = append(early, body)
		}
	}
	for i := range 9 {
		at := now.Add(time.Duration(1500+i*400) * time.Millisecond).UnixMilli()
		props := "TAGS\x01t\x02" + message.PropertyTimerDeliverMS + "\x01" + strconv.FormatInt(at, 10) + "\x02"
		body := "timer-" + strconv.Itoa(i)
		send(body, props, at)
		if at <= now.Add(2500*time.Millisecond).UnixMilli() {
			early = append(early, body)
		}
		lastTimer = max(lastTimer, at)
	}
	// Stop while some are delivered (those due within 2.5 s) and the
	// others pending (level 3 is due at 4 s).
	wait.For(t, 20*time.Second, "the messages due within 2.5 s", func() bool {
		got := pullQueue0(t, rc, brokerAddr, topic)
		for _, body := range early {
			if _, ok := got[body]; !ok {
				return false
			}
		}
		return true
	})
	rc.CloseConn(brokerAddr)
	stopRocketd(t, rd, sig)

	rd = start()
	defer stopRocketd(t, rd, syscall.SIGTERM)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("rocketd after the restart:\n%s", rd.Log())
		}
	})
	wait.For(t, 20*time.Second, "every message delivered after the restart", func() bool {
		return len(pullQueue0(t, rc, brokerAddr, topic)) == len(due)
	})
	// The delay levels and the timer have saved progress past everything
	// they hold: nothing is left for them to deliver (again).
	wait.For(t, 20*time.Second, "the delay levels and the timer past every message", func() bool {
		r := c.invoke(brokerAddr, protocol.GetAllDelayOffset, nil, nil)
		var d protocol.DelayOffsetTable
		if r.Code != protocol.Success || protocol.UnmarshalFastJSON(r.Body, &d) != nil {
			return false
		}
		for level := range len(restartLevels) {
			if d.OffsetTable[int32(level+1)] != c.maxOffset(brokerAddr, meta.ScheduleTopic, int32(level)) {
				return false
			}
		}
		r = c.invoke(brokerAddr, protocol.GetTimerCheckPoint, nil, nil)
		if r.Code != protocol.Success {
			return false
		}
		cp, err := protocol.DecodeTimerCheckpoint(r.Body)
		return err == nil && cp.LastReadTimeMs > lastTimer &&
			cp.LastTimerQueueOffset == c.maxOffset(brokerAddr, timer.Topic, 0)
	})
	got := pullQueue0(t, rc, brokerAddr, topic)
	dups := 0
	for body, stores := range got {
		if _, ok := due[body]; !ok {
			t.Errorf("unexpected message %q", body)
		}
		for _, ts := range stores {
			if ts < due[body] {
				t.Errorf("%s stored at %d, before due %d", body, ts, due[body])
			}
		}
		dups += len(stores) - 1
	}
	if sig == syscall.SIGTERM && dups != 0 {
		t.Errorf("clean restart delivered %d duplicates: %v", dups, got)
	}
	t.Logf("%v: %d messages, %d duplicates", sig, len(due), dups)
	rc.CloseConn(brokerAddr)
}

// pullQueue0 pulls queue 0 of topic from offset 0 and returns body ->
// store timestamps.
func pullQueue0(t *testing.T, rc *remoting.Client, addr, topic string) map[string][]int64 {
	t.Helper()
	out := map[string][]int64{}
	offset := int64(0)
	for range 100 {
		h := protocol.PullMessageRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 0, QueueOffset: offset,
			MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: "*"}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := rc.Invoke(ctx, addr, remoting.NewRequest(protocol.PullMessage, protocol.Ext(&h), nil))
		cancel()
		if err != nil {
			t.Fatalf("pull: %v", err)
		}
		if resp.Code != protocol.Success {
			return out
		}
		var sc message.Scanner
		sc.Reset(resp.Body)
		n := 0
		for sc.Next() {
			r := sc.Record()
			out[string(r.Body)] = append(out[string(r.Body)], r.StoreTimestamp)
			offset = r.QueueOffset + 1
			n++
		}
		if n == 0 {
			return out
		}
	}
	return out
}
