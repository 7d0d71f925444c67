package ha_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// Multi-process replication tests: a NameServer, a master and a slave run
// as separate rocketd processes on loopback, each with its own data
// directory and ports.

func init() { rlog.SetLogLevel("error") }

func invoke(rc *remoting.Client, addr string, code protocol.RequestCode, h protocol.ExtHeader, body []byte) (*remoting.Command, error) {
	var ext map[string]string
	if h != nil {
		ext = protocol.Ext(h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return rc.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
}

// haCluster is the three processes.
type haCluster struct {
	bin                          string
	nsAddr, masterAddr, slaveAdr string
	ns, master, slave            *proc.Process
	masterDir, slaveDir          string
}

func brokerConf(t *testing.T, dir string, kv map[string]string) string {
	t.Helper()
	var b strings.Builder
	for k, v := range kv {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	conf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

func startHACluster(t *testing.T, role string, extra ...string) *haCluster {
	t.Helper()
	c := &haCluster{bin: proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")}
	nsPort := proc.FreePort(t)
	c.nsAddr = "127.0.0.1:" + strconv.Itoa(nsPort)
	c.ns = proc.StartNamed(t, "namesrv", c.bin, "namesrv", "--port", strconv.Itoa(nsPort),
		"--kv-config", filepath.Join(t.TempDir(), "kvConfig.json"))
	c.ns.WaitLog(t, "NameServer ready", 20*time.Second)

	common := func(dir string, port, haPort int) map[string]string {
		return map[string]string{
			"brokerClusterName": "HACluster", "brokerName": "ha-broker", "brokerIP1": "127.0.0.1",
			"namesrvAddr": c.nsAddr, "listenPort": strconv.Itoa(port), "haListenPort": strconv.Itoa(haPort),
			"storePathRootDir": filepath.Join(dir, "store"), "mapedFileSizeCommitLog": strconv.Itoa(4 << 20),
			"haSendHeartbeatInterval": "1000",
		}
	}
	c.masterDir, c.slaveDir = t.TempDir(), t.TempDir()
	mport := proc.FreeBrokerPort(t, nsPort)
	sport := proc.FreeBrokerPort(t, nsPort, mport, mport+1, mport-2)
	c.masterAddr, c.slaveAdr = "127.0.0.1:"+strconv.Itoa(mport), "127.0.0.1:"+strconv.Itoa(sport)
	mkv := common(c.masterDir, mport, proc.FreePort(t))
	mkv["brokerId"], mkv["brokerRole"] = "0", role
	for i := 0; i+1 < len(extra); i += 2 {
		mkv[extra[i]] = extra[i+1]
	}
	c.master = proc.StartNamed(t, "master", c.bin, "broker", "-c", brokerConf(t, c.masterDir, mkv))
	c.master.WaitLog(t, "broker ready", 20*time.Second)
	skv := common(c.slaveDir, sport, proc.FreePort(t))
	skv["brokerId"], skv["brokerRole"] = "1", "SLAVE"
	c.slave = proc.StartNamed(t, "slave", c.bin, "broker", "-c", brokerConf(t, c.slaveDir, skv))
	c.slave.WaitLog(t, "broker ready", 20*time.Second)
	return c
}

// TestProcessSyncMasterKilledMidLoad: the official Go client sends to a
// SYNC_MASTER; the master is SIGKILLed mid-load; every message the client
// saw acknowledged (SEND_OK) is on the slave byte-identical, and a Go
// client consumer reading through the NameServer gets them all from the
// slave.
func TestProcessSyncMasterKilledMidLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	if raceEnabled {
		// The Go client's pull consumer races with itself (race_on_test.go):
		// run this test in a build without the race detector instead.
		proc.RerunWithoutRace(t)
		return
	}
	c := startHACluster(t, "SYNC_MASTER")
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	const topic = "HAKillTopic"
	h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 4, WriteQueueNums: 4,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	if r, err := invoke(rc, c.masterAddr, protocol.UpdateAndCreateTopic, &h, nil); err != nil || r.Code != protocol.Success {
		t.Fatalf("create topic: %v %+v", err, r)
	}
	// The slave copies the topic from the master (metadata sync).
	wait.For(t, 30*time.Second, "the slave to copy the topic config", func() bool {
		r, err := invoke(rc, c.slaveAdr, protocol.GetAllTopicConfig, nil, nil)
		return err == nil && r.Code == protocol.Success && bytes.Contains(r.Body, []byte(topic))
	})
	// A slave refuses sends.
	sh := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli()}
	if r, err := invoke(rc, c.slaveAdr, protocol.SendMessage, &sh, []byte("x")); err != nil || r.Code != protocol.ServiceNotAvailable {
		t.Fatalf("send to slave: %v %+v, want SERVICE_NOT_AVAILABLE", err, r)
	}

	p, err := producer.NewDefaultProducer(producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName("ha_pg"), producer.WithRetry(0), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	// Until the slave has connected and reported, the master answers
	// SLAVE_NOT_AVAILABLE.
	wait.For(t, 30*time.Second, "a SEND_OK (slave in sync)", func() bool {
		r, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("warm-up")))
		return err == nil && r.Status == primitive.SendOK
	})

	var (
		mu    sync.Mutex
		acked = map[string]bool{"warm-up": true}
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("w%d-m%06d-%s", w, i, strings.Repeat("x", i%200))
				r, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body)))
				if err == nil && r.Status == primitive.SendOK {
					mu.Lock()
					acked[body] = true
					mu.Unlock()
				}
				if err != nil {
					time.Sleep(10 * time.Millisecond) // the master is gone
				}
			}
		}()
	}
	wait.For(t, 60*time.Second, "2000 acknowledged sends", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 2000
	})
	c.master.Kill(t)
	close(stop)
	wg.Wait()
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	t.Logf("%d sends acknowledged before the SIGKILL", n)

	// The slave's CommitLog is a byte-identical prefix of the master's.
	samePrefix(t, filepath.Join(c.masterDir, "store", "commitlog"), filepath.Join(c.slaveDir, "store", "commitlog"))

	// A consumer through the NameServer: the master is gone from the
	// route, so it pulls from the slave.
	pc, err := consumer.NewPullConsumer(consumer.WithNameServer([]string{c.nsAddr}), consumer.WithGroupName("ha_cg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	defer pc.Shutdown()
	got := map[string]bool{}
	var lastErr error
	defer func() {
		if t.Failed() {
			t.Logf("consumer got %d of %d acknowledged; last pull error: %v", len(got), n, lastErr)
		}
	}()
	wait.For(t, 60*time.Second, "the consumer to read every acknowledged message from the slave", func() bool {
		mqs, err := pc.GetTopicRouteInfo(topic)
		if err != nil || len(mqs) == 0 {
			return false
		}
		for _, mq := range mqs {
			// Pull up to the slave's end only: a pull at the end is held
			// (long polling) until its timeout.
			var maxOff protocol.OffsetResponseHeader
			r, err := invoke(rc, c.slaveAdr, protocol.GetMaxOffset, &protocol.QueueRequestHeader{Topic: topic, QueueID: int32(mq.QueueId)}, nil)
			if err != nil || r.Code != protocol.Success || maxOff.Decode(r.ExtFields) != nil {
				lastErr = fmt.Errorf("slave max offset: %v %+v", err, r)
				return false
			}
			for off := int64(0); off < maxOff.Offset; {
				res, err := pc.PullFrom(context.Background(), mq, off, 32)
				if err != nil {
					lastErr = err
					break
				}
				if res.Status != primitive.PullFound {
					lastErr = fmt.Errorf("queue %d offset %d: pull status %v", mq.QueueId, off, res.Status)
					break
				}
				for _, m := range res.GetMessageExts() {
					got[string(m.Body)] = true
					if m.StoreHost != c.masterAddr {
						t.Errorf("message %s has store host %s, want the master's %s", m.MsgId, m.StoreHost, c.masterAddr)
					}
				}
				off = res.NextBeginOffset
			}
		}
		for b := range acked {
			if !got[b] {
				return false
			}
		}
		return true
	})
	_ = c.slave.Stop(t)
	if !strings.Contains(c.slave.Log(), "replicating from master") {
		t.Errorf("slave never logged replication")
	}
}

// samePrefix checks that every byte the slave's CommitLog holds (up to its
// last non-zero byte) equals the master's at the same offset.
func samePrefix(t *testing.T, mdir, sdir string) {
	t.Helper()
	files, err := os.ReadDir(sdir)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		sb, err := os.ReadFile(filepath.Join(sdir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		mb, err := os.ReadFile(filepath.Join(mdir, f.Name()))
		if err != nil {
			t.Fatalf("slave segment %s: %v", f.Name(), err)
		}
		end := len(sb)
		for end > 0 && sb[end-1] == 0 {
			end--
		}
		if end > len(mb) || !bytes.Equal(sb[:end], mb[:end]) {
			t.Fatalf("slave segment %s (%d bytes of data) is not a prefix of the master's", f.Name(), end)
		}
		total += end
	}
	if total == 0 {
		t.Fatal("the slave holds no data")
	}
}

// TestProcessSlavePausedFlushSlaveTimeout: with the slave process stopped
// (SIGSTOP) a SYNC_MASTER answers FLUSH_SLAVE_TIMEOUT after
// syncFlushTimeout; once it continues, sends are SEND_OK again and the
// slave has everything.
func TestProcessSlavePausedFlushSlaveTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startHACluster(t, "SYNC_MASTER", "syncFlushTimeout", "500")
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "PauseTopic", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
	send := func(body string) int32 {
		r, err := invoke(rc, c.masterAddr, protocol.SendMessage, &h, []byte(body))
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		return r.Code
	}
	wait.For(t, 30*time.Second, "SUCCESS with the slave in sync", func() bool { return send("warm-up") == protocol.Success })
	if err := c.slave.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill(2) returns before every thread of the slave has stopped: wait
	// until the kernel reports the process stopped, or the slave may still
	// ack the next message.
	wait.For(t, 10*time.Second, "slave process stopped", func() bool { return processStopped(c.slave.Pid()) })
	start := time.Now()
	if code := send("while paused"); code != protocol.FlushSlaveTimeout {
		t.Fatalf("send with the slave paused: code %d, want FLUSH_SLAVE_TIMEOUT", code)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("answered after %v, before syncFlushTimeout", d)
	}
	if err := c.slave.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "SUCCESS after the slave continued", func() bool { return send("after") == protocol.Success })
	_ = c.slave.Stop(t)
	_ = c.master.Stop(t)
	samePrefix(t, filepath.Join(c.masterDir, "store", "commitlog"), filepath.Join(c.slaveDir, "store", "commitlog"))
}

// processStopped reports whether /proc says the process is stopped by a
// signal (state T).
func processStopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}
