package client

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// notification is one consumer group change to announce to the channels
// the group had right after it.
type notification struct {
	group    string
	channels []Channel
}

// notifyJob is one NOTIFY_CONSUMER_IDS_CHANGED to send: comparable, so a
// job already queued absorbs the same one queued again.
type notifyJob struct {
	ch    Channel
	group string
}

// notifier sends NOTIFY_CONSUMER_IDS_CHANGED off the caller's goroutine. A
// send can block (a peer that stopped reading fills its write queue), so it
// happens on a few worker goroutines, never under a registry lock. Jobs are
// deduplicated while queued: a burst of heartbeats of one group costs each
// member one notification, not one per heartbeat. When the queue is full a
// job is dropped: the clients still rebalance on their own timer (20 s).
type notifier struct {
	log      *slog.Logger
	grace    time.Duration
	disabled bool // broker-wide off switch: send drops everything
	jobs     chan notifyJob

	mu struct {
		sync.Mutex
		pending  map[notifyJob]struct{} // queued, not yet taken by a worker
		inflight map[Channel]int        // channels being written to now
		started  bool
		closed   bool
	}
	loops []lifecycle.Loop // the workers
}

func newNotifier(workers, queueLen int, grace time.Duration, disabled bool, log *slog.Logger) *notifier {
	n := &notifier{log: log, grace: grace, disabled: disabled,
		jobs: make(chan notifyJob, queueLen), loops: make([]lifecycle.Loop, max(workers, 0))}
	n.mu.pending = make(map[notifyJob]struct{})
	n.mu.inflight = make(map[Channel]int)
	return n
}

func (n *notifier) start() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.started || n.mu.closed {
		return
	}
	n.mu.started = true
	for i := range n.loops {
		n.loops[i].Start("client-notify", func(ctx context.Context) { n.work(ctx.Done()) })
	}
}

// send queues a notification to every channel of each note. It never
// blocks.
func (n *notifier) send(notes []notification) {
	if len(notes) == 0 || n.disabled {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.closed {
		return
	}
	for _, note := range notes {
		for _, ch := range note.channels {
			j := notifyJob{ch: ch, group: note.group}
			if _, ok := n.mu.pending[j]; ok {
				continue
			}
			select {
			case n.jobs <- j:
				n.mu.pending[j] = struct{}{}
			default:
				n.log.Warn("client: notification queue full, dropped", "group", note.group, "addr", ch.RemoteAddr())
			}
		}
	}
}

func (n *notifier) work(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case j := <-n.jobs:
			n.mu.Lock()
			delete(n.mu.pending, j)
			if n.mu.closed {
				n.mu.Unlock()
				return
			}
			n.mu.inflight[j.ch]++
			n.mu.Unlock()

			req := remoting.NewRequest(protocol.NotifyConsumerIdsChanged, map[string]string{"consumerGroup": j.group}, nil)
			req.MarkOneway() // InvokeOneway sets it too; a Channel need not
			if err := j.ch.InvokeOneway(req); err != nil {
				n.log.Debug("client: notify consumer ids changed failed", "group", j.group, "addr", j.ch.RemoteAddr(), "err", err)
			}

			n.mu.Lock()
			if n.mu.inflight[j.ch]--; n.mu.inflight[j.ch] <= 0 {
				delete(n.mu.inflight, j.ch)
			}
			n.mu.Unlock()
		}
	}
}

// close drops the queued jobs and stops the workers. A worker stuck writing
// to a peer that does not read gets the grace period, then its connection
// is closed, which fails the write.
func (n *notifier) close() {
	n.mu.Lock()
	n.mu.closed = true
	clear(n.mu.pending)
	n.mu.Unlock()
	for i := range n.loops {
		n.loops[i].Cancel()
	}
	// Every caller waits for the workers; each one stuck past the grace
	// period gets its connection closed (again, for a later caller: a no-op).
	t := time.NewTimer(n.grace)
	defer t.Stop()
	for i := range n.loops {
		select {
		case <-n.loops[i].Done():
			continue
		case <-t.C:
		}
		n.closeStuck()
		break
	}
	for i := range n.loops {
		n.loops[i].Close()
	}
}

// closeStuck closes the connections a notification is being written to.
func (n *notifier) closeStuck() {
	n.mu.Lock()
	stuck := make([]Channel, 0, len(n.mu.inflight))
	for ch := range n.mu.inflight {
		stuck = append(stuck, ch)
	}
	n.mu.Unlock()
	for _, ch := range stuck {
		n.log.Warn("client: closing a connection stuck on a notification", "addr", ch.RemoteAddr())
		_ = ch.Close()
	}
}
