package client

import (
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// producerTable is Java's ProducerManager: producer group -> channels.
type producerTable struct {
	mu     sync.RWMutex
	groups map[string]map[Channel]*channelState
	// byClient indexes the channels by client id, counting the groups
	// each is registered in: Java's clientChannelTable, which
	// SEND_REPLY_MESSAGE uses to find the requester (FindProducerChannel).
	byClient map[string]clientChannels
	// next spreads PickProducerChannel over a group's channels.
	next atomic.Uint32
}

// RegisterProducer records a heartbeat's producer group on ch: a new
// channel is added, a known one has its client info and heartbeat time
// refreshed.
//
// As with consumers, a heartbeat handled after its connection closed
// registers nothing.
func (r *Registry) RegisterProducer(group string, ch Channel, info ClientInfo) {
	if isClosed(ch) {
		return
	}
	if r.registerProducer(group, ch, info) && isClosed(ch) {
		r.producers.removeChannel(ch) // raced the close callback: undo
	}
}

// registerProducer reports whether ch was new to group.
func (r *Registry) registerProducer(group string, ch Channel, info ClientInfo) bool {
	now := r.now()
	t := &r.producers
	t.mu.Lock()
	defer t.mu.Unlock()
	chans := t.groups[group]
	if chans == nil {
		chans = make(map[Channel]*channelState)
		t.groups[strings.Clone(group)] = chans
	}
	st := chans[ch]
	if st == nil {
		info.ClientID = strings.Clone(info.ClientID)
		chans[ch] = &channelState{ClientInfo: info, lastUpdate: now}
		t.indexLocked(info.ClientID, ch, +1)
		r.log.Info("client: producer registered", "group", group, "clientID", info.ClientID, "addr", ch.RemoteAddr())
		return true
	}
	if st.ClientID != info.ClientID {
		t.indexLocked(st.ClientID, ch, -1)
		st.ClientID = strings.Clone(info.ClientID)
		t.indexLocked(st.ClientID, ch, +1)
	}
	st.Language, st.Version, st.lastUpdate = info.Language, info.Version, now
	return false
}

// UnregisterProducer removes ch from group (UNREGISTER_CLIENT with a
// producerGroup). It reports whether ch was registered there.
func (r *Registry) UnregisterProducer(group string, ch Channel) bool {
	t := &r.producers
	t.mu.Lock()
	defer t.mu.Unlock()
	chans := t.groups[group]
	st, ok := chans[ch]
	if !ok {
		return false
	}
	delete(chans, ch)
	t.indexLocked(st.ClientID, ch, -1)
	if len(chans) == 0 {
		delete(t.groups, group)
	}
	r.log.Info("client: producer unregistered", "group", group, "addr", ch.RemoteAddr())
	return true
}

// PickProducerChannel returns a channel of group, taking them in turn, for
// a transaction check-back; false when the group has none.
func (r *Registry) PickProducerChannel(group string) (ChannelInfo, bool) {
	t := &r.producers
	t.mu.RLock()
	defer t.mu.RUnlock()
	chans := t.groups[group]
	if len(chans) == 0 {
		return ChannelInfo{}, false
	}
	// Map order is random per iteration, so start at the n-th entry of a
	// turn counter: each channel gets its share over many calls. A
	// channel whose connection has closed (its removal may still be on
	// the way) is passed over, unless nothing else is left.
	n := int(t.next.Add(1) % uint32(len(chans)))
	var first, fallback ChannelInfo
	found := false
	for pass := 0; pass < 2; pass++ {
		for ch, st := range chans {
			if pass == 0 && n > 0 {
				n--
				continue
			}
			if isClosed(ch) {
				if fallback.Channel == nil {
					fallback = st.snapshot(ch)
				}
				continue
			}
			first, found = st.snapshot(ch), true
			break
		}
		if found {
			return first, true
		}
	}
	return fallback, true
}

// isClosed reports whether ch says its connection is closed; a Channel
// that cannot tell counts as open.
func isClosed(ch Channel) bool {
	c, ok := ch.(interface{ Closed() <-chan struct{} })
	if !ok {
		return false
	}
	select {
	case <-c.Closed():
		return true
	default:
		return false
	}
}

// ProducerChannels lists group's channels (GET_PRODUCER_CONNECTION_LIST),
// ordered by client id then address.
func (r *Registry) ProducerChannels(group string) []ChannelInfo {
	t := &r.producers
	t.mu.RLock()
	out := make([]ChannelInfo, 0, len(t.groups[group]))
	for ch, st := range t.groups[group] {
		out = append(out, st.snapshot(ch))
	}
	t.mu.RUnlock()
	sortChannels(out)
	return out
}

// ProducerConnection returns the GET_PRODUCER_CONNECTION_LIST body of
// group (an empty connection set when it has no channel).
func (r *Registry) ProducerConnection(group string) protocol.ProducerConnection {
	chans := r.ProducerChannels(group)
	pc := protocol.ProducerConnection{ConnectionSet: make([]protocol.Connection, 0, len(chans))}
	for _, ci := range chans {
		pc.ConnectionSet = append(pc.ConnectionSet, ci.Connection())
	}
	return pc
}

// ProducerGroups lists the groups with at least one channel, sorted.
func (r *Registry) ProducerGroups() []string {
	t := &r.producers
	t.mu.RLock()
	out := make([]string, 0, len(t.groups))
	for g := range t.groups {
		out = append(out, g)
	}
	t.mu.RUnlock()
	sort.Strings(out)
	return out
}

// removeChannel drops ch from every producer group.
func (t *producerTable) removeChannel(ch Channel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for g, chans := range t.groups {
		if st, ok := chans[ch]; ok {
			delete(chans, ch)
			t.indexLocked(st.ClientID, ch, -1)
			if len(chans) == 0 {
				delete(t.groups, g)
			}
		}
	}
}

// expire drops channels whose last heartbeat is older than ttl and appends
// them to stale for the caller to close.
func (t *producerTable) expire(now time.Time, ttl time.Duration, stale []Channel, log *slog.Logger) []Channel {
	t.mu.Lock()
	defer t.mu.Unlock()
	for g, chans := range t.groups {
		for ch, st := range chans {
			if idle := now.Sub(st.lastUpdate); idle > ttl {
				log.Warn("client: producer channel expired", "group", g, "clientID", st.ClientID,
					"addr", ch.RemoteAddr(), "idle", idle)
				delete(chans, ch)
				t.indexLocked(st.ClientID, ch, -1)
				stale = append(stale, ch)
			}
		}
		if len(chans) == 0 {
			delete(t.groups, g)
		}
	}
	return stale
}

// Connection returns the channel as the admin bodies describe it.
func (ci ChannelInfo) Connection() protocol.Connection {
	return protocol.Connection{
		ClientID:   ci.ClientID,
		ClientAddr: ci.Channel.RemoteAddr(),
		Language:   ci.Language.String(),
		Version:    ci.Version,
	}
}

func sortChannels(s []ChannelInfo) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].ClientID != s[j].ClientID {
			return s[i].ClientID < s[j].ClientID
		}
		return s[i].Channel.RemoteAddr() < s[j].Channel.RemoteAddr()
	})
}

