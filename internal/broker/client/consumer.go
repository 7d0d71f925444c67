package client

import (
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// consumerTable is Java's ConsumerManager: consumer group -> its channels
// and subscriptions.
type consumerTable struct {
	mu     sync.RWMutex
	groups map[string]*consumerGroup
}

// consumerGroup is Java's ConsumerGroupInfo. The group-level settings are
// those of the latest heartbeat of any member (Java keeps the same
// last-writer-wins table: members of one group are expected to agree).
type consumerGroup struct {
	channels map[Channel]*channelState
	// subs maps topic -> subscription. A stored subscription is never
	// modified, only replaced, so pointers to it may be handed out.
	subs             map[string]*protocol.SubscriptionData
	filters          map[string]*Filter // topic -> compiled non-TAG subscription
	consumeType      protocol.ConsumeType
	messageModel     protocol.MessageModel
	consumeFromWhere protocol.ConsumeFromWhere
	lastUpdate       time.Time
}

// Change reports what a consumer registration changed.
type Change struct {
	// ChannelAdded: the channel was new to the group.
	ChannelAdded bool
	// SubscriptionsChanged: a topic was added to or removed from the
	// group's subscription table. A newer subVersion of a topic already
	// there replaces it without counting as a change (Java likewise): it
	// alters filtering, not the rebalance.
	SubscriptionsChanged bool
}

// Changed reports whether the group's members or topics changed, which is
// when its consumers are told to rebalance.
func (c Change) Changed() bool { return c.ChannelAdded || c.SubscriptionsChanged }

// RegisterConsumer records one consumer group of a heartbeat on ch: the
// channel joins the group (or has its heartbeat time refreshed), the
// group's consume type, model and from-where take the heartbeat's values,
// and its subscription table becomes the heartbeat's subscription set
// (topics missing from it are removed, as Java does). When that changed
// the group and notify is true (the subscription group's
// notifyConsumerIdsChangedEnable), every channel of the group is sent
// NOTIFY_CONSUMER_IDS_CHANGED in the background.
//
// The registry keeps data's subscriptions: the caller must not modify them
// afterwards.
//
// A heartbeat handled after its connection closed registers nothing: the
// close callback (RemoveChannel) may have run already and would not come
// again, leaving a dead consumer in the group until the idle scan.
func (r *Registry) RegisterConsumer(ch Channel, info ClientInfo, data *protocol.ConsumerData, notify bool) Change {
	if isClosed(ch) {
		return Change{}
	}
	now := r.now()
	t := &r.consumers
	t.mu.Lock()
	g := t.groups[data.GroupName]
	if g == nil {
		g = &consumerGroup{
			channels: make(map[Channel]*channelState),
			subs:     make(map[string]*protocol.SubscriptionData),
		}
		t.groups[strings.Clone(data.GroupName)] = g
	}
	var c Change
	c.ChannelAdded = g.updateChannel(ch, info, data, now)
	var failed []filterFailure
	c.SubscriptionsChanged, failed = g.updateSubscriptions(data.SubscriptionDataSet, now)
	var notes []notification
	if notify && c.Changed() {
		notes = []notification{{group: data.GroupName, channels: g.channelList()}}
	}
	t.mu.Unlock()
	for _, f := range failed {
		r.log.Warn("client: subscription expression does not compile", "group", data.GroupName,
			"topic", f.topic, "expression", f.expr, "err", f.err)
	}
	if c.ChannelAdded && isClosed(ch) {
		// Closed while we registered it: the close callback may have
		// run before the insert. Undo as it would have.
		r.RemoveChannel(ch)
		return Change{}
	}
	if c.ChannelAdded {
		r.log.Info("client: consumer registered", "group", data.GroupName, "clientID", info.ClientID,
			"addr", ch.RemoteAddr(), "subscriptionsChanged", c.SubscriptionsChanged)
	} else if c.SubscriptionsChanged {
		r.log.Info("client: consumer subscriptions changed", "group", data.GroupName, "clientID", info.ClientID)
	}
	r.notifier.send(notes)
	return c
}

func (g *consumerGroup) updateChannel(ch Channel, info ClientInfo, data *protocol.ConsumerData, now time.Time) bool {
	g.consumeType, g.messageModel, g.consumeFromWhere = data.ConsumeType, data.MessageModel, data.ConsumeFromWhere
	g.lastUpdate = now
	st := g.channels[ch]
	if st == nil {
		info.ClientID = strings.Clone(info.ClientID)
		g.channels[ch] = &channelState{ClientInfo: info, lastUpdate: now}
		return true
	}
	if st.ClientID != info.ClientID {
		// A channel carries one client; a new id on it is odd (Java
		// logs an error) but the latest heartbeat is believed.
		st.ClientID = strings.Clone(info.ClientID)
	}
	st.Language, st.Version, st.lastUpdate = info.Language, info.Version, now
	return false
}

func (g *consumerGroup) updateSubscriptions(set []protocol.SubscriptionData, now time.Time) (changed bool, failed []filterFailure) {
	for i := range set {
		sub := &set[i]
		old := g.subs[sub.Topic]
		switch {
		case old == nil:
			g.subs[sub.Topic] = sub
			changed = true
		case sub.SubVersion > old.SubVersion:
			g.subs[sub.Topic] = sub
		default:
			continue
		}
		// A new subscription version: compile its expression once.
		if f := g.updateFilter(sub); f != nil {
			failed = append(failed, *f)
		}
	}
	for topic := range g.subs {
		if !containsTopic(set, topic) {
			delete(g.subs, topic)
			delete(g.filters, topic)
			changed = true
		}
	}
	g.lastUpdate = now
	return changed, failed
}

func containsTopic(set []protocol.SubscriptionData, topic string) bool {
	for i := range set {
		if set[i].Topic == topic {
			return true
		}
	}
	return false
}

// channelList returns the group's channels. REQUIRES: table lock held.
func (g *consumerGroup) channelList() []Channel {
	out := make([]Channel, 0, len(g.channels))
	for ch := range g.channels {
		out = append(out, ch)
	}
	return out
}

// UnregisterConsumer removes ch from group (UNREGISTER_CLIENT with a
// consumerGroup); an emptied group is forgotten with its subscriptions.
// When ch was a member and notify is true, the remaining members are sent
// NOTIFY_CONSUMER_IDS_CHANGED. It reports whether ch was a member.
func (r *Registry) UnregisterConsumer(group string, ch Channel, notify bool) bool {
	t := &r.consumers
	t.mu.Lock()
	g := t.groups[group]
	if g == nil || g.channels[ch] == nil {
		t.mu.Unlock()
		return false
	}
	notes := t.removeLocked(group, g, ch, nil)
	t.mu.Unlock()
	r.log.Info("client: consumer unregistered", "group", group, "addr", ch.RemoteAddr())
	if notify {
		r.notifier.send(notes)
	}
	return true
}

// removeLocked takes ch out of g and, if members remain, appends the
// notification they are due. REQUIRES: t.mu held.
func (t *consumerTable) removeLocked(group string, g *consumerGroup, ch Channel, notes []notification) []notification {
	delete(g.channels, ch)
	if len(g.channels) == 0 {
		delete(t.groups, group)
		return notes
	}
	return append(notes, notification{group: group, channels: g.channelList()})
}

// removeChannel takes ch out of every consumer group and returns the
// notifications the remaining members are due.
func (t *consumerTable) removeChannel(ch Channel, log *slog.Logger) []notification {
	var notes []notification
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, g := range t.groups {
		if st := g.channels[ch]; st != nil {
			log.Info("client: consumer channel closed", "group", name, "clientID", st.ClientID, "addr", ch.RemoteAddr())
			notes = t.removeLocked(name, g, ch, notes)
		}
	}
	return notes
}

// expire drops channels idle for longer than ttl, appending them to stale
// for the caller to close, and returns the notifications due.
func (t *consumerTable) expire(now time.Time, ttl time.Duration, stale []Channel, log *slog.Logger) ([]Channel, []notification) {
	var notes []notification
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, g := range t.groups {
		removed := false
		for ch, st := range g.channels {
			if idle := now.Sub(st.lastUpdate); idle > ttl {
				log.Warn("client: consumer channel expired", "group", name, "clientID", st.ClientID,
					"addr", ch.RemoteAddr(), "idle", idle)
				delete(g.channels, ch)
				stale = append(stale, ch)
				removed = true
			}
		}
		switch {
		case len(g.channels) == 0:
			delete(t.groups, name)
		case removed:
			notes = append(notes, notification{group: name, channels: g.channelList()})
		}
	}
	return stale, notes
}

// ConsumerIDs returns the client ids of group's channels, sorted and
// without duplicates (GET_CONSUMER_LIST_BY_GROUP); nil when the group has
// no channel.
func (r *Registry) ConsumerIDs(group string) []string {
	t := &r.consumers
	t.mu.RLock()
	g := t.groups[group]
	if g == nil {
		t.mu.RUnlock()
		return nil
	}
	ids := make([]string, 0, len(g.channels))
	for _, st := range g.channels {
		ids = append(ids, st.ClientID)
	}
	t.mu.RUnlock()
	sort.Strings(ids)
	// A client with two connections to this broker (two addresses) is
	// still one consumer for the rebalance.
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return out
}

// FindSubscription returns group's subscription of topic for the pull path
// (push consumers send none in PULL_MESSAGE). The result is shared: read
// it, never modify it.
func (r *Registry) FindSubscription(group, topic string) (*protocol.SubscriptionData, bool) {
	t := &r.consumers
	t.mu.RLock()
	defer t.mu.RUnlock()
	g := t.groups[group]
	if g == nil {
		return nil, false
	}
	sub := g.subs[topic]
	return sub, sub != nil
}

// MessageModel returns group's message model (CLUSTERING, BROADCASTING)
// from its latest heartbeat; false when the group has no channel. The pull
// path needs it (a broadcasting group may be refused by its subscription
// group config) and, with FindSubscription, tells "group not online" from
// "topic not subscribed" (Java's two SUBSCRIPTION_NOT_EXIST remarks).
func (r *Registry) MessageModel(group string) (protocol.MessageModel, bool) {
	t := &r.consumers
	t.mu.RLock()
	defer t.mu.RUnlock()
	g := t.groups[group]
	if g == nil {
		return "", false
	}
	return g.messageModel, true
}

// FindConsumerChannel returns a channel of group announced by clientID
// (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY).
func (r *Registry) FindConsumerChannel(group, clientID string) (ChannelInfo, bool) {
	t := &r.consumers
	t.mu.RLock()
	defer t.mu.RUnlock()
	g := t.groups[group]
	if g == nil {
		return ChannelInfo{}, false
	}
	for ch, st := range g.channels {
		if st.ClientID == clientID {
			return st.snapshot(ch), true
		}
	}
	return ChannelInfo{}, false
}

// ConsumerGroup is a snapshot of one consumer group.
type ConsumerGroup struct {
	Channels         []ChannelInfo                         // by client id, then address
	Subscriptions    map[string]*protocol.SubscriptionData // topic -> subscription (shared: read only)
	ConsumeType      protocol.ConsumeType
	MessageModel     protocol.MessageModel
	ConsumeFromWhere protocol.ConsumeFromWhere
	LastUpdate       time.Time
}

// ConsumerGroup returns a snapshot of group (GET_CONSUMER_CONNECTION_LIST,
// consumer admin); false when it has no channel.
func (r *Registry) ConsumerGroup(group string) (ConsumerGroup, bool) {
	t := &r.consumers
	t.mu.RLock()
	g := t.groups[group]
	if g == nil {
		t.mu.RUnlock()
		return ConsumerGroup{}, false
	}
	out := ConsumerGroup{
		Channels:         make([]ChannelInfo, 0, len(g.channels)),
		Subscriptions:    make(map[string]*protocol.SubscriptionData, len(g.subs)),
		ConsumeType:      g.consumeType,
		MessageModel:     g.messageModel,
		ConsumeFromWhere: g.consumeFromWhere,
		LastUpdate:       g.lastUpdate,
	}
	for ch, st := range g.channels {
		out.Channels = append(out.Channels, st.snapshot(ch))
	}
	for topic, sub := range g.subs {
		out.Subscriptions[topic] = sub
	}
	t.mu.RUnlock()
	sortChannels(out.Channels)
	return out, true
}

// ConsumerConnection returns the GET_CONSUMER_CONNECTION_LIST body.
func (g *ConsumerGroup) ConsumerConnection() protocol.ConsumerConnection {
	cc := protocol.ConsumerConnection{
		ConnectionSet:     make([]protocol.Connection, 0, len(g.Channels)),
		SubscriptionTable: make(map[string]protocol.SubscriptionData, len(g.Subscriptions)),
		ConsumeType:       g.ConsumeType,
		MessageModel:      g.MessageModel,
		ConsumeFromWhere:  g.ConsumeFromWhere,
	}
	for _, ci := range g.Channels {
		cc.ConnectionSet = append(cc.ConnectionSet, ci.Connection())
	}
	for topic, sub := range g.Subscriptions {
		cc.SubscriptionTable[topic] = *sub
	}
	return cc
}

// ConsumerGroups lists the groups with at least one channel, sorted.
func (r *Registry) ConsumerGroups() []string {
	t := &r.consumers
	t.mu.RLock()
	out := make([]string, 0, len(t.groups))
	for g := range t.groups {
		out = append(out, g)
	}
	t.mu.RUnlock()
	sort.Strings(out)
	return out
}

// GroupsSubscribing lists the online groups whose subscription table holds
// topic (Java queryTopicConsumeByWho), sorted.
func (r *Registry) GroupsSubscribing(topic string) []string {
	t := &r.consumers
	t.mu.RLock()
	var out []string
	for name, g := range t.groups {
		if g.subs[topic] != nil {
			out = append(out, name)
		}
	}
	t.mu.RUnlock()
	sort.Strings(out)
	return out
}
