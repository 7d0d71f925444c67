package broker_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
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
	confText := "mappedFileSizeCommitLog=16777216\nmappedFileSizeConsumeQueue=60000\nmessageDelayLevel=2s 3s 4s\n"
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
	for i := range 9 {
		level := 1 + i%3
		props := "TAGS\x01t\x02" + message.PropertyDelayTimeLevel + "\x01" + strconv.Itoa(level) + "\x02"
		send("delay-"+strconv.Itoa(i), props, now.Add(restartLevels[level-1]).UnixMilli())
	}
	for i := range 9 {
		at := now.Add(time.Duration(1500+i*400) * time.Millisecond).UnixMilli()
		props := "TAGS\x01t\x02" + message.PropertyTimerDeliverMS + "\x01" + strconv.FormatInt(at, 10) + "\x02"
		send("timer-"+strconv.Itoa(i), props, at)
	}
	// Stop while some are delivered and the others pending.
	time.Sleep(time.Until(now.Add(2500 * time.Millisecond)))
	rc.CloseConn(brokerAddr)
	stopRocketd(t, rd, sig)

	rd = start()
	defer stopRocketd(t, rd, syscall.SIGTERM)
	var got map[string][]int64
	deadline := time.Now().Add(20 * time.Second)
	for {
		got = pullQueue0(t, rc, brokerAddr, topic)
		if len(got) == len(due) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart: %d of %d delivered: %v\n%s", len(got), len(due), got, rd.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a late duplicate would show now
	got = pullQueue0(t, rc, brokerAddr, topic)
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
