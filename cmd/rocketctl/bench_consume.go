package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// consumerRun is the state the queue loops of one `bench consume` share.
type consumerRun struct {
	c        *ctl
	o        benchOptions
	client   *remoting.Client
	rec      *latencyRecorder
	received atomic.Int64
	cancel   context.CancelFunc
	// firstActive is when the first pull that returned messages was sent,
	// lastReceipt when the latest message arrived (Unix ns, 0: none yet):
	// the window TPS is counted over.
	firstActive, lastReceipt atomic.Int64
	idleStop                 atomic.Bool // ended by --idle
}

func (c *ctl) benchConsume(ctx context.Context, o benchOptions, progress io.Writer) (*benchReport, error) {
	qs, err := c.readQueues(o.topic, -1)
	if err != nil {
		return nil, fmt.Errorf("bench consume: %w", err)
	}
	code := protocol.GetMaxOffset
	if o.fromBeginning {
		code = protocol.GetMinOffset
	}
	starts := make([]int64, len(qs))
	for i, q := range qs {
		if starts[i], err = c.queueOffset(q, o.topic, code); err != nil {
			return nil, fmt.Errorf("bench consume: %w", err)
		}
	}
	runCtx, cancel := benchContext(ctx, o)
	defer cancel()
	// One connection per broker for every queue, as a push consumer has.
	r := &consumerRun{c: c, o: o, rec: newLatencyRecorder(), cancel: cancel,
		client: remoting.NewClient(c.clientConfig(func(cc *remoting.ClientConfig) {
			cc.LazyResponseExt, cc.PooledResponseBodies = true, true
		}))}
	defer r.client.Close()
	stopProgress := runProgress("receive", r.rec, r.received.Load, progress, o.progress)
	start := time.Now()
	var wg sync.WaitGroup
	if o.count > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.watchIdle(runCtx, start)
		}()
	}
	errs := make([]error, len(qs))
	for i, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.pullLoop(runCtx, q, starts[i])
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if first, last := r.firstActive.Load(), r.lastReceipt.Load(); first != 0 && last > first {
		elapsed = time.Duration(last - first)
	}
	stopProgress()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("bench consume: %w", err)
	}
	n := r.received.Load()
	if o.count > 0 {
		n = min(n, o.count)
	}
	rep := &benchReport{Kind: "consume", Topic: o.topic, Messages: n, Bytes: r.rec.bytesTotal.Load(),
		FailedBy: r.rec.failuresByReason(), Latency: r.rec.summary(), LatencyOf: "end-to-end latency (born to receipt)"}
	rep.Failures = sumFailures(rep.FailedBy)
	rep.finish(elapsed)
	if r.idleStop.Load() {
		rep.Note = fmt.Sprintf("stopped after %s without a message: received %d of --count %d", o.idle, n, o.count)
	}
	return rep, nil
}

// watchIdle ends the run (with --count) once no message arrived for
// o.idle: after the first message, or from start with --from-beginning
// (a backlog that is already drained, or empty).
func (r *consumerRun) watchIdle(ctx context.Context, start time.Time) {
	tick := time.NewTicker(max(r.o.idle/8, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			since := start
			if last := r.lastReceipt.Load(); last != 0 {
				since = time.Unix(0, last)
			} else if !r.o.fromBeginning {
				continue // waiting for a producer to start
			}
			if now.Sub(since) >= r.o.idle {
				r.idleStop.Store(true)
				r.cancel()
				return
			}
		}
	}
}

