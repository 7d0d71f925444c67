package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is one started target: its processes, the address clients use and
// what was measured while starting it.
type server struct {
	procs   []*exec.Cmd
	logs    []*os.File
	addr    string    // NameServer (rocketd, RocketMQ) or NATS client address
	broker  string    // the broker's remoting address (rocketd, RocketMQ)
	pprof   string    // rocketd-pprof: the debug HTTP address
	grpc    string    // gRPC targets: the MessagingService's host:port
	started time.Time // the first process's start
	startup time.Duration
	idleRSS int64 // bytes, summed over procs
}

// startProcess starts cmd with its output in logPath.
func (s *server) startProcess(cmd *exec.Cmd, logPath string) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group: a stop reaches the JVM's children too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.started.IsZero() {
		s.started = time.Now()
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	s.procs = append(s.procs, cmd)
	s.logs = append(s.logs, f)
	return nil
}

// stop ends the processes in reverse start order: SIGTERM, then SIGKILL
// after grace.
func (s *server) stop(grace time.Duration) {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	for _, f := range s.logs {
		f.Close()
	}
}

// peakRSS is the sum of the processes' VmHWM (bytes).
func (s *server) peakRSS() int64 { return s.procStatus("VmHWM:") }

// rss is the sum of the processes' VmRSS (bytes).
func (s *server) rss() int64 { return s.procStatus("VmRSS:") }

// memUse is a server's memory once settled: its RSS, and (rocketd with a
// pprof endpoint) the Go heap and stacks in use after a forced collection.
type memUse struct {
	rss  int64
	live int64 // 0: unknown
}

// settled forces a garbage collection through the server's pprof
// endpoint, then reads the RSS and, from the same response, the live heap
// (HeapAlloc) and stacks (StackInuse). The RSS still holds heap pages the
// runtime keeps for reuse (Go returns idle memory to the OS gradually);
// live is what the process retains for its data. Without an endpoint only
// the RSS is read.
func (s *server) settled(ctx context.Context) memUse {
	var m memUse
	if s.pprof != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.pprof+"/debug/pprof/heap?gc=1&debug=1", nil)
		if err == nil {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				// debug=1 prints StackInuse as "# Stack = inuse / sys".
				m.live = memStat(body, "HeapAlloc") + memStat(body, "Stack")
			}
		}
	}
	m.rss = s.rss()
	return m
}

// dispatched is nil once s's ConsumeQueues hold everything its CommitLog
// does (rocketmq_storage_dispatch_behind_bytes 0 on the metrics listener).
func (s *server) dispatched(ctx context.Context) error {
	if s.pprof == "" {
		return errors.New("no metrics listener")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.pprof+"/metrics", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "rocketmq_storage_dispatch_behind_bytes") {
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 && f[len(f)-1] == "0" {
			return nil
		}
		return fmt.Errorf("dispatch behind: %s", line)
	}
	return errors.New("no rocketmq_storage_dispatch_behind_bytes in the metrics")
}

// memStat reads "# Name = N" (or the N of "# Name = N / M") from pprof's
// debug=1 heap output.
func memStat(body []byte, name string) int64 {
	prefix := "# " + name + " = "
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			v, _, _ = strings.Cut(v, " /")
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func (s *server) procStatus(field string) int64 {
	var total int64
	for _, p := range s.procs {
		total += procStatusKB(p.Process.Pid, field) * 1024
	}
	return total
}

// procStatusKB reads a "kB" field of /proc/PID/status; 0 when unknown.
func procStatusKB(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// waitTCP polls addr until it accepts a connection, a process exits, or the
// timeout passes.
func (s *server) waitTCP(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		for _, p := range s.procs {
			if exited(p) {
				return fmt.Errorf("%s exited before %s accepted connections", p.Path, addr)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no listener after %s: %w", addr, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exited reports whether the process has ended (without reaping it: an
// ended child stays a zombie, which signal 0 still reaches, until Wait).
func exited(p *exec.Cmd) bool {
	if p.Process.Signal(syscall.Signal(0)) != nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Process.Pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z'
	}
	return false
}

// freePorts returns n distinct loopback ports nobody listens on, each with
// its neighbours port-2 and port+1 free as well (RocketMQ's broker also
// listens there: fast remoting and HA).
func freePorts(n int) ([]int, error) {
	var ports []int
	seen := map[int]bool{}
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if seen[p] || p < 1100 || p > 65000 {
			continue
		}
		ok := true
		for _, q := range []int{p - 2, p + 1} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			for d := -2; d <= 1; d++ {
				seen[p+d] = true
			}
			ports = append(ports, p)
		}
	}
	if len(ports) < n {
		return nil, errors.New("compare: no free loopback ports")
	}
	return ports, nil
}

// run runs a command to its end and returns its stdout; the error carries
// stderr.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(stderr.String(), 5))
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
