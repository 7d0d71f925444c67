package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// childEnv names the data directory of a child process started by
// TestKillDuringSyncPuts; its presence makes the test binary act as that
// child instead of running tests.
const childEnv = "ROCKETD_STORE_KILL_CHILD_DIR"

func childConfig(dir string) Config {
	return Config{
		Dir:            dir,
		FS:             vfs.Default,
		SegmentSize:    256 << 10,
		CQUnitsPerFile: 1000,
		MaxMessageSize: 64 << 10,
		StoreHost:      testStoreHost,
		FlushSync:      true,
	}
}

// runChildIfAsked is the child: it opens the store, puts from four writers
// under SYNC_FLUSH and prints one line per acknowledged put until killed.
func runChildIfAsked() bool {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return false
	}
	s, err := Open(childConfig(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := 0; ; j++ {
				i := j*4 + w
				size := 64 + (i*131)%3000
				r := newRecord("Kill", int32(w), bodyFor(i, size), nil)
				res := s.PutMessage(context.Background(), r, PutOptions{})
				if res.Status != PutOK {
					continue
				}
				mu.Lock()
				fmt.Fprintf(out, "ACK %d %d %d %d %d %d\n", i, size, w, res.WroteOffset, res.WroteBytes, res.QueueOffset)
				out.Flush()
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	return true
}

// TestKillDuringSyncPuts starts a child process putting under SYNC_FLUSH,
// kills it with SIGKILL at a random moment, reopens its store and checks
// every put the child saw acknowledged.
func TestKillDuringSyncPuts(t *testing.T) {
	if testing.Short() {
		t.Skip("child process")
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := 0; round < 2; round++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acks []ack
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// Kill after a random number of acknowledged puts (200..2000), or a
		// deadline if the child is slow.
		killAfter := 200 + rng.IntN(1800)
		deadline := time.After(20 * time.Second)
		killed := false
		for !killed {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatal("child exited before being killed")
				}
				acks = append(acks, parseAck(t, line))
				if len(acks) >= killAfter {
					cmd.Process.Signal(syscall.SIGKILL)
					killed = true
				}
			case <-deadline:
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		for line := range lines { // acks printed before the kill landed
			if strings.HasPrefix(line, "ACK ") && strings.Count(line, " ") == 6 {
				acks = append(acks, parseAck(t, line))
			}
		}
		cmd.Wait()
		t.Logf("round %d (seed %d): killed after %d acknowledged puts", round, seed, len(acks))

		s, err := Open(childConfig(dir))
		if err != nil {
			t.Fatalf("reopen after kill: %v", err)
		}
		if s.LastExitOK() {
			t.Error("abort file missing after a kill")
		}
		verifyAcked(t, s, acks)
		checkNoUnitPastEnd(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func parseAck(t *testing.T, line string) ack {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != 7 || f[0] != "ACK" {
		t.Fatalf("bad child line %q", line)
	}
	n := make([]int64, 6)
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			t.Fatalf("bad child line %q", line)
		}
		n[i] = v
	}
	return ack{topic: "Kill", queueID: int32(n[2]), i: int(n[0]), size: int(n[1]),
		offset: n[3], wroteBytes: int32(n[4]), queueOffset: n[5]}
}
