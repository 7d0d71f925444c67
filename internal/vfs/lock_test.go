package vfs

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

const javaLockChildEnv = "VFS_TEST_JAVA_LOCK_CHILD"

// javaLockChild runs in a child process: it takes the lock a Java broker
// takes on <root>/lock (FileChannel.tryLock(0, 1, false), a classic POSIX
// fcntl F_SETLK write lock on byte 0), says so, and holds it until its stdin
// closes.
func javaLockChild(name string) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(2)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		os.Stdout.WriteString("busy\n")
		os.Exit(0)
	}
	os.Stdout.WriteString("locked\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

func startLockChild(t *testing.T, name string) (string, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), javaLockChildEnv+"="+name)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("child: %v", err)
	}
	return line, func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	}
}

// TestLockExcludesJavaBroker checks both directions against the lock a Java
// broker holds, so the two can never share a data directory.
func TestLockExcludesJavaBroker(t *testing.T) {
	name := filepath.Join(t.TempDir(), "lock")

	state, release := startLockChild(t, name)
	if state != "locked\n" {
		t.Fatalf("child says %q", state)
	}
	if _, err := Default.Lock(name); !errors.Is(err, ErrLocked) {
		t.Fatalf("Lock while a Java-style lock is held: %v", err)
	}
	release()

	l, err := Default.Lock(name)
	if err != nil {
		t.Fatalf("Lock after the child exited: %v", err)
	}
	state, release = startLockChild(t, name)
	release()
	if state != "busy\n" {
		t.Fatalf("a Java-style lock succeeded while we hold ours: %q", state)
	}
	l.Close()
}
