package grpc

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/protocol"
)

// renewPolicy is Java's RenewStrategyPolicy: the invisible time of the
// n-th renewal (the last one repeats).
var renewPolicy = []time.Duration{time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// renewKey is Java's ReceiptHandleGroupKey: a client (its channel) and a
// group.
type renewKey struct{ clientID, group string }

// renewEntry is Java's MessageReceiptHandle: a message a push consumer
// holds, received with auto_renew and not yet acked.
type renewEntry struct {
	topic, msgID string
	orig         string // the handle the client got (and acks with)
	reconsume    int32
	received     time.Time

	// Guarded by renewals.mu.
	handle      string    // the message's current handle
	nextVisible time.Time // when it becomes visible unless renewed
	renews      int
	retries     int
	taken       bool          // acked, changed or forwarded by the client
	renewing    chan struct{} // closed when the renewal in flight ends
}

// renewals is Java's DefaultReceiptHandleManager: the messages push
// consumers hold, renewed by one goroutine (runRenewals) before they
// become visible again.
type renewals struct {
	mu     sync.Mutex
	groups map[renewKey]map[string]*renewEntry // by msgID+" "+orig
	log    lograte.Limiter
}

func renewID(msgID, handle string) string { return msgID + " " + handle }

// add registers a message delivered to a push consumer.
func (r *renewals) add(k renewKey, e *renewEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups == nil {
		r.groups = map[renewKey]map[string]*renewEntry{}
	}
	g := r.groups[k]
	if g == nil {
		g = map[string]*renewEntry{}
		r.groups[k] = g
	}
	g[renewID(e.msgID, e.orig)] = e
}

// take ends the renewal of the message the client names by its id and
// the handle it got, and returns the message's current handle (false:
// not renewed, use the client's). A renewal in flight is waited for, so
// the handle returned is the one the broker knows.
func (r *renewals) take(ctx context.Context, k renewKey, msgID, handle string) (string, bool) {
	r.mu.Lock()
	g := r.groups[k]
	if len(g) == 0 { // nothing renewed for the client (every SimpleConsumer)
		r.mu.Unlock()
		return "", false
	}
	e := g[renewID(msgID, handle)]
	if e == nil {
		r.mu.Unlock()
		return "", false
	}
	delete(g, renewID(msgID, handle))
	if len(g) == 0 {
		delete(r.groups, k)
	}
	e.taken = true
	wait := e.renewing
	r.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return e.handle, true
}

// runRenewals is the renewal goroutine (Java's scheduleRenewTask every
// renewSchedulePeriodMillis), run by Server.renewLoop; it stops when
// the server closes.
func (s *Server) runRenewals(ctx context.Context) {
	period := s.cfg.Broker.RenewSchedulePeriod
	if period <= 0 {
		period = config.DefaultRenewSchedulePeriod
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.renewScan(time.Now())
		}
	}
}

