package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// lowLimitEnv names the data directory of the child process started by
// TestLowDescriptorLimitOnDisk; its presence makes the test binary act as
// that child.
const lowLimitEnv = "ROCKETD_STORE_LOW_NOFILE_DIR"

// Issue 12 item 5 with a real file system: 1,500 new topics under a
// descriptor limit of 256 (the report: ulimit -n 2048 and 2,500 topics).
const (
	lowLimitNoFile = 256
	lowLimitTopics = 1500
)

// runLowLimitChildIfAsked is the child: it lowers its RLIMIT_NOFILE, opens
// a store with the default maxOpenConsumeQueueFiles (derived from the
// limit), sends one message to each of lowLimitTopics new topics, pulls
// them, restarts, pulls and sends again. It prints OK or what failed and
// exits.
func runLowLimitChildIfAsked() bool {
	dir := os.Getenv(lowLimitEnv)
	if dir == "" {
		return false
	}
	if err := lowLimitChild(dir); err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
	fmt.Println("OK")
	return true
}

func lowLimitChild(dir string) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	rl.Cur = lowLimitNoFile
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	cfg := Config{Dir: dir, FS: vfs.Default, SegmentSize: 1 << 20, CQUnitsPerFile: 1000,
		MaxMessageSize: 64 << 10, StoreHost: testStoreHost}
	topic := func(i int) string { return fmt.Sprintf("L%04d", i) }
	get := func(s *Store, i int, offset int64) error {
		r, err := s.GetMessage("g", topic(i), 0, offset, 1, nil)
		if err != nil {
			return fmt.Errorf("get %s@%d: %w", topic(i), offset, err)
		}
		defer r.Release()
		if r.Status != Found || len(r.Messages) != 1 {
			return fmt.Errorf("get %s@%d: %s", topic(i), offset, r.Status)
		}
		return nil
	}
	send := func(s *Store, i int) error {
		if res := s.PutMessage(context.Background(), newRecord(topic(i), 0, []byte(topic(i)), nil), PutOptions{}); res.Status != PutOK {
			return fmt.Errorf("put %s: %s (%s)", topic(i), res.Status, s.RefusalReason())
		}
		return nil
	}
	waitDispatch := func(s *Store) error {
		deadline := time.Now().Add(time.Minute)
		for s.DispatchedOffset() < s.CommitLogMaxOffset() {
			if time.Now().After(deadline) {
				return fmt.Errorf("dispatched %d of %d (%s)", s.DispatchedOffset(), s.CommitLogMaxOffset(), s.RefusalReason())
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	}

	s, err := Open(cfg)
	if err != nil {
		return err
	}
	if s.files.Max() >= lowLimitNoFile {
		return fmt.Errorf("derived cap %d does not leave room below the limit %d", s.files.Max(), lowLimitNoFile)
	}
	for i := 0; i < lowLimitTopics; i++ {
		if err := send(s, i); err != nil {
			return err
		}
	}
	if err := waitDispatch(s); err != nil {
		return err
	}
	for i := 0; i < lowLimitTopics; i++ {
		if err := get(s, i, 0); err != nil {
			return err
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	if s, err = Open(cfg); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	defer s.Close()
	for i := 0; i < lowLimitTopics; i += 7 {
		if err := get(s, i, 0); err != nil {
			return err
		}
		if err := send(s, i); err != nil {
			return err
		}
	}
	if err := waitDispatch(s); err != nil {
		return err
	}
	for i := 0; i < lowLimitTopics; i += 7 {
		if err := get(s, i, 1); err != nil {
			return err
		}
	}
	return s.Close()
}

// TestLowDescriptorLimitOnDisk runs the low-limit child (a process of its
// own, so the lowered limit touches no other test) on a real directory:
// sends to 1,500 new topics, dispatch, pulls, a restart, pulls and sends
// after it all succeed under RLIMIT_NOFILE 256.
func TestLowDescriptorLimitOnDisk(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lowLimitEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
