package ha

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

var (
	masterHost = netip.MustParseAddrPort("127.0.0.1:10911")
	bornHost   = netip.MustParseAddrPort("10.0.0.1:5000")
)

// testSegment is small enough that tests cross segment ends (BLANK fillers,
// rolls on the slave).
const testSegment = 256 << 10

func storeConfig(dir string) store.Config {
	return store.Config{
		Dir:             dir,
		FS:              vfs.Default,
		SegmentSize:     testSegment,
		CQUnitsPerFile:  1000,
		MaxMessageSize:  64 << 10,
		StoreHost:       masterHost,
		CQFlushInterval: 20 * time.Millisecond,
		FlushInterval:   20 * time.Millisecond,
	}
}

func openStore(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(cfg)
	if err != nil {
		t.Fatalf("open store %s: %v", cfg.Dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// pair is a master store with its HA server, and a slave store.
type pair struct {
	master *store.Store
	srv    *Server
	slave  *store.Store
}

// newMaster opens a master store whose Replica is a started HA server.
func newMaster(t testing.TB, dir string, scfg ServerConfig, tune ...func(*store.Config)) (*store.Store, *Server) {
	t.Helper()
	cfg := storeConfig(dir)
	for _, f := range tune {
		f(&cfg)
	}
	scfg.Addr = "127.0.0.1:0"
	scfg.SegmentSize = cfg.SegmentSize
	srv := NewServer(scfg)
	cfg.Replica = srv
	m := openStore(t, cfg)
	if err := srv.Start(m); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return m, srv
}

func newSlaveStore(t testing.TB, dir string, tune ...func(*store.Config)) *store.Store {
	t.Helper()
	cfg := storeConfig(dir)
	for _, f := range tune {
		f(&cfg)
	}
	cfg.Slave = true
	return openStore(t, cfg)
}

func startClient(t testing.TB, sink Sink, masterAddr string, tune func(*ClientConfig)) *Client {
	t.Helper()
	cfg := ClientConfig{MasterAddr: func() string { return masterAddr }, RetryInterval: 20 * time.Millisecond}
	if tune != nil {
		tune(&cfg)
	}
	c := NewClient(cfg)
	if err := c.Start(sink); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func record(topic string, queueID int32, i int) *message.Record {
	body := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i%300)
	copy(body, fmt.Sprintf("msg-%d-", i))
	return &message.Record{
		Topic: topic, QueueID: queueID, Body: body,
		BornTimestamp: 1_700_000_000_000, BornHost: bornHost,
		Properties: message.EncodeProperties(map[string]string{"TAGS": "t", "UNIQ_KEY": fmt.Sprintf("K%08d", i)}),
	}
}

// putN puts n messages from workers goroutines over 4 queues and returns
// the statuses seen.
func putN(t testing.TB, s *store.Store, topic string, n, workers int) map[store.PutStatus]int {
	t.Helper()
	var mu sync.Mutex
	seen := map[store.PutStatus]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				res := s.PutMessage(context.Background(), record(topic, int32(i%4), i), store.PutOptions{})
				mu.Lock()
				seen[res.Status]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return seen
}

// caughtUp waits until the slave's log ends where the master's does and
// its dispatcher has built the queues from all of it.
func caughtUp(t testing.TB, master, slave *store.Store) {
	t.Helper()
	wait.For(t, 30*time.Second, "slave to catch up", func() bool {
		end := master.CommitLogMaxOffset()
		return slave.CommitLogMaxOffset() == end && slave.DispatchedOffset() == end
	})
}

// sameCommitLog compares every CommitLog segment of the slave with the
// master's file of the same name, byte for byte, and checks the slave's
// files are the master's newest ones.
func sameCommitLog(t testing.TB, master, slave *store.Store) {
	t.Helper()
	// Committed data reaches the files through the committer; after catch
	// up both logs are committed (readable) to the end.
	mdir := filepath.Join(master.Dir(), store.CommitLogDir)
	sdir := filepath.Join(slave.Dir(), store.CommitLogDir)
	sfiles, err := os.ReadDir(sdir)
	if err != nil {
		t.Fatal(err)
	}
	mfiles, err := os.ReadDir(mdir)
	if err != nil {
		t.Fatal(err)
	}
	// The master may hold older segments (an empty slave starts at its
	// last one). Either side's allocator may be preparing the next segment
	// in the background ("<name>.tmp") or have finished it: only segments
	// that start below the slave's end hold copied data.
	end := slave.CommitLogMaxOffset()
	compared := 0
	for _, f := range sfiles {
		start, err := strconv.ParseInt(f.Name(), 10, 64)
		if err != nil || len(f.Name()) != 20 || start >= end {
			continue
		}
		compared++
		sb, err := os.ReadFile(filepath.Join(sdir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		mb, err := os.ReadFile(filepath.Join(mdir, f.Name()))
		if err != nil {
			t.Fatalf("slave segment %s not on the master: %v", f.Name(), err)
		}
		if !bytes.Equal(sb, mb) {
			i := 0
			for i < min(len(sb), len(mb)) && sb[i] == mb[i] {
				i++
			}
			t.Fatalf("segment %s differs at byte %d (slave %d bytes, master %d)", f.Name(), i, len(sb), len(mb))
		}
	}
	if compared == 0 || len(mfiles) < compared {
		t.Fatalf("slave has %d data segments (of %d files), master %d files", compared, len(sfiles), len(mfiles))
	}
}
