package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/rocketd/rocketd/internal/pace"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// producerRun is the state the workers of one `bench produce` share.
type producerRun struct {
	c      *ctl
	o      benchOptions
	qs     []queue
	body   []byte
	rec    *latencyRecorder
	parts  *pacedParts  // with --rate: the latency's wait and round trip
	issued atomic.Int64 // messages claimed by workers (the --count budget)
	stored atomic.Int64 // messages the brokers acknowledged (or sent, oneway)

	// propsPrefix is the property string of every message up to the
	// UNIQ_KEY value, which each message appends.
	propsPrefix string
	// batchProps is a batch request's own property string.
	batchProps string
	// errOut gets warnings that do not stop the run.
	errOut io.Writer
}

func (c *ctl) benchProduce(ctx context.Context, o benchOptions, progress io.Writer) (*benchReport, error) {
	qs, err := c.benchQueues(o)
	if err != nil {
		return nil, fmt.Errorf("bench produce: %w", err)
	}
	r := &producerRun{c: c, o: o, qs: qs, rec: newLatencyRecorder(), body: make([]byte, o.size),
		errOut: progress}
	if o.rate > 0 {
		r.parts = newPacedParts()
	}
	// Random bytes: a broker or disk that compresses must not look faster
	// than it is.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range r.body {
		r.body[i] = byte('a' + rng.IntN(26))
	}
	var prefix []byte
	if o.batch == 1 {
		prefix = message.AppendProperty(prefix, message.PropertyWaitStoreMsgOK, "true")
	}
	prefix = message.AppendProperty(prefix, message.PropertyTags, o.tags)
	prefix = message.AppendProperty(prefix, message.PropertyUniqClientMessageIDKeyIdx, "x")
	r.propsPrefix = string(prefix[:len(prefix)-1]) // ends "UNIQ_KEY\x01"
	r.batchProps = string(message.AppendProperty(nil, message.PropertyWaitStoreMsgOK, "true"))

	runCtx, cancel := benchContext(ctx, o)
	defer cancel()
	stopProgress := runProgress("send", r.rec, r.stored.Load, progress, o.progress)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, o.workers)
	for i := range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.work(runCtx, i)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("bench produce: %w", err)
	}
	rep := &benchReport{Kind: "produce", Mode: o.mode, Topic: o.topic, Size: o.size, Workers: o.workers,
		Batch: o.batch, Rate: o.rate, Messages: r.stored.Load(), Bytes: r.stored.Load() * int64(o.size),
		Failures: sumFailures(r.rec.failuresByReason()), FailedBy: r.rec.failuresByReason(),
		Latency: r.rec.summary(), LatencyOf: "send latency"}
	if o.rate > 0 {
		rep.LatencyOf = "send latency from due time"
		rep.Parts = r.parts.summary(rep.Latency.P99)
	}
	rep.finish(elapsed)
	return rep, nil
}

// benchQueues returns the queues the workers send to, round-robin: the
// topic's, or with --topic-count N those of topics <topic>0 .. <topic>N-1
// (the scale curves' many-topics layout).
func (c *ctl) benchQueues(o benchOptions) ([]queue, error) {
	if o.topics <= 1 {
		return c.writeQueues(o.topic)
	}
	var qs []queue
	for i := range o.topics {
		t := o.topic + strconv.Itoa(i)
		r, err := c.route(t)
		if err != nil {
			return nil, fmt.Errorf("topic %s: %w", t, err)
		}
		n := len(qs)
		qs = append(qs, queuesOf(r, true, 0)...)
		if len(qs) == n {
			return nil, fmt.Errorf("topic %s: no writable queue on a master", t)
		}
		for j := n; j < len(qs); j++ {
			qs[j].topic = t
		}
	}
	return qs, nil
}

