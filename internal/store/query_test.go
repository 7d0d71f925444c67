package store

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store/index"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// queryKeys returns the bodies QueryMessage finds for key, oldest first.
func queryKeys(t *testing.T, s *Store, topic, key string) []string {
	t.Helper()
	r, err := s.QueryMessage(topic, key, 32, 0, 1<<62)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for b := r.Records; len(b) > 0; {
		rec, n, err := message.DecodeRecord(b, false)
		if err != nil {
			t.Fatalf("result record: %v", err)
		}
		bodies = append(bodies, string(rec.Body))
		b = b[n:]
	}
	if len(bodies) != r.Count {
		t.Fatalf("count %d, %d records", r.Count, len(bodies))
	}
	return bodies
}

func putKeyed(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		put(t, s, newRecord("K", int32(i%2), []byte("body-"+string(rune('a'+i))), map[string]string{
			message.PropertyKeys:                      "k" + string(rune('a'+i)) + " common",
			message.PropertyUniqClientMessageIDKeyIdx: "U" + string(rune('a'+i)),
		}))
	}
	waitDispatched(t, s)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestQueryMessageByKeyAndUniqKeyAcrossRestart(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s := openStore(t, cfg)
	putKeyed(t, s, 5)
	check := func(s *Store) {
		t.Helper()
		if got := queryKeys(t, s, "K", "kc"); !equalStrings(got, []string{"body-c"}) {
			t.Fatalf("key kc: %v", got)
		}
		if got := queryKeys(t, s, "K", "Ud"); !equalStrings(got, []string{"body-d"}) {
			t.Fatalf("uniq key Ud: %v", got)
		}
		if got := queryKeys(t, s, "K", "common"); !equalStrings(got, []string{"body-a", "body-b", "body-c", "body-d", "body-e"}) {
			t.Fatalf("key common: %v", got)
		}
		if got := queryKeys(t, s, "Other", "common"); len(got) != 0 {
			t.Fatalf("other topic: %v", got)
		}
	}
	check(s)
	r, _ := s.QueryMessage("K", "common", 2, 0, 1<<62)
	if r.Count != 2 || r.IndexLastUpdatePhyOffset <= 0 || r.IndexLastUpdateTimestamp <= 0 {
		t.Fatalf("maxNum 2: %+v", r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, cfg)
	check(s2)
	// New records continue the reopened index.
	put(t, s2, newRecord("K", 0, []byte("body-z"), map[string]string{message.PropertyKeys: "common"}))
	waitDispatched(t, s2)
	if got := queryKeys(t, s2, "K", "common"); len(got) != 6 || got[5] != "body-z" {
		t.Fatalf("after reopen: %v", got)
	}
	if n := len(s2.IndexFiles()); n != 1 {
		t.Fatalf("%d index files", n)
	}
}

func TestQueryMessageIndexDisabled(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	cfg.MessageIndexDisabled = true
	s := openStore(t, cfg)
	putKeyed(t, s, 2)
	if got := queryKeys(t, s, "K", "common"); len(got) != 0 {
		t.Fatalf("disabled index found %v", got)
	}
	if n := len(s.IndexFiles()); n != 0 {
		t.Fatalf("%d index files with messageIndexEnable=false", n)
	}
}

// TestIndexSafeRecoveryRebuilds: a crash loses the index file being
// written (Java deletes it too); with messageIndexSafe the recovery start is
// bounded by the index timestamp, so re-dispatch indexes everything again.
func TestIndexSafeRecoveryRebuilds(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.MessageIndexSafe = true
	cfg.FlushSync = true // the records survive the crash; the index does not
	s := openStore(t, cfg)
	putKeyed(t, s, 5)
	image := mem.CrashClone()
	s.Close()
	cfg.FS = image
	s2 := openStore(t, cfg)
	if s2.LastExitOK() {
		t.Fatal("abort file not seen")
	}
	if got := queryKeys(t, s2, "K", "common"); len(got) != 5 {
		t.Fatalf("after crash: %v", got)
	}
}

// TestIndexSealUpdatesCheckpointAndCleanup: a full index file sets the
// checkpoint's indexMsgTimestamp; index files below the CommitLog's min
// offset go with retention.
func TestIndexSealUpdatesCheckpointAndCleanup(t *testing.T) {
	mem := vfs.NewMem()
	clock := newSteppedClock()
	cfg := testConfig(mem)
	cfg.Clock = clock.Now
	cfg.MaxIndexNum = 20 // 19 keys per file
	cfg.CleanInterval = 10 * time.Millisecond
	cfg.FileReservedTime = time.Hour
	cfg.DeleteWhen = otherHour(clock.Now())
	s := openStore(t, cfg)
	for i := 0; i < 200; i++ { // 200 KiB: ~4 segments; 2 keys per record
		clock.Advance(10 * time.Millisecond)
		put(t, s, newRecord("C", 0, bodyFor(i, 1000), map[string]string{message.PropertyKeys: "x"}))
	}
	waitDispatched(t, s)
	files := s.IndexFiles()
	if len(files) < 10 {
		t.Fatalf("%d index files", len(files))
	}
	if ts := s.Checkpoint().IndexMsgTimestamp; ts != files[len(files)-2].Header.EndTimestamp {
		t.Fatalf("indexMsgTimestamp %d, want the last full file's end %d", ts, files[len(files)-2].Header.EndTimestamp)
	}
	before := len(files)
	clock.Advance(2 * time.Hour)
	rm, err := s.log.DeleteExpired(clock.Now().Add(-time.Hour), false, 2)
	if err != nil || rm.Files != 2 {
		t.Fatalf("deleted %d segments: %v", rm.Files, err)
	}
	minOff := s.CommitLogMinOffset()
	wait.For(t, 10*time.Second, "index cleanup", func() bool { return len(s.IndexFiles()) < before })
	for _, f := range s.IndexFiles()[:1] {
		if f.Header.EndPhyOffset < minOff {
			t.Fatalf("index file %s ends at %d below the commitlog min %d", f.Name, f.Header.EndPhyOffset, minOff)
		}
	}
	names, _ := mem.List(testDir + "/" + index.DirName)
	if len(names) != len(s.IndexFiles()) {
		t.Fatalf("%d files on disk, %d open", len(names), len(s.IndexFiles()))
	}
	if got := queryKeys(t, s, "C", "x"); len(got) == 0 {
		t.Fatal("nothing found after cleanup")
	}
}

// TestIndexWriteFailureBlocksDispatch: a failing index write blocks
// dispatch (puts refused, as Java's WRITE_INDEX_FILE_ERROR does) until it
// succeeds; nothing staged is lost.
func TestIndexWriteFailureBlocksDispatch(t *testing.T) {
	var fail atomic.Bool
	efs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if fail.Load() && op.Kind&(vfs.OpWrite|vfs.OpCreate) != 0 && strings.Contains(op.Path, "/"+index.DirName+"/") {
			return vfs.ErrInjected
		}
		return nil
	}))
	s := openStore(t, testConfig(efs))
	fail.Store(true)
	put(t, s, newRecord("K", 0, []byte("stuck"), map[string]string{message.PropertyKeys: "blocked"}))
	wait.For(t, 10*time.Second, "dispatch to block", func() bool { return strings.Contains(s.RefusalReason(), "index write error") })
	if res := s.PutMessage(context.Background(), newRecord("K", 0, []byte("x"), nil), PutOptions{}); res.Status != ServiceNotAvailable {
		t.Fatalf("put while the index cannot be written: %s", res.Status)
	}
	fail.Store(false)
	wait.For(t, 10*time.Second, "dispatch to resume", func() bool { return s.RefusalReason() == "" })
	waitDispatched(t, s)
	if got := queryKeys(t, s, "K", "blocked"); !equalStrings(got, []string{"stuck"}) {
		t.Fatalf("after resuming: %v", got)
	}
}
