package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/bench/internal/child"
)

// process is one rocketd child (bench/internal/child).
type process = child.Process

// cluster is the NameServer, the master and (unless role is "none") a slave
// as separate rocketd processes on loopback.
type cluster struct {
	ns, master, slave       *process
	nsAddr, masterAddr      string
	masterStore, slaveStore string
}

// clusterSpec says how to lay out a cluster.
type clusterSpec struct {
	bin         string
	dir         string // logs, configs and the slave's store
	masterStore string // the master's store root (the size-limited file system, when there is one)
	flush       string // ASYNC_FLUSH or SYNC_FLUSH
	role        string // SYNC_MASTER, ASYNC_MASTER or none
	// cleanForcibly is cleanFileForciblyEnable: off (the default here),
	// a full disk makes the broker refuse puts rather than delete
	// segments before their retention time, so that every acknowledged
	// message must still be there to read back.
	cleanForcibly bool
}

// brokerProps are the broker.conf keys every chaos broker gets: small
// files so that segments fit the size-limited file system, and short
// periods so that recovery is not measured in housekeeping ticks.
func brokerProps(s clusterSpec, nsAddr string, port, haPort int, store string) map[string]string {
	return map[string]string{
		"brokerClusterName": "ChaosCluster", "brokerName": "chaos-broker", "brokerIP1": "127.0.0.1",
		"namesrvAddr": nsAddr, "listenPort": strconv.Itoa(port), "haListenPort": strconv.Itoa(haPort),
		"storePathRootDir": store, "flushDiskType": s.flush,
		"mappedFileSizeCommitLog":    strconv.Itoa(16 << 20),
		"mappedFileSizeConsumeQueue": strconv.Itoa(100_000 * 20),
		// The disk check runs every second (Java: 10 s): puts are accepted
		// again about a second after space is freed.
		"cleanResourceInterval": "1000",
		// Answers before the client's 3 s send timeout when the slave or
		// the disk is stuck.
		"syncFlushTimeout":        "2000",
		"haSendHeartbeatInterval": "1000",
		"cleanFileForciblyEnable": strconv.FormatBool(s.cleanForcibly),
	}
}

// startCluster starts the processes and waits until each accepts
// connections.
func startCluster(ctx context.Context, s clusterSpec) (*cluster, error) {
	ports, err := child.FreePorts(5)
	if err != nil {
		return nil, err
	}
	c := &cluster{nsAddr: "127.0.0.1:" + strconv.Itoa(ports[0]), masterAddr: "127.0.0.1:" + strconv.Itoa(ports[1]),
		masterStore: s.masterStore}
	c.ns = &process{Name: "namesrv", Bin: s.bin, LogPath: filepath.Join(s.dir, "namesrv.log"),
		Args: []string{"namesrv", "--log-level", "warn", "--port", strconv.Itoa(ports[0]),
			"--kv-config", filepath.Join(s.dir, "kvConfig.json")}}
	if err := c.ns.Start(); err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, c.ns, c.nsAddr, 30*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	role := s.role
	if role == "none" {
		role = "ASYNC_MASTER"
	}
	mkv := brokerProps(s, c.nsAddr, ports[1], ports[2], s.masterStore)
	mkv["brokerId"], mkv["brokerRole"] = "0", role
	mconf := filepath.Join(s.dir, "master.conf")
	if err := child.WriteConf(mconf, mkv); err != nil {
		c.stop()
		return nil, err
	}
	c.master = &process{Name: "master", Bin: s.bin, LogPath: filepath.Join(s.dir, "master.log"),
		Args: []string{"broker", "--log-level", "info", "-c", mconf}}
	if err := c.master.Start(); err != nil {
		c.stop()
		return nil, err
	}
	// Registered with the NameServer: a slave started before that learns
	// the master's address only at its next registration, 30 s later.
	if err := c.master.WaitLog(ctx, "broker ready", 60*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	if s.role != "none" {
		c.slaveStore = filepath.Join(s.dir, "slave-store")
		skv := brokerProps(s, c.nsAddr, ports[3], ports[4], c.slaveStore)
		skv["brokerId"], skv["brokerRole"] = "1", "SLAVE"
		sconf := filepath.Join(s.dir, "slave.conf")
		if err := child.WriteConf(sconf, skv); err != nil {
			c.stop()
			return nil, err
		}
		c.slave = &process{Name: "slave", Bin: s.bin, LogPath: filepath.Join(s.dir, "slave.log"),
			Args: []string{"broker", "--log-level", "info", "-c", sconf}}
		if err := c.slave.Start(); err != nil {
			c.stop()
			return nil, err
		}
		if err := waitTCP(ctx, c.slave, "127.0.0.1:"+strconv.Itoa(ports[3]), 60*time.Second); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

// stop ends every process, slave first.
func (c *cluster) stop() {
	for _, p := range []*process{c.slave, c.master, c.ns} {
		if p != nil {
			p.Stop(20 * time.Second)
		}
	}
}

// waitTCP dials addr until it answers, p exits, ctx ends or timeout
// passes.
func waitTCP(ctx context.Context, p *process, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		if !p.Running() {
			return fmt.Errorf("%s exited before %s accepted connections:\n%s", p.Name, addr, p.LogTail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: nothing listening on %s after %v: %w", p.Name, addr, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var errNoRecovery = errors.New("no recovery")