func sumFailures(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// claim takes up to o.batch messages of the --count budget; 0 means done.
func (r *producerRun) claim() int {
	n := int64(r.o.batch)
	if r.o.count == 0 {
		return int(n)
	}
	end := r.issued.Add(n)
	if left := r.o.count - (end - n); left < n {
		return int(max(left, 0))
	}
	return int(n)
}

// work is one producer: its own connection, queues round-robin from its
// index, paced when --rate is set.
func (r *producerRun) work(ctx context.Context, idx int) error {
	// The bench reads only the response code: no ext map per response.
	client := remoting.NewClient(r.c.clientConfig(func(cc *remoting.ClientConfig) { cc.LazyResponseExt = true }))
	defer client.Close()
	ids := message.NewUniqIDGenerator(localIP(), os.Getpid(), int32(time.Now().UnixNano())+int32(idx))
	var sc sendScratch
	var inflight chan struct{} // async: one token per send in flight
	if r.o.mode == modeAsync {
		inflight = make(chan struct{}, r.o.window)
	}
	var interval time.Duration
	if r.o.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(r.o.workers*r.o.batch) / float64(r.o.rate))
	}
	// Paced waits use a precise timer: time.Sleep can return ~1 ms late on
	// an idle process, which would count as send latency (see package pace).
	waiter, werr := pace.NewWaiter()
	if werr != nil && idx == 0 {
		fmt.Fprintf(r.errOut, "bench: %v; pacing with time.Sleep (may be up to ~1 ms late)\n", werr)
	}
	defer waiter.Close()
	// Stagger the workers' schedules so paced sends do not come in bursts.
	due := time.Now().Add(interval * time.Duration(idx) / time.Duration(r.o.workers))
	var err error
	var ready time.Time // sync: when the previous send was answered
	for k := idx; ctx.Err() == nil; k++ {
		n := r.claim()
		if n == 0 {
			break
		}
		start := time.Now()
		if interval > 0 {
			if !waiter.WaitUntil(ctx, due) {
				break
			}
			start = due // latency counts from when the send was due
			due = due.Add(interval)
		}
		q := r.qs[k%len(r.qs)]
		req := r.request(q, ids, n, &sc)
		switch r.o.mode {
		case modeSync:
			callCtx, cancel := context.WithTimeout(context.Background(), r.c.timeout)
			sent := time.Now()
			resp, callErr := client.Invoke(callCtx, q.addr, req)
			cancel()
			ready = r.done(start, ready, sent, n, resp, callErr)
		case modeAsync:
			var ready time.Time // a full window held the send until then
			select {
			case inflight <- struct{}{}:
			default:
				select {
				case inflight <- struct{}{}:
				case <-ctx.Done():
					continue // the loop ends; no token was taken
				}
				ready = time.Now()
			}
			sent := time.Now()
			// The callback only records and frees a token: it runs on the
			// connection's reader, without a goroutine per send.
			sendErr := client.InvokeAsyncInline(q.addr, req, r.c.timeout, func(resp *remoting.Command, callErr error) {
				r.done(start, ready, sent, n, resp, callErr)
				<-inflight
			})
			if sendErr != nil {
				<-inflight
				r.rec.fail("transport", n)
			}
		case modeOneway:
			if sendErr := client.InvokeOneway(q.addr, req); sendErr != nil {
				r.rec.fail("transport", n)
				err = fmt.Errorf("oneway send to %s: %w", q.addr, sendErr)
			} else {
				r.rec.countOnly(n, r.o.size)
				r.stored.Add(int64(n))
			}
		}
		if err != nil {
			break
		}
	}
	// Wait for the answers still in flight.
	for range cap(inflight) {
		inflight <- struct{}{}
	}
	return err
}

// sleepCtx sleeps d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// done records the outcome of one send of n messages started (or due) at
// start, sendable at ready (see pacedParts) and handed to the transport at
// sent; it returns the time it read.
func (r *producerRun) done(start, ready, sent time.Time, n int, resp *remoting.Command, err error) time.Time {
	now := time.Now()
	switch {
	case err != nil:
		r.rec.fail("transport", n)
	case resp.Code != protocol.Success:
		r.rec.fail(responseCodeName(resp.Code), n)
	default:
		r.rec.record(now.Sub(start), n, r.o.size)
		if r.parts != nil {
			r.parts.record(start, ready, sent, now, n)
		}
		r.stored.Add(int64(n))
	}
	return now
}

