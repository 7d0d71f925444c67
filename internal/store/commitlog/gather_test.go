package commitlog

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/testutil/wait"
	"github.com/rocketd/rocketd/internal/vfs"
)

// writeProbe counts the writes to segment files (not to preallocations,
// "<name>.tmp").
type writeProbe struct{ writes atomic.Int64 }

func (p *writeProbe) MaybeError(op vfs.Op) error {
	if op.Kind == vfs.OpWrite && !strings.HasSuffix(op.Path, ".tmp") {
		p.writes.Add(1)
	}
	return nil
}

// TestGatherPutsShareOneWrite: ASYNC_FLUSH puts that say more follow
// (Gather) let the puts already runnable append first, so one write of
// the ring takes them all; without Gather each put writes its own record.
// On one processor the order of the goroutines is fixed, so the counts
// are exact. Every put is stored and readable either way.
func TestGatherPutsShareOneWrite(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const puts = 32
	for _, gather := range []bool{false, true} {
		t.Run(fmt.Sprintf("gather=%v", gather), func(t *testing.T) {
			probe := &writeProbe{}
			l := openLog(t, testConfig(vfs.NewErrorFS(vfs.NewMem(), probe), false))
			defer l.Close()
			// A committer that has not yet gone idle would take the puts'
			// writes itself.
			wait.For(t, 5*time.Second, "committer idle", l.committerIdle.Load)
			probe.writes.Store(0)
			var wg sync.WaitGroup
			offs := make([]int64, puts)
			for i := range puts {
				wg.Go(func() {
					res := l.Put(context.Background(), newRecord("T", 0, []byte(fmt.Sprint(i)), ""), PutOptions{Gather: gather})
					if res.Status != PutOK {
						t.Errorf("put %d: %v", i, res.Status)
					}
					offs[i] = res.WroteOffset
				})
			}
			wg.Wait()
			writes := probe.writes.Load()
			if gather && writes > 2 || !gather && writes < puts/2 {
				t.Errorf("%d puts made %d writes", puts, writes)
			}
			t.Logf("gather=%v: %d puts, %d writes", gather, puts, writes)
			for i, off := range offs {
				rec, buf, err := l.ReadRecordAt(off)
				if err != nil {
					t.Fatal(err)
				}
				if string(rec.Body) != fmt.Sprint(i) {
					t.Errorf("record %d reads %q", i, rec.Body)
				}
				buf.Release()
			}
		})
	}
}
