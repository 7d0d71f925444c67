package broker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	"github.com/rocketd/rocketd/internal/controller/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// ctrlCluster is a controller-mode deployment of rocketd processes on
// loopback: three `rocketd controller` nodes, a NameServer and a broker
// set of three brokers in controller mode.
type ctrlCluster struct {
	bin      string
	nsAddr   string
	ctlAddrs string
	ctls     []*proc.Process
	ns       *proc.Process
	brokers  []*ctrlBroker
	cl       *client.Client
	rc       *remoting.Client
}

type ctrlBroker struct {
	name string
	addr string
	dir  string
	conf string
	p    *proc.Process
}

const (
	ctrlClusterName = "CtrlCluster"
	ctrlBrokerName  = "ctrl-broker"
)

func writeConf(t *testing.T, path string, kv map[string]string) {
	t.Helper()
	var b strings.Builder
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, kv[k])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func startCtrlCluster(t *testing.T) *ctrlCluster {
	t.Helper()
	c := &ctrlCluster{bin: proc.Build(t, "github.com/rocketd/rocketd/cmd/rocketd")}
	var peers, addrs []string
	ctlPorts := make([]int, 3)
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, proc.FreePort(t)))
		ctlPorts[i] = proc.FreePort(t)
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(ctlPorts[i]))
	}
	c.ctlAddrs = strings.Join(addrs, ";")
	for i := range 3 {
		dir := t.TempDir()
		conf := filepath.Join(dir, "controller.conf")
		writeConf(t, conf, map[string]string{
			"controllerDLegerGroup": "ctrltest", "controllerDLegerPeers": strings.Join(peers, ";"),
			"controllerDLegerSelfId": fmt.Sprintf("n%d", i), "controllerStorePath": filepath.Join(dir, "store"),
			"listenPort": strconv.Itoa(ctlPorts[i]), "scanNotActiveBrokerInterval": "1000",
			"scanInactiveMasterInterval": "1000", "configStorePath": filepath.Join(dir, "controller.properties"),
		})
		c.ctls = append(c.ctls, proc.StartNamed(t, fmt.Sprintf("controller%d", i), c.bin, "controller", "-c", conf))
	}
	for _, p := range c.ctls {
		p.WaitLog(t, "controller ready", 30*time.Second)
	}
	nsPort := proc.FreePort(t)
	c.nsAddr = "127.0.0.1:" + strconv.Itoa(nsPort)
	c.ns = proc.StartNamed(t, "namesrv", c.bin, "namesrv", "--port", strconv.Itoa(nsPort),
		"--kv-config", filepath.Join(t.TempDir(), "kvConfig.json"))
	c.ns.WaitLog(t, "NameServer ready", 20*time.Second)
	var err error
	if c.cl, err = client.New(c.ctlAddrs, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cl.Close() })
	c.rc = remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() { _ = c.rc.Close() })
	// The controller group has a leader.
	wait.For(t, 30*time.Second, "a controller leader", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.cl.Leader(ctx)
		return err == nil
	})
	return c
}

// addBroker prepares (and starts) a controller-mode broker.
// stop stops b (SIGSTOP) and waits until the kernel says it is stopped.
func (b *ctrlBroker) stop(t *testing.T) {
	t.Helper()
	if err := b.p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, b.name+" stopped", func() bool { return processStopped(b.p.Pid()) })
}

// setOfThree starts broker-a, waits until it is the elected master,
// starts broker-b and broker-c and waits until all three are in the
// SyncStateSet; it returns broker-a.
func (c *ctrlCluster) setOfThree(t *testing.T) *ctrlBroker {
	t.Helper()
	first := c.addBroker(t, "broker-a")
	c.waitMaster(t, first)
	c.addBroker(t, "broker-b")
	c.addBroker(t, "broker-c")
	c.waitInSync(t, 1, 2, 3)
	return first
}

// waitMaster waits until the controller names b the set's master.
func (c *ctrlCluster) waitMaster(t *testing.T, b *ctrlBroker) {
	t.Helper()
	wait.For(t, 30*time.Second, b.name+" elected master", func() bool {
		mi, err := c.replicaInfo()
		return err == nil && mi.HasMaster && mi.MasterAddress == b.addr
	})
}

