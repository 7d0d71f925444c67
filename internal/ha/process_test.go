package ha_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
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
)

// Multi-process replication tests: a NameServer, a master and a slave run
// as separate rocketd processes on loopback, each with its own data
// directory and ports.

func init() { rlog.SetLogLevel("error") }

// buildRocketd compiles cmd/rocketd into a temporary directory.
func buildRocketd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rocketd")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/rocketd").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// logBuffer collects a process's stderr.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type process struct {
	name   string
	cmd    *exec.Cmd
	log    *logBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // its exit status, set before exited closes
}

func start(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(bin, args...), log: &logBuffer{}, exited: make(chan struct{})}
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("--- %s log:\n%s", name, p.log.String())
		}
	})
	return p
}

// waitLog waits until the process logged text.
func (p *process) waitLog(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(p.log.String(), text) {
		select {
		case <-p.exited:
			t.Fatalf("%s exited (%v) before %q:\n%s", p.name, p.err, text, p.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q after 20 s:\n%s", p.name, text, p.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the process with SIGTERM (clean shutdown) and waits.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not stop", p.name)
	}
}

func poll(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

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
	ns, master, slave            *process
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
	c := &haCluster{bin: buildRocketd(t)}
	nsPort := freePort(t)
	c.nsAddr = "127.0.0.1:" + strconv.Itoa(nsPort)
	c.ns = start(t, "namesrv", c.bin, "namesrv", "--port", strconv.Itoa(nsPort),
		"--kv-config", filepath.Join(t.TempDir(), "kvConfig.json"))
	c.ns.waitLog(t, "NameServer ready")

	common := func(dir string, port, haPort int) map[string]string {
		return map[string]string{
			"brokerClusterName": "HACluster", "brokerName": "ha-broker", "brokerIP1": "127.0.0.1",
			"namesrvAddr": c.nsAddr, "listenPort": strconv.Itoa(port), "haListenPort": strconv.Itoa(haPort),
			"storePathRootDir": filepath.Join(dir, "store"), "mapedFileSizeCommitLog": strconv.Itoa(4 << 20),
			"haSendHeartbeatInterval": "1000",
		}
	}
	c.masterDir, c.slaveDir = t.TempDir(), t.TempDir()
	mport, sport := freePort(t), freePort(t)
	c.masterAddr, c.slaveAdr = "127.0.0.1:"+strconv.Itoa(mport), "127.0.0.1:"+strconv.Itoa(sport)
	mkv := common(c.masterDir, mport, freePort(t))
	mkv["brokerId"], mkv["brokerRole"] = "0", role
	for i := 0; i+1 < len(extra); i += 2 {
		mkv[extra[i]] = extra[i+1]
	}
	c.master = start(t, "master", c.bin, "broker", "-c", brokerConf(t, c.masterDir, mkv))
	c.master.waitLog(t, "broker ready")
	skv := common(c.slaveDir, sport, freePort(t))
	skv["brokerId"], skv["brokerRole"] = "1", "SLAVE"
	c.slave = start(t, "slave", c.bin, "broker", "-c", brokerConf(t, c.slaveDir, skv))
	c.slave.waitLog(t, "broker ready")
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
		out, err := exec.Command("go", "test", "-count=1", "-run", "^TestProcessSyncMasterKilledMidLoad$", ".").CombinedOutput()
		if err != nil {
			t.Fatalf("test without -race: %v\n%s", err, out)
		}
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
	poll(t, "the slave to copy the topic config", 30*time.Second, func() bool {
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
	poll(t, "a SEND_OK (slave in sync)", 30*time.Second, func() bool {
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
	poll(t, "2000 acknowledged sends", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 2000
	})
	if err := c.master.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.master.exited
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
	poll(t, "the consumer to read every acknowledged message from the slave", 60*time.Second, func() bool {
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
	c.slave.stop(t)
	if !strings.Contains(c.slave.log.String(), "replicating from master") {
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
	poll(t, "SUCCESS with the slave in sync", 30*time.Second, func() bool { return send("warm-up") == protocol.Success })
	if err := c.slave.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill(2) returns before every thread of the slave has stopped: wait
	// until the kernel reports the process stopped, or the slave may still
	// ack the next message.
	poll(t, "slave process stopped", 10*time.Second, func() bool { return processStopped(c.slave.cmd.Process.Pid) })
	start := time.Now()
	if code := send("while paused"); code != protocol.FlushSlaveTimeout {
		t.Fatalf("send with the slave paused: code %d, want FLUSH_SLAVE_TIMEOUT", code)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("answered after %v, before syncFlushTimeout", d)
	}
	if err := c.slave.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	poll(t, "SUCCESS after the slave continued", 30*time.Second, func() bool { return send("after") == protocol.Success })
	c.slave.stop(t)
	c.master.stop(t)
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
