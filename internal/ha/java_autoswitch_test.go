package ha

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// javaStoreLib is where .ci/run keeps the Apache RocketMQ 5.2.0 jars; the
// test fails under CI=true when they or java are missing.
func javaStoreLib(t *testing.T) string {
	t.Helper()
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "rocketd-bench", "rocketmq-5.2.0")
		if jars, _ := filepath.Glob(filepath.Join(dir, "rocketmq-store-*.jar")); len(jars) > 0 {
			if _, err := exec.LookPath("java"); err == nil {
				return dir
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("java and the RocketMQ 5.2.0 jars (~/.cache/rocketd-bench/rocketmq-5.2.0) are required")
	}
	t.Skip("java or the RocketMQ 5.2.0 jars are missing")
	return ""
}

// startJavaPeer runs testdata/java/AutoSwitchPeer.java: Java's own
// DefaultMessageStore and AutoSwitchHAService.
func startJavaPeer(t *testing.T, lib, name string, args ...string) *proc.Process {
	t.Helper()
	home := t.TempDir()
	return proc.StartNamed(t, name, "java", append([]string{"-Xms128m", "-Xmx384m", "-XX:MaxDirectMemorySize=256m",
		"--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
		"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
		"--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
		"-Duser.home=" + home, "-Drocketmq.home.dir=" + home, "-Dlogback.configurationFile=/nonexistent",
		"-cp", filepath.Join(lib, "*"), filepath.Join("testdata", "java", "AutoSwitchPeer.java")}, args...)...)
}

// sameAsJavaFiles compares the Java store's CommitLog files under dir with
// s's log over [first file, end).
// readableTo reports whether the store's log can be read up to end (an
// appended record is readable once the committer has written it).
func readableTo(s *store.Store, end int64) bool {
	buf, err := s.ReadRaw(end-1, 1)
	if err != nil {
		return false
	}
	defer buf.Release()
	return len(buf.Bytes) == 1
}