// clientChannels are the channels of one client id, each with the number
// of groups it is registered in. A client has one channel to a broker
// almost always: it is held inline, and a map made only for more (a map
// per client id cost each idle producer connection about 250 bytes).
type clientChannels struct {
	one  Channel // nil: none
	oneN int
	more map[Channel]int
}

// add adds delta to ch's count, dropping it at zero.
func (cc *clientChannels) add(ch Channel, delta int) {
	if cc.one == ch && ch != nil {
		cc.oneN += delta
		if cc.oneN <= 0 {
			cc.one, cc.oneN = nil, 0
		}
		return
	}
	if n, ok := cc.more[ch]; ok {
		if n += delta; n > 0 {
			cc.more[ch] = n
		} else {
			delete(cc.more, ch)
		}
		return
	}
	if delta <= 0 {
		return
	}
	if cc.one == nil {
		cc.one, cc.oneN = ch, delta
		return
	}
	if cc.more == nil {
		cc.more = make(map[Channel]int, 1)
	}
	cc.more[ch] = delta
}

func (cc *clientChannels) empty() bool { return cc.one == nil && len(cc.more) == 0 }

// indexLocked adds delta to the number of groups ch is registered in under
// clientID, dropping entries that reach zero. t.mu is held for writing.
func (t *producerTable) indexLocked(clientID string, ch Channel, delta int) {
	cc, ok := t.byClient[clientID]
	if !ok && delta < 0 {
		return
	}
	cc.add(ch, delta)
	if cc.empty() {
		delete(t.byClient, clientID)
		return
	}
	t.byClient[clientID] = cc
}

// FindProducerChannel returns a channel a producer with clientID
// registered on (Java's ProducerManager.findChannel): where
// SEND_REPLY_MESSAGE pushes the reply. An open channel is preferred over
// one whose close is still being processed.
func (r *Registry) FindProducerChannel(clientID string) (Channel, bool) {
	t := &r.producers
	t.mu.RLock()
	defer t.mu.RUnlock()
	var closed Channel
	cc := t.byClient[clientID]
	if ch := cc.one; ch != nil {
		if !isClosed(ch) {
			return ch, true
		}
		closed = ch
	}
	for ch := range cc.more {
		if !isClosed(ch) {
			return ch, true
		}
		closed = ch
	}
	return closed, closed != nil
}
