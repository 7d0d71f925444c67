package segment

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"sync"
)

// allocator prepares the next segment file in the background (RocketMQ's
// AllocateMappedFileService; etcd's filePipeline) so that a roll under the
// CommitLog's put lock only takes a ready file.
//
// One job at a time: want is the offset asked for, ready/readyErr its
// outcome. get(want) waits for the job; get of any other offset creates the
// file synchronously (and throws away a stale prepared one).
type allocator struct {
	q *Queue

	mu       sync.Mutex
	cond     *sync.Cond
	running  bool
	want     int64 // -1: nothing asked
	working  bool
	ready    *File
	readyErr error

	kick chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newAllocator(q *Queue) *allocator {
	a := &allocator{q: q, want: -1, kick: make(chan struct{}, 1)}
	a.cond = sync.NewCond(&a.mu)
	return a
}

func (a *allocator) start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running || a.quit != nil {
		return
	}
	a.running = true
	a.quit = make(chan struct{})
	a.done = make(chan struct{})
	go pprof.Do(context.Background(), pprof.Labels("rocketd", "segment-allocator"), func(context.Context) { a.loop() })
}

// close stops the goroutine and removes a prepared file nobody took.
func (a *allocator) close() {
	a.mu.Lock()
	running := a.running
	a.running = false
	a.mu.Unlock()
	if running {
		close(a.quit)
		<-a.done
	}
	a.mu.Lock()
	stale := a.ready
	a.ready, a.readyErr, a.want = nil, nil, -1
	a.cond.Broadcast()
	a.mu.Unlock()
	if stale != nil {
		a.q.discard(stale)
	}
}

func (a *allocator) loop() {
	defer close(a.done)
	for {
		select {
		case <-a.quit:
			return
		case <-a.kick:
		}
		a.mu.Lock()
		start := a.want
		if start < 0 || a.ready != nil || a.readyErr != nil {
			a.mu.Unlock()
			continue
		}
		a.working = true
		a.mu.Unlock()

		f, err := a.q.create(start)

		a.mu.Lock()
		a.working = false
		var stale *File
		if a.want == start && a.running {
			a.ready, a.readyErr = f, err
		} else {
			stale = f
		}
		a.cond.Broadcast()
		a.mu.Unlock()
		if stale != nil {
			a.q.discard(stale)
		}
	}
}

// prefetch asks for the file at start to be prepared in the background.
func (a *allocator) prefetch(start int64) {
	a.mu.Lock()
	if !a.running || a.want == start {
		a.mu.Unlock()
		return
	}
	stale := a.ready
	a.want, a.ready, a.readyErr = start, nil, nil
	a.mu.Unlock()
	if stale != nil {
		a.q.discard(stale)
	}
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// get returns the file at start: the prepared one, or one made now.
func (a *allocator) get(start int64) (*File, error) {
	a.mu.Lock()
	if a.running && a.want == start {
		for a.running && a.want == start && a.ready == nil && a.readyErr == nil {
			a.cond.Wait()
		}
		if a.want == start && (a.ready != nil || a.readyErr != nil) {
			f, err := a.ready, a.readyErr
			a.ready, a.readyErr, a.want = nil, nil, -1
			a.mu.Unlock()
			if err != nil {
				// The background attempt failed; try once more here so
				// that a transient error does not fail the roll.
				return a.q.create(start)
			}
			return f, nil
		}
	}
	// Not asked for (first roll, or the allocator is stopped): wait for a
	// job in progress on another offset to end, then create it here.
	for a.working {
		a.cond.Wait()
	}
	stale := a.ready
	a.ready, a.readyErr, a.want = nil, nil, -1
	a.mu.Unlock()
	if stale != nil {
		a.q.discard(stale)
	}
	return a.q.create(start)
}

// create makes the file for start: "<name>.tmp" sized (and zero-filled),
// synced, renamed into place, directory synced, reopened.
func (q *Queue) create(start int64) (*File, error) {
	name := filepath.Join(q.cfg.Dir, Name(start))
	tmp := name + tmpSuffix
	fsys := q.cfg.FS
	fail := func(step string, err error) (*File, error) {
		_ = fsys.Remove(tmp)
		return nil, fmt.Errorf("segment: create %s: %s: %w", name, step, err)
	}
	vf, err := fsys.Create(tmp)
	if err != nil {
		return fail("create", err)
	}
	if err := vf.Truncate(q.cfg.Size); err != nil {
		_ = vf.Close()
		return fail("truncate", err)
	}
	if q.cfg.ZeroFill {
		if err := zeroFill(vf, q.cfg.Size); err != nil {
			_ = vf.Close()
			return fail("zero-fill", err)
		}
	}
	if err := vf.Sync(); err != nil {
		_ = vf.Close()
		return fail("sync", err)
	}
	if err := vf.Close(); err != nil {
		return fail("close", err)
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return fail("rename", err)
	}
	if err := fsys.SyncDir(q.cfg.Dir); err != nil {
		return nil, fmt.Errorf("segment: create %s: sync dir: %w", name, err)
	}
	vf, err = fsys.OpenReadWrite(name)
	if err != nil {
		return nil, fmt.Errorf("segment: create %s: reopen: %w", name, err)
	}
	return q.wrap(newFile(fsys, name, vf, start, q.cfg.Size)), nil
}

// discard closes and deletes a prepared file that will not be used.
func (q *Queue) discard(f *File) {
	f.removed.Store(true)
	f.Release()
}