// sendScratch is a worker's reusable request memory: the transport
// copies a request's header and body into its write buffer before the
// send call returns, so the next request may reuse them.
type sendScratch struct {
	props []byte // the property string being built
	body  []byte // a batch body
	// The request and its header: a send call sets the request's opaque
	// and flags, and is done with both when it returns, so one per worker
	// serves every send (two allocations less per send).
	hdr protocol.SendMessageRequestHeader
	cmd remoting.Command
}

// request builds one SEND_MESSAGE_V2 (or, for --batch > 1,
// SEND_BATCH_MESSAGE) of n messages to q, as the Java producer encodes it.
// The request is sc's, and its body may alias sc: both serve until the
// send call returned.
func (r *producerRun) request(q queue, ids *message.UniqIDGenerator, n int, sc *sendScratch) *remoting.Command {
	// One clock reading for the born timestamp and the ids' time field.
	now := time.Now()
	sc.hdr = protocol.SendMessageRequestHeader{ProducerGroup: r.o.group, Topic: q.topic, DefaultTopic: defaultTopic,
		DefaultTopicQueueNums: defaultTopicQueueNums, QueueID: q.id, BornTimestamp: now.UnixMilli(),
		ReconsumeTimes: protocol.Some[int32](0), UnitMode: protocol.Some(false), BrokerName: q.broker}
	h := &sc.hdr
	if r.o.batch == 1 {
		// A typed header is written straight into the frame (no map).
		sc.props = ids.AppendNextAt(append(sc.props[:0], r.propsPrefix...), now)
		h.Properties = string(sc.props)
		h.Batch = protocol.Some(false)
		return sc.request(protocol.SendMessageV2, r.body)
	}
	// The batch's own properties say "wait for the store"; each item
	// carries its tag and id, written in place.
	h.Properties = r.batchProps
	h.Batch = protocol.Some(true)
	body := sc.body[:0]
	for range n {
		sc.props = ids.AppendNextAt(append(sc.props[:0], r.propsPrefix...), now)
		body = message.AppendBatchItem(body, 0, r.body, sc.props)
	}
	sc.body = body
	return sc.request(protocol.SendBatchMessage, body)
}

// request is sc's request of code with sc's header and body, reset.
func (sc *sendScratch) request(code int32, body []byte) *remoting.Command {
	sc.cmd = remoting.Command{Code: code, Language: remoting.DefaultLanguage, Version: remoting.DefaultVersion,
		Header: sc.hdr.V2(), Body: body}
	return &sc.cmd
}

// responseCodeNames names the codes a send or pull may answer.
var responseCodeNames = map[int32]string{
	protocol.SystemError:               "SYSTEM_ERROR",
	protocol.SystemBusy:                "SYSTEM_BUSY",
	protocol.RequestCodeNotSupported:   "REQUEST_CODE_NOT_SUPPORTED",
	protocol.FlushDiskTimeout:          "FLUSH_DISK_TIMEOUT",
	protocol.SlaveNotAvailable:         "SLAVE_NOT_AVAILABLE",
	protocol.FlushSlaveTimeout:         "FLUSH_SLAVE_TIMEOUT",
	protocol.MessageIllegal:            "MESSAGE_ILLEGAL",
	protocol.ServiceNotAvailable:       "SERVICE_NOT_AVAILABLE",
	protocol.VersionNotSupported:       "VERSION_NOT_SUPPORTED",
	protocol.NoPermission:              "NO_PERMISSION",
	protocol.TopicNotExist:             "TOPIC_NOT_EXIST",
	protocol.SubscriptionNotExist:      "SUBSCRIPTION_NOT_EXIST",
	protocol.SubscriptionGroupNotExist: "SUBSCRIPTION_GROUP_NOT_EXIST",
	protocol.InvalidParameter:          "INVALID_PARAMETER",
	protocol.FlowControl:               "FLOW_CONTROL",
}

// responseCodeName is the name of a response code, or "code N".
func responseCodeName(code int32) string {
	if s, ok := responseCodeNames[code]; ok {
		return s
	}
	return "code " + strconv.Itoa(int(code))
}
