package controller

import (
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/remoting"
)

// DefaultBrokerHeartbeatTimeout is how long a broker may stay silent when
// its heartbeat does not say (Java's DEFAULT_BROKER_CHANNEL_EXPIRED_TIME),
// and how long a new leader waits before it judges a master it has not
// heard from yet.
const DefaultBrokerHeartbeatTimeout = 10 * time.Second

type brokerKey struct {
	cluster, name string
	id            int64
}

type liveInfo struct {
	addr      string
	last      time.Time
	timeout   time.Duration
	conn      *remoting.Conn
	epoch     int32
	maxOffset int64
	confirm   int64
	priority  int32
}

// liveness is a node's table of broker heartbeats (Java's
// DefaultBrokerHeartbeatManager). It is not replicated: every node keeps
// its own from the heartbeats it receives (brokers send them to every
// controller, as Java's do), so a new leader starts from what it heard.
type liveness struct {
	now func() time.Time
	mu  sync.Mutex
	tab map[brokerKey]*liveInfo
	// seen holds every broker that ever heartbeat to this node.
	seen map[brokerKey]struct{}
}

func newLiveness(now func() time.Time) *liveness {
	return &liveness{now: now, tab: map[brokerKey]*liveInfo{}, seen: map[brokerKey]struct{}{}}
}

type heartbeat struct {
	key       brokerKey
	addr      string
	timeout   time.Duration
	conn      *remoting.Conn
	epoch     int32
	maxOffset int64
	confirm   int64
	priority  int32
}

// beat records a heartbeat; epoch and offsets only move forward, as Java's.
func (l *liveness) beat(h heartbeat) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.seen[h.key] = struct{}{}
	p := l.tab[h.key]
	if p == nil {
		l.tab[h.key] = &liveInfo{addr: h.addr, last: now, timeout: h.timeout, conn: h.conn,
			epoch: h.epoch, maxOffset: h.maxOffset, confirm: h.confirm, priority: h.priority}
		return
	}
	p.last, p.timeout, p.priority, p.addr = now, h.timeout, h.priority, h.addr
	if h.conn != nil {
		p.conn = h.conn
	}
	if h.epoch > p.epoch || h.epoch == p.epoch && h.maxOffset > p.maxOffset {
		p.epoch, p.maxOffset, p.confirm = h.epoch, h.maxOffset, h.confirm
	}
}

func (l *liveness) aliveLocked(k brokerKey, now time.Time) (*liveInfo, bool) {
	p := l.tab[k]
	if p == nil || now.Sub(p.last) > p.timeout {
		return nil, false
	}
	return p, true
}

// candidates returns the live brokers among ids of a set.
func (l *liveness) candidates(cluster, name string, ids []int64) []candidate {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var out []candidate
	for _, id := range ids {
		if p, ok := l.aliveLocked(brokerKey{cluster, name, id}, now); ok {
			out = append(out, candidate{ID: id, Epoch: p.epoch, MaxOffset: p.maxOffset, Priority: p.priority})
		}
	}
	return out
}

func (l *liveness) alive(k brokerKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.aliveLocked(k, l.now())
	return ok
}

// expire drops the brokers whose heartbeats timed out and closes their
// connections (Java closes the channel too) unless a live broker still
// heartbeats over one; it returns them.
func (l *liveness) expire() []brokerKey {
	l.mu.Lock()
	now := l.now()
	var gone []brokerKey
	dead := map[*remoting.Conn]bool{}
	for k, p := range l.tab {
		if now.Sub(p.last) > p.timeout {
			gone = append(gone, k)
			delete(l.tab, k)
			if p.conn != nil {
				dead[p.conn] = true
			}
		}
	}
	for _, p := range l.tab {
		delete(dead, p.conn)
	}
	conns := make([]*remoting.Conn, 0, len(dead))
	for c := range dead {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return gone
}

// dropConn forgets the brokers that heartbeat over c (it closed).
func (l *liveness) dropConn(c *remoting.Conn) []brokerKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gone []brokerKey
	for k, p := range l.tab {
		if p.conn == c {
			gone = append(gone, k)
			delete(l.tab, k)
		}
	}
	return gone
}

// known reports whether k ever heartbeat to this node (it may
// have expired since).
func (l *liveness) known(k brokerKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.seen[k]
	return ok
}