func sameAsJavaFiles(t *testing.T, dir string, s *store.Store, end int64) {
	t.Helper()
	files, err := os.ReadDir(filepath.Join(dir, "commitlog"))
	if err != nil {
		t.Fatal(err)
	}
	checked := int64(0)
	for _, f := range files {
		start, err := strconv.ParseInt(f.Name(), 10, 64)
		if err != nil || start >= end {
			continue
		}
		jb, err := os.ReadFile(filepath.Join(dir, "commitlog", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		jb = jb[:min(int64(len(jb)), end-start)]
		for off := int64(0); off < int64(len(jb)); {
			buf, err := s.ReadRaw(start+off, len(jb)-int(off))
			if err != nil || len(buf.Bytes) == 0 {
				t.Fatalf("read rocketd log at %d: %v", start+off, err)
			}
			n := int64(len(buf.Bytes))
			same := bytes.Equal(buf.Bytes, jb[off:off+n])
			buf.Release()
			if !same {
				t.Fatalf("Java's file %s and rocketd's log differ in [%d, %d)", f.Name(), start+off, start+off+n)
			}
			off += n
		}
		checked += int64(len(jb))
	}
	if checked != end {
		t.Fatalf("compared %d bytes of Java's CommitLog, want %d", checked, end)
	}
}

// TestJavaInteropAutoSwitch proves the AutoSwitch wire against Apache
// RocketMQ 5.2.0's own AutoSwitchHAClient and AutoSwitchHAConnection
// (its DefaultMessageStore with enableControllerMode=true, run by
// testdata/java/AutoSwitchPeer.java):
//
//   - a Java slave (broker id 2) replicates from a rocketd AutoSwitch
//     master across two epochs and a segment end: byte-identical files,
//     Java's epoch file holds the master's entries, the master sees its
//     acks by broker id and the Java slave received the confirm offset;
//   - a Java slave that was master of epochs 2 and 3 meanwhile returns to
//     a rocketd master of epoch 4 and cuts its log to the end of epoch 1
//     (Java's findConsistentPoint against rocketd's handshake);
//   - a rocketd slave replicates from a Java AutoSwitch master (epochs 2
//     and 3, re-elected mid-log: Java names epoch 3 on the last transfer
//     of epoch 2): the same bytes, epoch entries and confirm offset.
func TestJavaInteropAutoSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("JVM processes")
	}
	lib := javaStoreLib(t)

	t.Run("JavaSlave", func(t *testing.T) {
		m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{LocalBrokerID: 1})
		putN(t, m, "GoMaster", 600, 2)
		if err := m.Epochs().Append(3, m.CommitLogMaxOffset()); err != nil {
			t.Fatal(err)
		}
		putN(t, m, "GoMaster", 600, 2)
		end := m.CommitLogMaxOffset()
		if end <= testSegment {
			t.Fatalf("log of %d bytes stays in one segment", end)
		}
		srv.SetSyncStateSet([]int64{1, 2})
		dir := t.TempDir()
		p := startJavaPeer(t, lib, "java-slave", "slave", dir, strconv.Itoa(testSegment), srv.Addr().String(), "3", "2", strconv.FormatInt(end, 10))
		select {
		case <-p.Exited():
		case <-time.After(120 * time.Second):
			t.Fatalf("Java slave still running:\n%s", p.Log())
		}
		if err := p.Err(); err != nil {
			t.Fatalf("Java slave: %v\n%s", err, p.Log())
		}
		mm := regexp.MustCompile(`CAUGHT UP (\d+) (-?\d+)`).FindStringSubmatch(p.Log())
		if mm == nil || mm[1] != strconv.FormatInt(end, 10) || mm[2] != strconv.FormatInt(end, 10) {
			t.Fatalf("Java slave did not report end and confirm offset %d:\n%s", end, p.Log())
		}
		if got, want := javaEpochs(p.Log()), epochsOf(m); !slices.Equal(got, want) {
			t.Fatalf("Java slave's epochs %v, want %v", got, want)
		}
		sameAsJavaFiles(t, dir, m, end)
		// The Java slave saw the confirm offset at the end: the master
		// had its ack of the end as broker 2. It has left since; the
		// confirm offset stays and its caught-up time is kept.
		in := srv.SlaveInfos()
		if len(in) != 1 || in[0].BrokerID != 2 || in[0].LastCaughtUp.IsZero() || srv.ConfirmOffset() != end {
			t.Fatalf("master's view of the Java slave %+v, confirm offset %d, want broker 2 caught up, %d", in, srv.ConfirmOffset(), end)
		}
	})

	t.Run("JavaSlaveTruncates", func(t *testing.T) {
		// The Java broker replicates epoch 1 from rocketd, is then
		// master itself (epochs 2 and 3) for records rocketd never gets,
		// and returns as a slave of rocketd re-elected with epoch 4: it
		// must cut its log back to the end of epoch 1.
		m, srv := newASMaster(t, t.TempDir(), 1, ServerConfig{LocalBrokerID: 1})
		putN(t, m, "GoMaster", 300, 2)
		x1 := m.CommitLogMaxOffset()
		dir := t.TempDir()
		seg := strconv.Itoa(testSegment)
		runJava := func(name string, args ...string) *proc.Process {
			p := startJavaPeer(t, lib, name, args...)
			select {
			case <-p.Exited():
			case <-time.After(120 * time.Second):
				t.Fatalf("%s still running:\n%s", name, p.Log())
			}
			if err := p.Err(); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, p.Log())
			}
			return p
		}
		runJava("java-slave-1", "slave", dir, seg, srv.Addr().String(), "1", "2", strconv.FormatInt(x1, 10))
		jm := runJava("java-master", "master", dir, seg, strconv.Itoa(proc.FreePort(t)), "2", "200", "exit")
		if ep := javaEpochs(jm.Log()); len(ep) != 3 || ep[1] != [2]int64{2, x1} {
			t.Fatalf("Java epochs %v, want 1@0 2@%d 3@...", ep, x1)
		}
		if err := m.Epochs().Append(4, x1); err != nil {
			t.Fatal(err)
		}
		putN(t, m, "GoMaster", 900, 2)
		end := m.CommitLogMaxOffset()
		p := runJava("java-slave-2", "slave", dir, seg, srv.Addr().String(), "4", "2", strconv.FormatInt(end, 10))
		if !regexp.MustCompile(`CAUGHT UP ` + strconv.FormatInt(end, 10) + " ").MatchString(p.Log()) {
			t.Fatalf("Java slave did not reach %d:\n%s", end, p.Log())
		}
		if got, want := javaEpochs(p.Log()), epochsOf(m); !slices.Equal(got, want) {
			t.Fatalf("Java slave's epochs %v, want %v", got, want)
		}
		sameAsJavaFiles(t, dir, m, end)
	})

	t.Run("JavaMaster", func(t *testing.T) {
		port := proc.FreePort(t)
		dir := t.TempDir()
		p := startJavaPeer(t, lib, "java-master", "master", dir, strconv.Itoa(testSegment), strconv.Itoa(port), "2", "1200")
		p.WaitLog(t, "MASTER READY", 120*time.Second)
		mm := regexp.MustCompile(`MASTER READY (\d+)`).FindStringSubmatch(p.Log())
		end, _ := strconv.ParseInt(mm[1], 10, 64)
		s := newSlaveStore(t, t.TempDir())
		c := startASClient(t, s, fmt.Sprintf("127.0.0.1:%d", port), 2, nil)
		wait.For(t, 60*time.Second, "the rocketd slave at the Java master's end, readable", func() bool {
			return s.CommitLogMaxOffset() == end && c.ConfirmOffset() == end && readableTo(s, end)
		})
		sameAsJavaFiles(t, dir, s, end)
		if got, want := epochsOf(s), javaEpochs(p.Log()); len(want) != 2 || !slices.Equal(got, want) {
			t.Fatalf("epochs %v, want the Java master's %v", got, want)
		}
		_ = c.Close()
		_ = p.Stop(t)
	})
}

// javaEpochs parses AutoSwitchPeer's "EPOCH <epoch> <start>" lines.
func javaEpochs(log string) [][2]int64 {
	var out [][2]int64
	for _, e := range regexp.MustCompile(`EPOCH (\d+) (\d+)`).FindAllStringSubmatch(log, -1) {
		ep, _ := strconv.ParseInt(e[1], 10, 32)
		st, _ := strconv.ParseInt(e[2], 10, 64)
		out = append(out, [2]int64{ep, st})
	}
	return out
}
