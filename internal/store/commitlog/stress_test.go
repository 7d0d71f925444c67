package commitlog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/vfs"
)

// TestConcurrentPutReadDelete runs writers, readers of committed records,
// retention and the committer together: readers must only ever see whole,
// valid records at the offsets puts reported (or a clean "not available"
// once retention removed them), and OnCommit must see the committed end
// only grow.
func TestConcurrentPutReadDelete(t *testing.T) {
	var lastCommit atomic.Int64
	var commitWentBack atomic.Bool
	cfg := testConfig(vfs.NewMem(), false)
	cfg.OnCommit = func(c int64) {
		if c < lastCommit.Swap(c) {
			commitWentBack.Store(true)
		}
	}
	l := openLog(t, cfg)

	var mu sync.Mutex
	var written []PutResult
	var writers sync.WaitGroup
	for w := 0; w < 8; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 400; i++ {
				body := []byte(fmt.Sprintf("w%d-%d-%s", w, i, make([]byte, rng.IntN(3000))))
				res := l.Put(context.Background(), newRecord("S", int32(w), body, ""), PutOptions{NoWait: true})
				if res.Status != PutOK {
					t.Errorf("put: %v", res.Status)
					return
				}
				mu.Lock()
				written = append(written, res)
				mu.Unlock()
			}
		}()
	}
	stop := make(chan struct{})
	var others sync.WaitGroup
	for r := 0; r < 2; r++ {
		others.Add(1)
		go func() {
			defer others.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 10))
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				if len(written) == 0 {
					mu.Unlock()
					continue
				}
				res := written[rng.IntN(len(written))]
				mu.Unlock()
				if res.WroteOffset+int64(res.WroteBytes) > l.Committed() {
					continue
				}
				buf, err := l.Read(res.WroteOffset, res.WroteBytes)
				if errors.Is(err, ErrOffsetNotAvailable) {
					continue // deleted by retention
				}
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				rec, _, err := message.DecodeRecord(buf.Bytes, true)
				if err != nil || rec.PhysicalOffset != res.WroteOffset {
					t.Errorf("record at %d: %v", res.WroteOffset, err)
				}
				buf.Release()
			}
		}()
	}
	others.Add(1)
	go func() {
		defer others.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if _, err := l.DeleteExpired(time.Time{}, true, 1); err != nil {
				t.Errorf("delete: %v", err)
			}
		}
	}()
	writers.Wait()
	close(stop)
	others.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if commitWentBack.Load() {
		t.Fatal("OnCommit saw the committed end go back")
	}
	if lastCommit.Load() != l.MaxOffset() {
		t.Fatalf("last OnCommit %d, end %d", lastCommit.Load(), l.MaxOffset())
	}
}
