package role

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/lifecycle"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// registrar keeps the broker registered with its NameServers: at start,
// every registerNameServerPeriod (30 s) and soon after each topic change
// (a kick; kicks while a round runs coalesce into one more round). A slave
// whose master is not known yet registers again after 1 s, 2 s, 4 s, then
// every 5 s: the registration answer is how it learns its
// master, and a slave started before its master would otherwise copy
// nothing for 30 s. One goroutine owns the loop; close stops it.
type registrar struct {
	r       *Role
	addrs   []string
	period  time.Duration
	timeout time.Duration
	// awaiting paces the rounds of a slave that awaits its master.
	awaiting backoff

	// svc is the registering goroutine; close cancels its context, which
	// cuts a round short (a dead NameServer must not delay shutdown).
	svc lifecycle.Loop

	// rounds counts the rounds begun and ended; done is closed (and
	// replaced) when one ends. awaitRound waits on them.
	rounds struct {
		sync.Mutex
		begun, ended uint64
		done         chan struct{}
	}
}

func newRegistrar(role *Role, addrs []string) *registrar {
	bc := role.bc
	r := &registrar{
		r: role, addrs: addrs,
		period:   bc.RegisterPeriod(),
		timeout:  bc.RegisterBrokerTimeout,
		awaiting: backoff{min: awaitMasterRetry, max: min(awaitMasterRetryMax, bc.RegisterPeriod())},
	}
	r.rounds.done = make(chan struct{})
	return r
}

// errRegistrarClosed ends awaitRound when the broker shuts down.
var errRegistrarClosed = errors.New("broker: registration stopped")

// awaitRound asks for a round and returns once a round that began after
// the call has ended, so the NameServers have been sent the topic table as
// it was at the call (each answered or timed out).
func (r *registrar) awaitRound(ctx context.Context) error {
	r.rounds.Lock()
	target := r.rounds.begun + 1
	r.rounds.Unlock()
	r.kick()
	for {
		r.rounds.Lock()
		ended, done := r.rounds.ended, r.rounds.done
		r.rounds.Unlock()
		if ended >= target {
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-r.svc.Done():
			return errRegistrarClosed
		}
	}
}

// round runs one registration round, counted for awaitRound.
func (r *registrar) round(ctx context.Context) {
	r.rounds.Lock()
	r.rounds.begun++
	r.rounds.Unlock()
	r.registerAll(ctx)
	r.rounds.Lock()
	r.rounds.ended++
	close(r.rounds.done)
	r.rounds.done = make(chan struct{})
	r.rounds.Unlock()
}

// kick asks for a registration round soon; it never blocks (Topics.OnChange
// calls it on the goroutine that changed the table).
func (r *registrar) kick() { r.svc.Kick() }

func (r *registrar) start() {
	r.kick() // the first round runs at once
	r.svc.Start("broker-register", r.loop)
}

// awaitMasterRetry and awaitMasterRetryMax bound the wait before a slave
// that awaits its master registers again.
const (
	awaitMasterRetry    = time.Second
	awaitMasterRetryMax = 5 * time.Second
)

func (r *registrar) loop(ctx context.Context) {
	t := time.NewTimer(r.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.svc.Kicked():
		}
		r.round(ctx)
		next := r.period
		if r.r.awaitsMaster() {
			next = r.awaiting.wait()
		} else {
			r.awaiting.reset()
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// close stops the loop, cutting a round in progress short, and waits for
// it. Idempotent.
func (r *registrar) close() { r.svc.Close() }

// registerAll sends REGISTER_BROKER with the topic table to every
// NameServer in parallel and waits for them all (each bounded by
// registerBrokerTimeoutMills).
func (r *registrar) registerAll(ctx context.Context) {
	if len(r.addrs) == 0 || r.r.cur.Load().undecided {
		return
	}
	role := r.r
	topics := role.tables.Topics
	w := topics.RegisterSnapshot(role.bc.BrokerPermission)
	if role.tables.Mappings != nil {
		// 5.x's TopicConfigAndMappingSerializeWrapper: the static topics.
		w.TopicQueueMappingInfoMap = role.tables.Mappings.RegisterInfos()
	}
	body := (&protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: w, FilterServerList: []string{}}).MarshalFastJSON()
	h := protocol.RegisterBrokerRequestHeader{
		BrokerName:   role.bc.BrokerName,
		BrokerAddr:   role.cfg.Addr,
		ClusterName:  role.bc.BrokerClusterName,
		HAServerAddr: role.haServerAddr(),
		BrokerID:     role.BrokerID(),
		BodyCrc32:    protocol.BodyCRC32(body),
	}
	r.each(func(ctx context.Context, addr string) {
		req := remoting.NewRequest(protocol.RegisterBroker, protocol.Ext(&h), body)
		resp, err := role.cfg.NS.Invoke(ctx, addr, req)
		switch {
		case err != nil:
			role.log.Warn("broker: register with NameServer failed", "namesrv", addr, "err", err)
		case resp.Code != protocol.Success:
			role.log.Warn("broker: NameServer refused registration", "namesrv", addr, "code", resp.Code, "remark", resp.Remark)
		default:
			role.log.Debug("broker: registered", "namesrv", addr, "topics", topics.Len())
			role.learn(resp)
		}
	}, ctx)
}

// unregisterAll sends UNREGISTER_BROKER to every NameServer (shutdown).
func (r *registrar) unregisterAll(parent context.Context) {
	role := r.r
	h := protocol.BrokerIdentityHeader{
		BrokerName: role.bc.BrokerName, BrokerAddr: role.cfg.Addr, ClusterName: role.bc.BrokerClusterName, BrokerID: role.BrokerID(),
	}
	r.each(func(ctx context.Context, addr string) {
		resp, err := role.cfg.NS.Invoke(ctx, addr, remoting.NewRequest(protocol.UnregisterBroker, protocol.Ext(&h), nil))
		if err != nil {
			role.log.Warn("broker: unregister from NameServer failed", "namesrv", addr, "err", err)
		} else if resp.Code != protocol.Success {
			role.log.Warn("broker: NameServer refused unregistration", "namesrv", addr, "code", resp.Code, "remark", resp.Remark)
		}
	}, parent)
}

// each runs fn for every NameServer address in parallel, each call with its
// own timeout, and waits for all.
func (r *registrar) each(fn func(ctx context.Context, addr string), parent context.Context) {
	var wg sync.WaitGroup
	for _, addr := range r.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(parent, r.timeout)
			defer cancel()
			fn(ctx, addr)
		}()
	}
	wg.Wait()
}