// pullLoop long-polls one queue from offset until ctx ends or the count is
// reached.
func (r *consumerRun) pullLoop(ctx context.Context, q queue, offset int64) error {
	var sc message.Scanner
	sc.NoCopy = true
	h := protocol.PullMessageRequestHeader{ConsumerGroup: r.o.group, Topic: r.o.topic, QueueID: q.id,
		MaxMsgNums: r.o.pullBatch, SysFlag: protocol.PullFlagSubscription | protocol.PullFlagSuspend,
		SuspendTimeoutMillis: r.o.suspend.Milliseconds(), Subscription: "*", SubVersion: time.Now().UnixMilli(),
		ExpressionType: "TAG", BrokerName: q.broker}
	callTimeout := r.o.suspend + r.c.timeout
	var deadline pullDeadline
	defer deadline.stop()
	for ctx.Err() == nil {
		h.QueueOffset = offset
		sent := time.Now()
		callCtx := deadline.arm(ctx, callTimeout)
		// The typed header is encoded into the frame (no map); Invoke
		// is done with it when it returns.
		resp, err := r.client.Invoke(callCtx, q.addr, remoting.NewRequestHeader(protocol.PullMessage, &h, nil))
		timedOut := deadline.disarm()
		if err != nil {
			if ctx.Err() != nil {
				return nil // the run ended during a held pull
			}
			if timedOut {
				return fmt.Errorf("pull %s at %d: no response in %s: %w", q, offset, callTimeout, context.DeadlineExceeded)
			}
			return fmt.Errorf("pull %s at %d: %w", q, offset, err)
		}
		var rh protocol.PullMessageResponseHeader
		decodeErr := rh.DecodeFrom(resp)
		switch resp.Code {
		case protocol.Success:
			if decodeErr != nil {
				return fmt.Errorf("pull %s at %d: response header: %w", q, offset, decodeErr)
			}
			received := time.Now()
			n, err := r.recordBody(&sc, resp.Body, received.UnixMilli())
			resp.ReleaseBody() // nothing of it is kept
			if n > 0 {
				if total := r.received.Add(int64(n)); r.o.count > 0 && total >= r.o.count {
					r.cancel()
				}
			}
			if err != nil {
				return fmt.Errorf("pull %s at %d: body: %w", q, offset, err)
			}
			r.firstActive.CompareAndSwap(0, sent.UnixNano())
			r.lastReceipt.Store(received.UnixNano())
			if rh.NextBeginOffset <= offset {
				return fmt.Errorf("pull %s at %d: broker answered FOUND but next offset %d does not advance", q, offset, rh.NextBeginOffset)
			}
			offset = rh.NextBeginOffset
		case protocol.PullNotFound, protocol.PullRetryImmediately, protocol.PullOffsetMoved:
			if decodeErr == nil && rh.NextBeginOffset > offset {
				offset = rh.NextBeginOffset
			} else if resp.Code != protocol.PullNotFound && !sleepCtx(ctx, 50*time.Millisecond) {
				return nil
			}
		default:
			r.rec.fail(responseCodeName(resp.Code), 1)
			if !sleepCtx(ctx, 100*time.Millisecond) {
				return nil
			}
		}
	}
	return nil
}

// pullDeadline is the timeout of one queue loop's pulls without a context
// and a timer made per pull (context.WithTimeout, 3.5 % of the client's
// CPU reading a backlog): one cancelable context and one timer, re-armed
// for each pull, and made anew only after the timer fired.
type pullDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
	timer  *time.Timer
}

// arm returns the context of the next pull, canceled after d.
func (p *pullDeadline) arm(parent context.Context, d time.Duration) context.Context {
	if p.ctx == nil {
		p.stop()
		ctx, cancel := context.WithCancel(parent)
		p.ctx, p.cancel = ctx, cancel
		p.timer = time.AfterFunc(d, cancel)
		return ctx
	}
	p.timer.Reset(d)
	return p.ctx
}

// disarm stops the timer once the pull returned and reports whether it
// fired (the pull's context was canceled by the timeout, not by the run).
func (p *pullDeadline) disarm() bool {
	if p.timer.Stop() {
		return false
	}
	// Fired (its cancel may still be on its way): the next pull gets a
	// new context and timer.
	p.stop()
	return true
}

// stop releases the context and the timer.
func (p *pullDeadline) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.cancel != nil {
		p.cancel()
	}
	p.ctx, p.cancel, p.timer = nil, nil, nil
}

// recordBody decodes the records of one pull response's body and records
// them: one recorder call per run of records with the same latency and
// body size (a pull of a backlog written in batches is mostly one or two
// runs), not one per record, whose lock and five atomic updates the queue
// loops contended on. It returns the number of records.
func (r *consumerRun) recordBody(sc *message.Scanner, body []byte, nowMs int64) (int, error) {
	sc.Reset(body)
	n, runN := 0, 0
	var runLat int64
	var runSize int
	for sc.Next() {
		rec := sc.Record()
		lat, size := max(nowMs-rec.BornTimestamp, 0), len(rec.Body)
		if runN > 0 && (lat != runLat || size != runSize) {
			r.rec.record(time.Duration(runLat)*time.Millisecond, runN, runSize)
			runN = 0
		}
		runLat, runSize = lat, size
		runN++
		n++
	}
	if runN > 0 {
		r.rec.record(time.Duration(runLat)*time.Millisecond, runN, runSize)
	}
	return n, sc.Err()
}
