package segment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
)

// Retry back-off of a failed preparation: the first retry after
// minRetryBackoff, each further one after twice the previous wait, at most
// maxRetryBackoff.
const (
	minRetryBackoff = time.Second
	maxRetryBackoff = 30 * time.Second
)

// allocator prepares the next segment file in the background (RocketMQ's
// AllocateMappedFileService; etcd's filePipeline) so that a roll under the
// CommitLog's put lock only takes a ready file.
//
// One job at a time: want is the offset asked for, ready the prepared file.
// get(want) waits for the job; get of another offset asks for that offset
// instead (throwing away a stale prepared file) and waits for it.
//
// A failed attempt is not repeated by every roll (on a full disk each retry
// of a 1 GiB zero-fill costs seconds of I/O and fills the disk again): the
// allocator keeps the error, retries by itself after a back-off (1 s
// doubling to 30 s), and until then get fails at once with a *BackoffError
// wrapping it. The wait ends early when space may be back: a file of the
// queue was deleted (retrySoon), or the free-space check that failed passes
// again when a roll asks.
type allocator struct {
	q *Queue

	mu       sync.Mutex
	cond     *sync.Cond
	running  bool
	want     int64 // -1: nothing asked
	working  bool
	ready    *File
	failed   error // the latest attempt's error; nil once one succeeds
	failures int   // consecutive failed attempts
	retryAt  time.Time
	// discarding counts stale files finish is deleting.
	discarding int

	svc lifecycle.Loop // the allocating goroutine; Kick makes it look again
}

// BackoffError is returned by Roll (and Prepare) while the allocator waits
// to retry a failed preparation. It wraps the failure: errors.Is(err,
// syscall.ENOSPC) tells a full disk (see IsDiskFull).
type BackoffError struct {
	Start    int64         // the file that could not be prepared
	Attempts int           // consecutive failed attempts
	RetryIn  time.Duration // until the next attempt
	Err      error         // the latest attempt's error
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("segment: file %s not prepared (%d failed attempts, next in %s): %v",
		Name(e.Start), e.Attempts, e.RetryIn.Round(time.Millisecond), e.Err)
}

func (e *BackoffError) Unwrap() error { return e.Err }

func newAllocator(q *Queue) *allocator {
	a := &allocator{q: q, want: -1}
	a.cond = sync.NewCond(&a.mu)
	return a
}

func (a *allocator) start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	// A closed allocator stays closed: Start refuses it.
	if !a.running && a.svc.Start("segment-allocator", func(ctx context.Context) { a.loop(ctx.Done()) }) {
		a.running = true
	}
}

// close stops the goroutine and removes a prepared file nobody took.
func (a *allocator) close() {
	a.mu.Lock()
	a.running = false
	a.mu.Unlock()
	a.svc.Close()
	a.mu.Lock()
	stale := a.ready
	a.ready, a.want = nil, -1
	a.cond.Broadcast()
	a.mu.Unlock()
	if stale != nil {
		a.q.discard(stale)
	}
}

func (a *allocator) loop(quit <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		a.mu.Lock()
		start, due, wait := a.nextJobLocked()
		if due {
			a.working = true
		}
		a.mu.Unlock()
		if due {
			f, err := a.q.create(start)
			a.finish(start, f, err)
			continue
		}
		var retry <-chan time.Time
		if wait > 0 {
			// A real timer even when Config.Now is fake: nextJobLocked
			// checks the back-off against Config.Now when it fires.
			timer.Reset(wait)
			retry = timer.C
		}
		select {
		case <-quit:
			return
		case <-a.svc.Kicked():
		case <-retry:
		}
		timer.Stop()
	}
}

// nextJobLocked reports whether an attempt for want is due now, or else how
// long until a failed one may be retried (0: nothing to wait for).
// REQUIRES: a.mu held.
func (a *allocator) nextJobLocked() (start int64, due bool, wait time.Duration) {
	if !a.running || a.want < 0 || a.ready != nil || a.working {
		return 0, false, 0
	}
	if a.failed != nil {
		if d := a.retryAt.Sub(a.q.cfg.Now()); d > 0 {
			return 0, false, d
		}
	}
	return a.want, true, 0
}

