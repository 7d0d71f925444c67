package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketd/rocketd/bench/internal/child"
	"github.com/rocketd/rocketd/internal/controller/client"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// process is one rocketd child (bench/internal/child).
type process = child.Process

// poll calls cond every 20 ms until it is true, fails, ctx ends or
// timeout passes.
func poll(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %v for %s", timeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

const (
	clusterName = "FailoverCluster"
	brokerName  = "failover-broker"
	topic       = "FailoverTopic"
	queues      = 4
)

// broker is one broker of the set.
type broker struct {
	*process
	addr string
}

// cluster is the controllers, the NameServer and the broker set.
type cluster struct {
	ctls    []*process
	ns      *process
	brokers []*broker
	nsAddr  string
	ctl     *client.Client
	rc      *remoting.Client
}

// startCluster starts three controllers, a NameServer and three brokers in
// controller mode, the first one elected master.
func startCluster(ctx context.Context, bin, dir string) (_ *cluster, err error) {
	ports, err := child.FreePorts(3*2 + 1 + 3*2)
	if err != nil {
		return nil, err
	}
	c := &cluster{nsAddr: "127.0.0.1:" + strconv.Itoa(ports[6]), rc: remoting.NewClient(remoting.ClientConfig{})}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	var peers, ctlAddrs []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, ports[2*i]))
		ctlAddrs = append(ctlAddrs, "127.0.0.1:"+strconv.Itoa(ports[2*i+1]))
	}
	for i := range 3 {
		conf := filepath.Join(dir, fmt.Sprintf("controller%d.conf", i))
		if err := child.WriteConf(conf, map[string]string{
			"controllerDLegerGroup": "failover", "controllerDLegerPeers": strings.Join(peers, ";"),
			"controllerDLegerSelfId": fmt.Sprintf("n%d", i), "controllerStorePath": filepath.Join(dir, "controller"),
			"listenPort": strconv.Itoa(ports[2*i+1]), "scanNotActiveBrokerInterval": "1000", "scanInactiveMasterInterval": "1000",
		}); err != nil {
			return c, err
		}
		p := &process{Name: fmt.Sprintf("controller%d", i), Bin: bin, LogPath: filepath.Join(dir, fmt.Sprintf("controller%d.log", i)),
			Args: []string{"controller", "-c", conf}}
		if err := p.Start(); err != nil {
			return c, err
		}
		c.ctls = append(c.ctls, p)
	}
	for _, p := range c.ctls {
		if err := p.WaitLog(ctx, "controller ready", 30*time.Second); err != nil {
			return c, err
		}
	}
	if c.ctl, err = client.New(strings.Join(ctlAddrs, ";"), c.rc); err != nil {
		return c, err
	}
	c.ns = &process{Name: "namesrv", Bin: bin, LogPath: filepath.Join(dir, "namesrv.log"),
		Args: []string{"namesrv", "--port", strconv.Itoa(ports[6]), "--kv-config", filepath.Join(dir, "kv.json")}}
	if err := c.ns.Start(); err != nil {
		return c, err
	}
	if err := c.ns.WaitLog(ctx, "NameServer ready", 30*time.Second); err != nil {
		return c, err
	}
	for i := range 3 {
		port, haPort := ports[7+2*i], ports[8+2*i]
		name := fmt.Sprintf("broker-%c", 'a'+i)
		conf := filepath.Join(dir, name+".conf")
		if err := child.WriteConf(conf, map[string]string{
			"brokerClusterName": clusterName, "brokerName": brokerName, "brokerIP1": "127.0.0.1",
			"namesrvAddr": c.nsAddr, "listenPort": strconv.Itoa(port), "haListenPort": strconv.Itoa(haPort),
			"storePathRootDir": filepath.Join(dir, name), "mappedFileSizeCommitLog": strconv.Itoa(16 << 20),
			"grpcServerEnable": "false", "haSendHeartbeatInterval": "1000", "haHousekeepingInterval": "5000",
			"enableControllerMode": "true", "controllerAddr": strings.Join(ctlAddrs, ";"), "allAckInSyncStateSet": "true",
			"syncBrokerMetadataPeriod": "1000", "checkSyncStateSetPeriod": "1000", "brokerHeartbeatInterval": "500",
			"controllerHeartBeatTimeoutMills": "3000", "haMaxTimeSlaveNotCatchup": "5000", "syncFlushTimeout": "2000",
		}); err != nil {
			return c, err
		}
		b := &broker{process: &process{Name: name, Bin: bin, LogPath: filepath.Join(dir, name+".log"),
			Args: []string{"broker", "--log-level", "info", "-c", conf}}, addr: "127.0.0.1:" + strconv.Itoa(port)}
		if err := b.Start(); err != nil {
			return c, err
		}
		if err := b.WaitLog(ctx, "broker ready", 60*time.Second); err != nil {
			return c, err
		}
		c.brokers = append(c.brokers, b)
		if i == 0 {
			if err := poll(ctx, 30*time.Second, "the first broker elected master", func() (bool, error) {
				mi, err := c.replicaInfo(ctx)
				return err == nil && mi.HasMaster && mi.MasterAddress == b.addr, nil
			}); err != nil {
				return c, err
			}
		}
	}
	if err := c.waitSyncStateSet(ctx, 3, 60*time.Second); err != nil {
		return c, err
	}
	h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := c.rc.Invoke(cctx, c.brokers[0].addr, remoting.NewRequest(protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil))
	if err != nil || r.Code != protocol.Success {
		return c, fmt.Errorf("create %s: %v %v", topic, err, r)
	}
	return c, nil
}

func (c *cluster) replicaInfo(ctx context.Context) (*client.MasterInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.ctl.GetReplicaInfo(cctx, brokerName)
}

func (c *cluster) waitSyncStateSet(ctx context.Context, n int, timeout time.Duration) error {
	return poll(ctx, timeout, fmt.Sprintf("a SyncStateSet of %d", n), func() (bool, error) {
		mi, err := c.replicaInfo(ctx)
		return err == nil && mi.HasMaster && len(mi.SyncStateSet) == n, nil
	})
}

func (c *cluster) byAddr(addr string) *broker {
	for _, b := range c.brokers {
		if b.addr == addr {
			return b
		}
	}
	return nil
}

// stop ends every process: brokers, NameServer, controllers.
func (c *cluster) stop() {
	for _, b := range c.brokers {
		b.Stop(20 * time.Second)
	}
	if c.ns != nil {
		c.ns.Stop(10 * time.Second)
	}
	for _, p := range c.ctls {
		p.Stop(10 * time.Second)
	}
	if c.ctl != nil {
		_ = c.ctl.Close()
	}
	_ = c.rc.Close()
}