// waitInSync waits until the SyncStateSet is the brokers ids.
func (c *ctrlCluster) waitInSync(t *testing.T, ids ...int64) {
	t.Helper()
	wait.For(t, 30*time.Second, fmt.Sprintf("a SyncStateSet of brokers %v", ids), func() bool {
		mi, err := c.replicaInfo()
		return err == nil && slices.Equal(slices.Sorted(slices.Values(mi.SyncStateSet)), ids)
	})
}

func (c *ctrlCluster) addBroker(t *testing.T, name string) *ctrlBroker {
	t.Helper()
	return c.addBrokerWith(t, name, nil)
}

// addBrokerWith is addBroker with extra broker.conf keys.
func (c *ctrlCluster) addBrokerWith(t *testing.T, name string, extra map[string]string) *ctrlBroker {
	t.Helper()
	avoid := []int{}
	for _, b := range c.brokers {
		_, p, _ := strings.Cut(b.addr, ":")
		n, _ := strconv.Atoi(p)
		avoid = append(avoid, n, n+1, n-2)
	}
	port := proc.FreeBrokerPort(t, avoid...)
	b := &ctrlBroker{name: name, addr: "127.0.0.1:" + strconv.Itoa(port), dir: t.TempDir()}
	b.conf = filepath.Join(b.dir, "broker.conf")
	kv := map[string]string{
		"brokerClusterName": ctrlClusterName, "brokerName": ctrlBrokerName, "brokerIP1": "127.0.0.1",
		"namesrvAddr": c.nsAddr, "listenPort": strconv.Itoa(port), "haListenPort": strconv.Itoa(proc.FreePort(t)),
		"storePathRootDir": filepath.Join(b.dir, "store"), "mapedFileSizeCommitLog": strconv.Itoa(4 << 20),
		"haSendHeartbeatInterval": "1000", "grpcServerEnable": "false",
		"enableControllerMode": "true", "controllerAddr": c.ctlAddrs, "allAckInSyncStateSet": "true",
		"syncBrokerMetadataPeriod": "1000", "checkSyncStateSetPeriod": "1000", "brokerHeartbeatInterval": "500",
		"controllerHeartBeatTimeoutMills": "3000", "haMaxTimeSlaveNotCatchup": "5000", "syncFlushTimeout": "3000",
		"haHousekeepingInterval": "4000",
	}
	maps.Copy(kv, extra)
	writeConf(t, b.conf, kv)
	c.brokers = append(c.brokers, b)
	b.start(t, c)
	return b
}

func (b *ctrlBroker) start(t *testing.T, c *ctrlCluster) {
	t.Helper()
	b.p = proc.StartNamed(t, b.name, c.bin, "broker", "-c", b.conf)
	b.p.WaitLog(t, "broker ready", 30*time.Second)
}

// epochCache asks a broker for GET_BROKER_EPOCH_CACHE.
func (c *ctrlCluster) epochCache(addr string) (*protocol.EpochEntryCache, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(protocol.GetBrokerEpochCache, nil, nil))
	if err != nil {
		return nil, err
	}
	if r.Code != protocol.Success {
		return nil, fmt.Errorf("code %d %s", r.Code, r.Remark)
	}
	var ec protocol.EpochEntryCache
	if err := protocol.UnmarshalFastJSON(r.Body, &ec); err != nil {
		return nil, err
	}
	return &ec, nil
}

func (c *ctrlCluster) replicaInfo() (*client.MasterInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.cl.GetReplicaInfo(ctx, ctrlBrokerName)
}

func (c *ctrlCluster) byAddr(addr string) *ctrlBroker {
	for _, b := range c.brokers {
		if b.addr == addr {
			return b
		}
	}
	return nil
}

