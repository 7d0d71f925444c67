package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one rocketd child: its command line, log file and exit.
type process struct {
	name    string
	bin     string
	args    []string
	logPath string

	cmd      *exec.Cmd
	log      *os.File
	logStart int64         // size of the log file when this run started
	exited   chan struct{} // closed once Wait returned
}

// start runs the process (again, after a kill) with its output appended to
// its log file.
func (p *process) start() error {
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "=== %s start %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(p.args, " "))
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	p.logStart = st.Size()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group: a signal to the harness's terminal does not reach
	// the broker behind the harness's back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.cmd, p.log, p.exited = cmd, f, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(p.exited)
	return nil
}

func (p *process) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL (SIGCONT too: a stopped process) and waits for the
// exit.
func (p *process) kill() {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	<-p.exited
	p.log.Close()
}

// stop sends SIGTERM and waits up to grace, then SIGKILL.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-p.exited:
		p.log.Close()
	case <-time.After(grace):
		p.kill()
	}
}

func (p *process) signal(sig syscall.Signal) error {
	if !p.running() {
		return fmt.Errorf("%s is not running", p.name)
	}
	return p.cmd.Process.Signal(sig)
}

// stopped reports whether /proc says the process is stopped by a signal
// (state T): kill(2) returns before every thread has stopped.
func (p *process) stopped() bool {
	if !p.running() {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}

// waitLog polls what this run of the process logged until it contains
// text.
func (p *process) waitLog(ctx context.Context, text string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(p.logPath); err == nil && int64(len(b)) >= p.logStart &&
			bytes.Contains(b[p.logStart:], []byte(text)) {
			return nil
		}
		if !p.running() {
			return fmt.Errorf("%s exited before logging %q:\n%s", p.name, text, p.logTail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %q in its log after %v:\n%s", p.name, text, timeout, p.logTail(20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// logTail returns the last n lines of the process's log.
func (p *process) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

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

func writeConf(path string, kv map[string]string) error {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, kv[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// All are held open together so none is returned twice.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	var ports []int
	for len(ports) < n {
		// Every interface: the HA listener may bind them all.
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startCluster starts the processes and waits until each accepts
// connections.
func startCluster(ctx context.Context, s clusterSpec) (*cluster, error) {
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	c := &cluster{nsAddr: "127.0.0.1:" + strconv.Itoa(ports[0]), masterAddr: "127.0.0.1:" + strconv.Itoa(ports[1]),
		masterStore: s.masterStore}
	c.ns = &process{name: "namesrv", bin: s.bin, logPath: filepath.Join(s.dir, "namesrv.log"),
		args: []string{"namesrv", "--log-level", "warn", "--port", strconv.Itoa(ports[0]),
			"--kv-config", filepath.Join(s.dir, "kvConfig.json")}}
	if err := c.ns.start(); err != nil {
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
	if err := writeConf(mconf, mkv); err != nil {
		c.stop()
		return nil, err
	}
	c.master = &process{name: "master", bin: s.bin, logPath: filepath.Join(s.dir, "master.log"),
		args: []string{"broker", "--log-level", "info", "-c", mconf}}
	if err := c.master.start(); err != nil {
		c.stop()
		return nil, err
	}
	// Registered with the NameServer: a slave started before that learns
	// the master's address only at its next registration, 30 s later.
	if err := c.master.waitLog(ctx, "broker ready", 60*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	if s.role != "none" {
		c.slaveStore = filepath.Join(s.dir, "slave-store")
		skv := brokerProps(s, c.nsAddr, ports[3], ports[4], c.slaveStore)
		skv["brokerId"], skv["brokerRole"] = "1", "SLAVE"
		sconf := filepath.Join(s.dir, "slave.conf")
		if err := writeConf(sconf, skv); err != nil {
			c.stop()
			return nil, err
		}
		c.slave = &process{name: "slave", bin: s.bin, logPath: filepath.Join(s.dir, "slave.log"),
			args: []string{"broker", "--log-level", "info", "-c", sconf}}
		if err := c.slave.start(); err != nil {
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
			p.stop(20 * time.Second)
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
		if !p.running() {
			return fmt.Errorf("%s exited before %s accepted connections:\n%s", p.name, addr, p.logTail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: nothing listening on %s after %v: %w", p.name, addr, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var errNoRecovery = errors.New("no recovery")
