package commitlog

import (
	"context"
	"runtime/pprof"
)

// run runs a long-lived loop with a pprof label naming it.
func (l *Log) run(name string, loop func()) {
	pprof.Do(context.Background(), pprof.Labels("rocketd", name), func(context.Context) { loop() })
}

// commitLoop is the committer (ASYNC_FLUSH): it writes the ring to the
// current segment whenever data is pending. It marks itself idle before
// waiting so that a put wakes it only when it is not already busy; an idle
// committer is woken by the first put, a busy one keeps looping while data
// is pending, so light traffic is not held back and heavy traffic is
// written in large chunks.
func (l *Log) commitLoop() {
	defer close(l.committer.done)
	for {
		l.committerIdle.Store(true)
		if l.committed.Load() >= l.head.Load() {
			select {
			case <-l.committer.quit:
				return
			case <-l.committer.kick:
			}
		}
		l.committerIdle.Store(false)
		l.commitMu.Lock()
		err := l.commitLocked()
		l.commitMu.Unlock()
		if err != nil {
			// Sticky: puts are refused from now on. Wait for Close.
			<-l.committer.quit
			return
		}
	}
}

// kickCommitter wakes the committer if it is idle (ASYNC_FLUSH).
func (l *Log) kickCommitter() {
	if l.committerIdle.Load() {
		l.committer.wake()
	}
}

// commitLocked writes the ring's pending bytes [committed, head) to the
// current segment in chunks of at most commitChunk, advancing the committed
// position after each, then calls OnCommit.
// REQUIRES: commitMu held.
func (l *Log) commitLocked() error {
	if err := l.stickyErr(); err != nil {
		return err
	}
	cur := l.cur.Load()
	tail := l.committed.Load()
	head := l.head.Load()
	if cur == nil || tail >= head {
		return nil
	}
	size := int64(len(l.ring))
	for tail < head {
		i := tail % size
		n := min(head-tail, int64(commitChunk), size-i)
		if err := cur.WriteAt(l.ring[i:i+n], tail-cur.Start()); err != nil {
			return l.fail(err)
		}
		tail += n
		cur.SetWrote(max(cur.Wrote(), tail-cur.Start()))
		cur.SetCommitted(tail - cur.Start())
		l.committed.Store(tail)
	}
	if l.cfg.OnCommit != nil {
		l.cfg.OnCommit(tail)
	}
	return nil
}
