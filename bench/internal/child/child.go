// Package child runs rocketd processes for the bench harnesses (bench/chaos,
// bench/failover): start, kill -9, stop, SIGSTOP/SIGCONT, and waits on what
// a run logged.
package child

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one rocketd child: its command line, log file and exit.
type Process struct {
	Name    string
	Bin     string
	Args    []string
	LogPath string

	cmd      *exec.Cmd
	log      *os.File
	logStart int64         // size of the log file when this run started
	exited   chan struct{} // closed once Wait returned
}

// Start runs the process (again, after a kill) with its output appended to
// its log file.
func (p *Process) Start() error {
	f, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "=== %s start %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(p.Args, " "))
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	p.logStart = st.Size()
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group: a signal to the harness's terminal does not reach
	// the broker behind the harness's back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.cmd, p.log, p.exited = cmd, f, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(p.exited)
	return nil
}

func (p *Process) Running() bool {
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

// Kill sends SIGKILL (SIGCONT too: a stopped process) and waits for the
// exit.
func (p *Process) Kill() {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	<-p.exited
	p.log.Close()
}

// Stop sends SIGTERM and waits up to grace, then SIGKILL.
func (p *Process) Stop(grace time.Duration) {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-p.exited:
		p.log.Close()
	case <-time.After(grace):
		p.Kill()
	}
}

func (p *Process) Signal(sig syscall.Signal) error {
	if !p.Running() {
		return fmt.Errorf("%s is not running", p.Name)
	}
	return p.cmd.Process.Signal(sig)
}

// Stopped reports whether /proc says the process is stopped by a signal
// (state T): kill(2) returns before every thread has stopped.
func (p *Process) Stopped() bool {
	if !p.Running() {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}

// WaitLog polls what this run of the process logged until it contains
// text.
func (p *Process) WaitLog(ctx context.Context, text string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(p.LogPath); err == nil && int64(len(b)) >= p.logStart &&
			bytes.Contains(b[p.logStart:], []byte(text)) {
			return nil
		}
		if !p.Running() {
			return fmt.Errorf("%s exited before logging %q:\n%s", p.Name, text, p.LogTail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %q in its log after %v:\n%s", p.Name, text, timeout, p.LogTail(20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WriteConf writes kv as a properties file (broker.conf), keys sorted.
func WriteConf(path string, kv map[string]string) error {
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

// FreePorts returns n distinct ports that were free a moment ago (all held
// open together), none of whose neighbours (a broker's port+1 and -2)
// is among the others, and whose port+1 and port-2 were free too. Tests
// of other packages run at the same time and pick ports of their own, so
// a port can still be taken between here and its use.
func FreePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	used := map[int]bool{}
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		lns = append(lns, l)
		p := l.Addr().(*net.TCPAddr).Port
		if used[p] || used[p+1] || used[p-1] || used[p+2] || used[p-2] {
			continue
		}
		// A broker on p also listens on p+1 (HA) and p-2 (VIP): take only
		// a port whose neighbours are free too, and hold them as well.
		held, ok := holdPorts(p+1, p-2)
		lns = append(lns, held...)
		if !ok {
			continue
		}
		used[p] = true
		ports = append(ports, p)
	}
	return ports, nil
}

// holdPorts listens on each port; ok is false when one is taken.
func holdPorts(ports ...int) (lns []net.Listener, ok bool) {
	for _, p := range ports {
		if p <= 0 || p > 65535 {
			return lns, false
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			return lns, false
		}
		lns = append(lns, l)
	}
	return lns, true
}

// Body is the body of the message with key: the key, then filler bytes
// that depend on the key, size bytes in all (at least the key). Read-back
// compares bodies with it. Bodies stay under the client's 4 KiB
// compression threshold.
func Body(key string, size int) []byte {
	b := make([]byte, max(size, len(key)+1))
	n := copy(b, key)
	b[n] = '|'
	var h uint32 = 2166136261
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	for i := n + 1; i < len(b); i++ {
		h = h*1103515245 + 12345
		b[i] = 'a' + byte(h>>16)%26
	}
	return b
}
