// Package proc is the plumbing for tests that run rocketd (or rocketctl) as
// a separate process: build the command once per test binary, pick free
// loopback ports, start the process with its output captured, wait until it
// is up, and stop it with SIGTERM (SIGKILL as the fallback). Only _test.go
// files import it.
package proc

import (
	"bytes"
	"errors"
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
)

// stopTimeout bounds how long a process may take to exit after a signal.
const stopTimeout = 20 * time.Second

// builds caches one binary per package path for the whole test binary.
var builds struct {
	mu   sync.Mutex
	bins map[string]string // package path -> binary in some test's TempDir
}

// Build compiles the main package pkg (an import path such as
// "github.com/rocketd/rocketd/cmd/rocketd", or a path relative to the test's
// directory) and returns the path of a binary in t.TempDir().
//
// The first call per package runs go build; later calls hard-link that
// binary into their own TempDir. A link keeps the file alive when the test
// that built it ends and removes its TempDir; when the cached file is gone
// already, Build compiles again (go's build cache makes that a link step).
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if cached, ok := builds.bins[pkg]; ok && os.Link(cached, bin) == nil {
		return bin
	}
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	if builds.bins == nil {
		builds.bins = map[string]string{}
	}
	builds.bins[pkg] = bin
	return bin
}

// handedOut holds the ports this process's FreePort and FreeBrokerPort
// returned (a broker port with the HA and VIP ports next to it): a port is
// free only until its test binds it, so a later call must not hand out the
// same one (a test that picks a broker port and then an HA port would
// otherwise get the broker's own VIP port back now and then).
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// claim records ports as handed out, unless one of them already is.
func claim(ports ...int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	for _, p := range ports {
		if handedOut.ports[p] {
			return false
		}
	}
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for _, p := range ports {
		handedOut.ports[p] = true
	}
	return true
}

// FreePort returns a loopback TCP port that was free a moment ago and that
// no earlier call of this process returned.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if claim(p) {
			return p
		}
	}
	t.Fatal("free port: no port not handed out already in 100 tries")
	return 0
}

func freshPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// FreeBrokerPort returns a port p for a broker: p, p+1 (the broker's
// default HA port) and p-2 (its VIP channel) were free a moment ago, and
// none is one of avoid (typically the NameServer's port, picked before).
func FreeBrokerPort(t testing.TB, avoid ...int) int {
	t.Helper()
	taken := func(p int) bool {
		for _, a := range avoid {
			if a == p {
				return true
			}
		}
		return false
	}
	for range 100 {
		p := freshPort(t)
		if p < 3 || taken(p) || taken(p+1) || taken(p-2) {
			continue
		}
		// Listen on every interface: the HA and VIP listeners may, and a
		// port busy on any address would make them fail.
		if !bindable(p+1) || !bindable(p-2) {
			continue
		}
		if !claim(p, p+1, p-2) {
			continue
		}
		return p
	}
	t.Fatal("free broker port: no free pair of ports in 100 tries")
	return 0
}

// bindable reports whether port can be listened on, on every interface.
func bindable(port int) bool {
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// WaitTCP polls addr until it accepts a connection, failing the test after
// timeout.
func WaitTCP(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	if err := waitTCP(addr, timeout, nil); err != nil {
		t.Fatal(err)
	}
}

// waitTCP dials addr until it answers, the deadline passes, or exited
// closes.
func waitTCP(addr string, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errExited
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listening on %s after %v: %w", addr, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var errExited = errors.New("the process exited")

// logBuffer collects a process's stdout and stderr while the test reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Process is a child process started by Start.
type Process struct {
	name   string
	cmd    *exec.Cmd
	log    logBuffer
	exited chan struct{} // closed once Wait returned (output copied)
	err    error         // the exit status; set before exited closes
}

// Start runs bin with args, its stdout and stderr captured (see Log). The
// process is stopped when the test ends (SIGTERM, then SIGKILL after 20 s),
// and its log is written to the test log if the test failed.
func Start(t testing.TB, bin string, args ...string) *Process {
	t.Helper()
	name := filepath.Base(bin)
	if len(args) > 0 {
		name += " " + args[0]
	}
	return StartNamed(t, name, bin, args...)
}

// StartNamed is Start with the name used in failure messages (e.g.
// "master" and "slave" for two brokers).
func StartNamed(t testing.TB, name, bin string, args ...string) *Process {
	t.Helper()
	p := &Process{name: name, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	// cmd.Wait returns after the output copiers are done: once exited is
	// closed, no goroutine of this process is left.
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		if !p.exitedNow() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			// A test that failed while the process was stopped (SIGSTOP)
			// leaves it unable to act on SIGTERM until it continues.
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			select {
			case <-p.exited:
			case <-time.After(stopTimeout):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		if t.Failed() {
			t.Logf("--- %s log:\n%s", p.name, p.log.String())
		}
	})
	return p
}

func (p *Process) exitedNow() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Log returns what the process has written to stdout and stderr so far.
func (p *Process) Log() string { return p.log.String() }

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited; Err is valid from then on.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err returns the exit status once Exited is closed (nil before).
func (p *Process) Err() error {
	if !p.exitedNow() {
		return nil
	}
	return p.err
}

// Signal sends sig (e.g. SIGSTOP, SIGCONT) without waiting.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends SIGTERM, waits for the exit and returns the exit error (nil on
// a clean exit). It fails the test if the process is still running after
// 20 s.
func (p *Process) Stop(t testing.TB) error {
	t.Helper()
	return p.stopWith(t, syscall.SIGTERM)
}

// Kill sends SIGKILL and waits for the exit.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	_ = p.stopWith(t, syscall.SIGKILL)
}

func (p *Process) stopWith(t testing.TB, sig syscall.Signal) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !p.exitedNow() && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("%s: send %v: %v", p.name, sig, err)
	}
	select {
	case <-p.exited:
		return p.err
	case <-time.After(stopTimeout):
		t.Fatalf("%s did not exit %v after %v\n%s", p.name, stopTimeout, sig, p.log.String())
		return nil
	}
}

// WaitLog polls the log until it contains text; it fails the test if the
// process exits first or timeout passes.
func (p *Process) WaitLog(t testing.TB, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.log.String(), text) {
		if p.exitedNow() {
			t.Fatalf("%s exited (%v) before logging %q:\n%s", p.name, p.err, text, p.log.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q in the log after %v:\n%s", p.name, text, timeout, p.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitTCP polls addr until it accepts a connection; it fails the test if
// the process exits first or timeout passes.
func (p *Process) WaitTCP(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	if err := waitTCP(addr, timeout, p.exited); err != nil {
		t.Fatalf("%s: %v (exit %v)\n%s", p.name, err, p.Err(), p.log.String())
	}
}
