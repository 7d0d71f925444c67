package commitlog

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/vfs"
)

// fakeReplica answers with a fixed status and records the offsets awaited.
type fakeReplica struct {
	status PutStatus
	mu     sync.Mutex
	ends   []int64
}

func (f *fakeReplica) Wait(ctx context.Context, end int64) PutStatus {
	f.mu.Lock()
	f.ends = append(f.ends, end)
	f.mu.Unlock()
	return f.status
}

func TestReplicaWait(t *testing.T) {
	cases := []struct {
		name    string
		sync    bool
		stall   bool // the disk flush times out
		replica PutStatus
		opts    PutOptions
		want    PutStatus
		waited  bool
	}{
		{"async, slave ok", false, false, PutOK, PutOptions{}, PutOK, true},
		{"async, slave timeout", false, false, FlushSlaveTimeout, PutOptions{}, FlushSlaveTimeout, true},
		{"sync, no slave", true, false, SlaveNotAvailable, PutOptions{}, SlaveNotAvailable, true},
		{"flush timeout, slave ok", true, true, PutOK, PutOptions{}, FlushDiskTimeout, true},
		{"flush timeout, slave timeout wins", true, true, FlushSlaveTimeout, PutOptions{}, FlushSlaveTimeout, true},
		{"no wait", true, false, FlushSlaveTimeout, PutOptions{NoWait: true}, PutOK, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probe := &syncProbe{}
			rep := &fakeReplica{status: c.replica}
			cfg := testConfig(vfs.NewErrorFS(vfs.NewMem(), probe), c.sync)
			cfg.Replica = rep
			cfg.SyncFlushTimeout = 20 * time.Millisecond
			l := openLog(t, cfg)
			gate := make(chan struct{})
			if c.stall {
				probe.setGate(gate)
			}
			res := l.Put(context.Background(), newRecord("T", 0, []byte("x"), ""), c.opts)
			if res.Status != c.want {
				t.Fatalf("status %v, want %v", res.Status, c.want)
			}
			rep.mu.Lock()
			waited := len(rep.ends) == 1 && rep.ends[0] == res.WroteOffset+int64(res.WroteBytes)
			rep.mu.Unlock()
			if waited != c.waited {
				t.Fatalf("replica waited for the record's end: %v, want %v", waited, c.waited)
			}
			probe.setGate(nil)
			close(gate)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
