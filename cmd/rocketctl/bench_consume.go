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
		client: remoting.NewClient(remoting.ClientConfig{DialTimeout: c.timeout, BeforeRequest: c.sign})}
	defer r.client.Close()
	stopProgress := runProgress("receive", r.rec, r.received.Load, progress, o.progress)
	start := time.Now()
	var wg sync.WaitGroup
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
	return rep, nil
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
	for ctx.Err() == nil {
		h.QueueOffset = offset
		callCtx, cancel := context.WithTimeout(ctx, r.o.suspend+r.c.timeout)
		resp, err := r.client.Invoke(callCtx, q.addr, remoting.NewRequest(protocol.PullMessage, protocol.Ext(&h), nil))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil // the run ended during a held pull
			}
			return fmt.Errorf("pull %s at %d: %w", q, offset, err)
		}
		var rh protocol.PullMessageResponseHeader
		decodeErr := rh.Decode(resp.ExtFields)
		switch resp.Code {
		case protocol.Success:
			if decodeErr != nil {
				return fmt.Errorf("pull %s at %d: response header: %w", q, offset, decodeErr)
			}
			now := time.Now().UnixMilli()
			sc.Reset(resp.Body)
			for sc.Next() {
				rec := sc.Record()
				r.rec.record(time.Duration(max(now-rec.BornTimestamp, 0))*time.Millisecond, 1, len(rec.Body))
				if n := r.received.Add(1); r.o.count > 0 && n >= r.o.count {
					r.cancel()
				}
			}
			if err := sc.Err(); err != nil {
				return fmt.Errorf("pull %s at %d: body: %w", q, offset, err)
			}
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