// finish records the outcome of an attempt.
func (a *allocator) finish(start int64, f *File, err error) {
	a.mu.Lock()
	a.working = false
	var stale *File
	var recovered, failures int
	var backoff time.Duration
	switch {
	case a.want != start || !a.running:
		stale = f
	case err == nil:
		if a.failed != nil {
			recovered = a.failures
		}
		a.ready, a.failed, a.failures = f, nil, 0
	default:
		a.failures++
		failures = a.failures
		a.failed = err
		backoff = min(minRetryBackoff<<min(a.failures-1, 16), maxRetryBackoff)
		a.retryAt = a.q.cfg.Now().Add(backoff)
	}
	if stale != nil {
		a.discarding++
	}
	a.mu.Unlock()
	// Waiters wake once a stale file is deleted (dropPrepared relies on it).
	defer a.cond.Broadcast()
	switch {
	case stale != nil:
		a.q.discard(stale)
		a.mu.Lock()
		a.discarding--
		a.mu.Unlock()
	case recovered > 0:
		a.q.cfg.Logger.Info("segment: next file prepared after failed attempts", "path", f.path, "failedAttempts", recovered)
	case failures > 0:
		// One line per attempt: the back-off bounds the rate.
		a.q.cfg.Logger.Error("segment: cannot prepare the next file; rolls fail until it is prepared",
			"file", Name(start), "diskFull", IsDiskFull(err), "attempt", failures, "retryIn", backoff, "err", err)
	}
}

// backoffErrLocked describes the current back-off. REQUIRES: a.mu held.
func (a *allocator) backoffErrLocked(start int64, now time.Time) error {
	return &BackoffError{Start: start, Attempts: a.failures, RetryIn: max(a.retryAt.Sub(now), 0), Err: a.failed}
}

// dropPrepared forgets the file asked for, waits for a preparation in
// progress and deletes the prepared file, durably (a truncated queue must
// not leave a file beyond its new end that a crash would turn into a gap).
func (a *allocator) dropPrepared() error {
	a.mu.Lock()
	a.want = -1
	for a.working || a.discarding > 0 {
		a.cond.Wait()
	}
	stale := a.ready
	a.ready = nil
	a.mu.Unlock()
	if stale == nil {
		return nil
	}
	if err := stale.unlinkNow(); err != nil {
		a.q.discard(stale)
		return err
	}
	a.q.discard(stale)
	if err := a.q.cfg.FS.SyncDir(a.q.cfg.Dir); err != nil {
		return fmt.Errorf("segment: sync dir %s: %w", a.q.cfg.Dir, err)
	}
	return nil
}

// wake makes the goroutine look at its state again.
func (a *allocator) wake() { a.svc.Kick() }

// prefetch asks for the file at start to be prepared in the background.
func (a *allocator) prefetch(start int64) {
	a.mu.Lock()
	if !a.running || a.want == start {
		a.mu.Unlock()
		return
	}
	stale := a.ready
	a.want, a.ready = start, nil
	a.mu.Unlock()
	if stale != nil {
		a.q.discard(stale)
	}
	a.wake()
}

// retrySoon ends a back-off: space may have come back (a file was deleted).
func (a *allocator) retrySoon() {
	a.mu.Lock()
	if a.failed == nil {
		a.mu.Unlock()
		return
	}
	a.retryAt = a.q.cfg.Now()
	a.mu.Unlock()
	a.wake()
}

// get returns the file at start: the prepared one, or the one the
// background goroutine prepares now. During a back-off it fails at once.
// With the allocator stopped (or not started) it creates the file here.
func (a *allocator) get(start int64) (*File, error) {
	f, err := a.await(start, true)
	if errors.Is(err, errNotRunning) {
		return a.createHere(start)
	}
	return f, err
}

// errNotRunning: the allocator is not started (or stopped).
var errNotRunning = errors.New("segment: allocator not running")