// createTopic creates topic (4 queues) on the master and waits until
// every other broker of the set copied it.
func (c *ctrlCluster) createTopic(t *testing.T, master *ctrlBroker, topic string) {
	t.Helper()
	h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 4, WriteQueueNums: 4,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	r, err := c.rc.Invoke(ctx, master.addr, remoting.NewRequest(protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil))
	cancel()
	if err != nil || r.Code != protocol.Success {
		t.Fatalf("create topic: %v %+v", err, r)
	}
	for _, b := range c.brokers {
		if b == master {
			continue
		}
		wait.For(t, 30*time.Second, b.name+" copies the topic", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			r, err := c.rc.Invoke(ctx, b.addr, remoting.NewRequest(protocol.GetAllTopicConfig, nil, nil))
			return err == nil && r.Code == protocol.Success && bytes.Contains(r.Body, []byte(topic))
		})
	}
}

// syncSender is the official Go client's producer as the load uses it.
type syncSender interface {
	SendSync(ctx context.Context, msgs ...*primitive.Message) (*primitive.SendResult, error)
}

// goProducer starts the official Go client's producer on the NameServer
// (retries 2, 3 s timeout) and waits for its first SEND_OK ("warm-up").
func (c *ctrlCluster) goProducer(t *testing.T, opts ...producer.Option) syncSender {
	t.Helper()
	p, err := producer.NewDefaultProducer(append([]producer.Option{producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName("ctrl_pg"), producer.WithRetry(2), producer.WithSendMsgTimeout(3 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// ctrlLoad is four goroutines sending unique bodies through the Go
// client, every SEND_OK recorded; "warm-up" is acknowledged first.
type ctrlLoad struct {
	mu        sync.Mutex
	acked     map[string]bool
	killedAt  time.Time
	killed    bool
	firstBack time.Duration
	stop      chan struct{}
	stopped   bool
	wg        sync.WaitGroup
}

func startLoad(p syncSender, topic string) *ctrlLoad {
	l := &ctrlLoad{acked: map[string]bool{}, stop: make(chan struct{})}
	l.wg.Add(4)
	for w := range 4 {
		go func() {
			defer l.wg.Done()
			l.send(p, topic, w)
		}()
	}
	return l
}

func (l *ctrlLoad) send(p syncSender, topic string, w int) {
	warm := w == 0
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		body := fmt.Sprintf("w%d-m%06d-%s", w, i, strings.Repeat("x", i%100))
		if warm {
			body = "warm-up"
		}
		begun := time.Now()
		r, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body)))
		if err == nil && r.Status == primitive.SendOK {
			warm = false
			l.mu.Lock()
			l.acked[body] = true
			// The first send begun after the old master died was
			// acknowledged by the new one.
			if l.killed && l.firstBack == 0 && begun.After(l.killedAt) {
				l.firstBack = time.Since(l.killedAt)
			}
			l.mu.Unlock()
		} else {
			select {
			case <-l.stop:
				return
			case <-time.After(20 * time.Millisecond): // back off while the set has no master
			}
		}
	}
}

func (l *ctrlLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// markKill records that the master was killed now.
func (l *ctrlLoad) markKill() {
	l.mu.Lock()
	l.killedAt, l.killed = time.Now(), true
	l.mu.Unlock()
}

func (l *ctrlLoad) sinceKill() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.killedAt)
}

// firstBackAfterKill is the time from the kill to the first SEND_OK of a
// send begun after it (0: none yet).
func (l *ctrlLoad) firstBackAfterKill() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstBack
}

// close stops the senders, waits for them and returns what was
// acknowledged. Idempotent.
func (l *ctrlLoad) close() map[string]bool {
	l.mu.Lock()
	if !l.stopped {
		l.stopped = true
		close(l.stop)
	}
	l.mu.Unlock()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.acked)
}

// waitNewMaster waits until the controller names a master other than old
// at epoch minEpoch or later, and returns it.
func (c *ctrlCluster) waitNewMaster(t *testing.T, old *ctrlBroker, minEpoch int32) *ctrlBroker {
	t.Helper()
	var m *ctrlBroker
	wait.For(t, 30*time.Second, "a new master elected", func() bool {
		mi, err := c.replicaInfo()
		if err != nil || !mi.HasMaster || mi.MasterAddress == old.addr || mi.MasterEpoch < minEpoch {
			return false
		}
		m = c.byAddr(mi.MasterAddress)
		return m != nil
	})
	return m
}