// renewScan clears the messages of clients that are gone (visible again
// after invisibleTimeMillisWhenClear) and renews the others that become
// visible within renewAheadTimeMillis.
func (s *Server) renewScan(now time.Time) {
	r := &s.renewals
	r.mu.Lock()
	keys := make([]renewKey, 0, len(r.groups))
	for k := range r.groups {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	for _, k := range keys {
		if !s.clients.alive(k.clientID) {
			r.mu.Lock()
			g := r.groups[k]
			delete(r.groups, k)
			for _, e := range g {
				e.taken = true
			}
			r.mu.Unlock()
			for _, e := range g {
				s.renewChange(k, e, s.cfg.Broker.InvisibleTimeWhenClear)
			}
			continue
		}
		r.mu.Lock()
		var due []*renewEntry
		for _, e := range r.groups[k] {
			if e.nextVisible.Sub(now) <= s.cfg.Broker.RenewAheadTime {
				due = append(due, e)
			}
		}
		r.mu.Unlock()
		for _, e := range due {
			s.renewOne(k, e, now)
		}
	}
}

// renewOne is startRenewMessage: renew by the renew policy while the
// message was received less than renewMaxTimeMillis ago, else make it
// visible after the group's retry delay and stop.
func (s *Server) renewOne(k renewKey, e *renewEntry, now time.Time) {
	r := &s.renewals
	r.mu.Lock()
	if e.taken {
		r.mu.Unlock()
		return
	}
	if e.retries >= s.cfg.Broker.MaxRenewRetryTimes || now.Sub(e.received) >= s.cfg.Broker.RenewMaxTime {
		stop := e.retries < s.cfg.Broker.MaxRenewRetryTimes
		r.removeLocked(k, e)
		r.mu.Unlock()
		if stop {
			s.renewChange(k, e, s.retryDelay(k.group, e.reconsume))
		}
		return
	}
	d := renewPolicy[min(e.renews, len(renewPolicy)-1)]
	handle := e.handle
	e.renewing = make(chan struct{})
	r.mu.Unlock()

	newHandle, st := s.changeInvisible(context.Background(), e.topic, k.group, handle, d)

	r.mu.Lock()
	defer r.mu.Unlock()
	close(e.renewing)
	e.renewing = nil
	switch {
	case st.GetCode() == v2.Code_OK:
		e.handle, e.nextVisible, e.retries = newHandle, now.Add(d), 0
		e.renews++
	case st.GetCode() == v2.Code_INVALID_RECEIPT_HANDLE || st.GetCode() == v2.Code_NOT_FOUND:
		r.removeLocked(k, e) // nothing to renew any more
	default:
		e.retries++
		r.log.Log(s.log, slog.LevelWarn, "grpc: renewal of a push consumer's message failed", "group", k.group,
			"msgId", e.msgID, "code", st.GetCode(), "remark", st.GetMessage())
	}
}

// renewChange makes a message visible after d (clear and stop-renew).
func (s *Server) renewChange(k renewKey, e *renewEntry, d time.Duration) {
	s.renewals.mu.Lock()
	handle := e.handle
	s.renewals.mu.Unlock()
	if _, st := s.changeInvisible(context.Background(), e.topic, k.group, handle, d); st.GetCode() != v2.Code_OK {
		s.renewals.log.Log(s.log, slog.LevelWarn, "grpc: release of a push consumer's message failed", "group", k.group,
			"msgId", e.msgID, "code", st.GetCode(), "remark", st.GetMessage())
	}
}

func (r *renewals) removeLocked(k renewKey, e *renewEntry) {
	e.taken = true
	if g := r.groups[k]; g != nil {
		delete(g, renewID(e.msgID, e.orig))
		if len(g) == 0 {
			delete(r.groups, k)
		}
	}
}

// retryDelay is the group's retry policy's nextDelayDuration for a
// message consumed reconsume times before (consumerBackoff's policy).
func (s *Server) retryDelay(group string, reconsume int32) time.Duration {
	gc, ok := s.cfg.Groups.Get(group)
	if !ok {
		gc = protocol.NewSubscriptionGroupConfig(group)
	}
	rp := consumerBackoff(gc)
	if e := rp.GetExponentialBackoff(); e != nil {
		d := float64(e.GetInitial().AsDuration())
		for range max(reconsume, 0) {
			d *= float64(e.GetMultiplier())
			if d >= float64(e.GetMax().AsDuration()) {
				break
			}
		}
		return min(time.Duration(d), e.GetMax().AsDuration())
	}
	next := rp.GetCustomizedBackoff().GetNext()
	if len(next) == 0 {
		return time.Second
	}
	return next[min(int(max(reconsume, 0)), len(next)-1)].AsDuration()
}

// nextVisibleOf is ReceiptHandle.getNextVisibleTime: pop time plus
// invisible time, from the handle's fields.
func nextVisibleOf(handle string) (time.Time, bool) {
	f := strings.Split(handle, " ")
	if len(f) < 3 {
		return time.Time{}, false
	}
	pop, err1 := strconv.ParseInt(f[1], 10, 64)
	inv, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(pop + inv), true
}