// await asks for start (unless asked already), waits for the attempt and
// returns the prepared file, taken when take is set (otherwise it stays
// ready and f is nil), or the back-off error.
func (a *allocator) await(start int64, take bool) (*File, error) {
	a.mu.Lock()
	if !a.running {
		a.mu.Unlock()
		return nil, errNotRunning
	}
	if a.want != start {
		stale := a.ready
		a.want, a.ready = start, nil
		a.mu.Unlock()
		if stale != nil {
			a.q.discard(stale)
		}
		a.wake()
		a.mu.Lock()
	}
	for {
		switch {
		case !a.running:
			a.mu.Unlock()
			return nil, errNotRunning
		case a.want != start:
			a.mu.Unlock()
			return nil, fmt.Errorf("segment: file %s: asked for another file concurrently", Name(start))
		case a.ready != nil:
			var f *File
			if take {
				f, a.ready, a.want = a.ready, nil, -1
			}
			a.mu.Unlock()
			return f, nil
		case !a.working && a.failed != nil:
			now := a.q.cfg.Now()
			if now.Before(a.retryAt) {
				if !a.failedForRoom() {
					err := a.backoffErrLocked(start, now)
					a.mu.Unlock()
					return nil, err
				}
				// The attempt failed the free-space check: retry as soon
				// as the space is there (a statfs, not a zero-fill).
				a.mu.Unlock()
				room := a.q.checkRoom() == nil
				a.mu.Lock()
				if !room {
					err := a.backoffErrLocked(start, now)
					a.mu.Unlock()
					return nil, err
				}
				a.retryAt = now
				continue // the state may have changed while unlocked
			}
			a.wake()
		}
		a.cond.Wait()
	}
}

// failedForRoom reports whether the latest attempt failed the free-space
// check (and so wrote nothing). REQUIRES: a.mu held.
func (a *allocator) failedForRoom() bool {
	var e *DiskFullError
	return errors.As(a.failed, &e)
}

// createHere creates the file synchronously (allocator not running): after
// a job still in progress on another offset ends.
func (a *allocator) createHere(start int64) (*File, error) {
	a.mu.Lock()
	for a.working {
		a.cond.Wait()
	}
	stale := a.ready
	a.ready, a.want = nil, -1
	a.mu.Unlock()
	if stale != nil {
		a.q.discard(stale)
	}
	return a.q.create(start)
}

// create makes the file for start: "<name>.tmp" sized (and zero-filled),
// synced, renamed into place, directory synced, reopened. A zero-filled
// file is only started when the disk has room for it (checkRoom).
func (q *Queue) create(start int64) (*File, error) {
	if q.cfg.CreateInPlace {
		return q.createInPlace(start)
	}
	name := filepath.Join(q.cfg.Dir, Name(start))
	tmp := name + tmpSuffix
	fsys := q.cfg.FS
	if q.cfg.ZeroFill {
		if err := q.checkRoom(); err != nil {
			return nil, fmt.Errorf("segment: create %s: %w", name, err)
		}
	}
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

// createInPlace makes the file for start directly under its name, sized,
// nothing synced (Config.CreateInPlace): the owner makes the entry durable.
func (q *Queue) createInPlace(start int64) (*File, error) {
	name := filepath.Join(q.cfg.Dir, Name(start))
	if err := q.cfg.FS.MkdirAll(q.cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("segment: create %s: mkdir: %w", name, err)
	}
	var (
		h   Handle
		err error
	)
	if q.cfg.Handles != nil {
		h, err = q.cfg.Handles.Create(name)
	} else {
		h, err = q.cfg.FS.Create(name)
	}
	if q.cfg.OnCreate != nil {
		q.cfg.OnCreate() // even on failure: the entry may exist
	}
	if err != nil {
		return nil, fmt.Errorf("segment: create %s: %w", name, err)
	}
	if err := h.Truncate(q.cfg.Size); err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("segment: create %s: size: %w", name, err)
	}
	return q.wrap(newFile(q.cfg.FS, name, h, start, q.cfg.Size)), nil
}