// readAcked reads every queue of topic from b with the Go client's pull
// consumer until every acknowledged body was read, and returns how many
// times each body was read.
func (c *ctrlCluster) readAcked(t *testing.T, b *ctrlBroker, topic string, acked map[string]bool, opts ...consumer.Option) map[string]int {
	t.Helper()
	pc, err := consumer.NewPullConsumer(append([]consumer.Option{consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName("ctrl_cg")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Shutdown() }()
	got := map[string]int{}
	wait.For(t, 60*time.Second, "every acknowledged message read from "+b.name, func() bool {
		clear(got)
		mqs, err := pc.GetTopicRouteInfo(topic)
		if err != nil || len(mqs) == 0 {
			return false
		}
		for _, mq := range mqs {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			r, err := c.rc.Invoke(ctx, b.addr, remoting.NewRequest(protocol.GetMaxOffset,
				protocol.Ext(&protocol.QueueRequestHeader{Topic: topic, QueueID: int32(mq.QueueId)}), nil))
			cancel()
			var maxOff protocol.OffsetResponseHeader
			if err != nil || r.Code != protocol.Success || maxOff.Decode(r.ExtFields) != nil {
				return false
			}
			for off := int64(0); off < maxOff.Offset; {
				res, err := pc.PullFrom(context.Background(), mq, off, 32)
				if err != nil || res.Status != primitive.PullFound {
					return false
				}
				for _, m := range res.GetMessageExts() {
					got[string(m.Body)]++
				}
				off = res.NextBeginOffset
			}
		}
		for b := range acked {
			if got[b] == 0 {
				return false
			}
		}
		return true
	})
	return got
}

// TestControllerModeFailover: three controllers, a NameServer and a broker
// set of three rocketd brokers in controller mode
// (allAckInSyncStateSet=true). The official Go client sends; the master is
// SIGKILLed mid-load: the controller elects a new master from the
// SyncStateSet, it takes writes, the producer resumes, every acknowledged
// message is readable from the new master, and the old master restarts
// with its brokerId as a slave whose CommitLog converges byte for byte
// with the new master's.
func TestControllerModeFailover(t *testing.T) {
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
	first := c.setOfThree(t)
	// Each broker kept the id the controller gave it.
	for i, b := range c.brokers {
		body, err := os.ReadFile(filepath.Join(b.dir, "store", "brokerIdentity"))
		if want := fmt.Sprintf("%s#%s#%d", ctrlClusterName, ctrlBrokerName, i+1); err != nil || string(body) != want {
			t.Fatalf("%s brokerIdentity %q (%v), want %q", b.name, body, err, want)
		}
	}

	const topic = "CtrlFailoverTopic"
	c.createTopic(t, first, topic)
	p := c.goProducer(t)
	load := startLoad(p, topic)
	defer load.close()
	wait.For(t, 60*time.Second, "1000 acknowledged sends", func() bool { return load.count() >= 1000 })
	first.p.Kill(t)
	load.markKill()
	before := load.count()
	newMaster := c.waitNewMaster(t, first, 2)
	t.Logf("new master %s elected %v after the kill", newMaster.name, load.sinceKill())
	// The producer resumes (the Go client reroutes once its route refresh,
	// every 30 s, names the new master).
	wait.For(t, 90*time.Second, "the producer to resume on the new master", func() bool { return load.count() >= before+300 })
	t.Logf("%d acknowledged before the kill; first acknowledged send %v after it", before, load.firstBackAfterKill())

	// The old master comes back with its brokerId and follows.
	first.start(t, c)
	wait.For(t, 60*time.Second, "the old master to rejoin as a slave", func() bool {
		ec, err := c.epochCache(first.addr)
		return err == nil && ec.BrokerID == 1 && ec.HAServerAddr == "" && len(ec.EpochList) > 0 &&
			ec.EpochList[len(ec.EpochList)-1].Epoch >= 2
	})
	acked := load.close()
	t.Logf("%d acknowledged in all", len(acked))

	// Every acknowledged message is readable from the new master.
	got := c.readAcked(t, newMaster, topic, acked)
	dups := 0
	for _, k := range got {
		if k > 1 {
			dups++
		}
	}
	t.Logf("read %d distinct messages, %d acknowledged, 0 lost, %d stored twice (producer retries)", len(got), len(acked), dups)

	// The old master converges with the new master's log.
	wait.For(t, 60*time.Second, "the old master's CommitLog to reach the new master's end", func() bool {
		a, err1 := c.epochCache(first.addr)
		m, err2 := c.epochCache(newMaster.addr)
		return err1 == nil && err2 == nil && a.MaxOffset == m.MaxOffset
	})
	sameLog(t, filepath.Join(newMaster.dir, "store", "commitlog"), filepath.Join(first.dir, "store", "commitlog"))
}

// sameLog checks that two CommitLogs hold the same bytes up to the last
// non-zero byte of either. A segment of adir that bdir lacks must be empty:
// a store prepares its next segment before it needs it.
func sameLog(t *testing.T, adir, bdir string) {
	t.Helper()
	files, err := os.ReadDir(adir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(adir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(bdir, f.Name()))
		if errors.Is(err, fs.ErrNotExist) && len(bytes.TrimRight(a, "\x00")) == 0 {
			continue // prepared ahead on one side, nothing written to it yet
		}
		if err != nil {
			t.Fatalf("segment %s: %v", f.Name(), err)
		}
		end := max(len(bytes.TrimRight(a, "\x00")), len(bytes.TrimRight(b, "\x00")))
		if end > len(a) || end > len(b) || !bytes.Equal(a[:end], b[:end]) {
			t.Fatalf("segment %s differs (%d data bytes)", f.Name(), end)
		}
	}
}

// TestControllerModeSlavePaused: with allAckInSyncStateSet=true a stopped
// slave (SIGSTOP) holds sends back until the master drops it from the
// SyncStateSet (haMaxTimeSlaveNotCatchup) and, on a shared host, closes
// its silent HA connection (haHousekeepingInterval); then sends go on;
// once it continues (SIGCONT) it catches up and the master takes it back.
func TestControllerModeSlavePaused(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startCtrlCluster(t)
	master := c.addBroker(t, "broker-a")
	c.waitMaster(t, master)
	c.addBroker(t, "broker-b")
	paused := c.addBroker(t, "broker-c")
	// The master's HA server knows its slaves by the brokerIds of their
	// AutoSwitch handshakes (both on this one host): the set grows by
	// those ids.
	c.waitInSync(t, 1, 2, 3)
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "CtrlPauseTopic", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
	send := func(body string) int32 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := c.rc.Invoke(ctx, master.addr, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte(body)))
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		return r.Code
	}
	wait.For(t, 30*time.Second, "SUCCESS with the set in sync", func() bool { return send("warm-up") == protocol.Success })
	paused.stop(t)
	if code := send("while paused"); code == protocol.Success {
		t.Fatal("a send was acknowledged while a SyncStateSet member was stopped")
	}
	wait.For(t, 30*time.Second, "the SyncStateSet to drop broker-c", func() bool {
		mi, err := c.replicaInfo()
		return err == nil && len(mi.SyncStateSet) == 2 && !slices.Contains(mi.SyncStateSet, 3)
	})
	// The master waits for the members by brokerId: once it took the
	// smaller set, sends are acknowledged again.
	wait.For(t, 10*time.Second, "sends acknowledged again", func() bool { return send("after the shrink") == protocol.Success })
	if err := paused.p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "broker-c back in the SyncStateSet", func() bool {
		mi, err := c.replicaInfo()
		return err == nil && slices.Contains(mi.SyncStateSet, 3) && len(mi.SyncStateSet) == 3
	})
	if code := send("after the return"); code != protocol.Success {
		t.Fatalf("send after broker-c's return: code %d", code)
	}
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
