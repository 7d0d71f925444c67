package proc

import (
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFreeBrokerPortAvoids(t *testing.T) {
	ns := FreePort(t)
	for range 20 {
		p := FreeBrokerPort(t, ns, ns-1)
		if p == ns || p+1 == ns || p == ns-1 {
			t.Fatalf("broker port %d collides with avoided %d", p, ns)
		}
	}
}

func TestStartWaitLogStop(t *testing.T) {
	p := Start(t, "/bin/sh", "-c", `echo out; echo err >&2; trap 'echo bye; exit 0' TERM; while :; do sleep 0.05; done`)
	p.WaitLog(t, "err", 5*time.Second)
	p.WaitLog(t, "out", 5*time.Second)
	if err := p.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, p.Log())
	}
	if !strings.Contains(p.Log(), "bye") {
		t.Fatalf("no trap output: %q", p.Log())
	}
	// Stopping again returns the same status.
	if err := p.Stop(t); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

func TestKillReportsSignal(t *testing.T) {
	p := Start(t, "/bin/sh", "-c", "trap '' TERM; echo up; while :; do sleep 0.05; done")
	p.WaitLog(t, "up", 5*time.Second)
	p.Kill(t)
	if p.Err() == nil || !strings.Contains(p.Err().Error(), "killed") {
		t.Fatalf("exit after SIGKILL: %v", p.Err())
	}
}

// TestCleanupEndsStoppedProcess: a process left running and stopped
// (SIGSTOP) by a test ends promptly at cleanup.
func TestCleanupEndsStoppedProcess(t *testing.T) {
	var p *Process
	start := time.Now()
	t.Run("leave", func(t *testing.T) {
		p = Start(t, "/bin/sh", "-c", "echo up; while :; do sleep 0.05; done")
		p.WaitLog(t, "up", 5*time.Second)
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	})
	select {
	case <-p.Exited():
	default:
		t.Fatal("the process outlived its test's cleanup")
	}
	if d := time.Since(start); d > stopTimeout/2 {
		t.Fatalf("cleanup took %v: SIGTERM was not acted on", d)
	}
}

func TestWaitTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	WaitTCP(t, ln.Addr().String(), 2*time.Second)
	if err := waitTCP("127.0.0.1:"+strconv.Itoa(FreePort(t)), 100*time.Millisecond, nil); err == nil {
		t.Fatal("waitTCP on a closed port succeeded")
	}
}

func TestBuildCachesAndLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	a := Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
	b := Build(t, "github.com/rocketd/rocketd/cmd/rocketd")
	if a == b {
		t.Fatalf("both calls returned %s", a)
	}
	p := Start(t, b, "--help")
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("rocketd --help did not exit")
	}
	if p.Log() == "" {
		t.Fatal("rocketd --help printed nothing")
	}
}
