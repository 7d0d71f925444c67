package meta

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// TopicQueueMappingFile holds the static topics' mappings (Java's
// TopicQueueMappingManager).
const TopicQueueMappingFile = "topicQueueMapping.json"

// ErrMapping marks mapping data Mappings.Update refuses (Java throws, and
// the admin processor answers SYSTEM_ERROR with the message).
var ErrMapping = errors.New("meta: static topic mapping refused")

// Mappings is this broker's part of every static topic's queue mapping
// (RIP-21 logic queues), persisted to config/topicQueueMapping.json on
// every change as Java's TopicQueueMappingManager does. Safe for concurrent
// use; readers never wait for file I/O, and what they get is a copy.
type Mappings struct {
	file   *configFile
	log    *slog.Logger
	now    func() time.Time
	broker string // brokerName: every detail must be this broker's

	mu struct {
		sync.RWMutex
		table   map[string]*protocol.TopicQueueMappingDetail
		version protocol.DataVersion
	}
	// view is a read-only copy of mu.table, replaced on every change:
	// Lookup on the send and pull paths takes no lock and allocates
	// nothing (nil while no topic is static).
	view atomic.Pointer[map[string]*protocol.TopicQueueMappingDetail]

	listenMu  sync.Mutex
	listeners []func()
}

// OnChange registers fn to be called after every change (the broker
// re-registers with the NameServers: routes carry the mapping). fn runs on
// the goroutine that made the change, after the file is written; it must
// not block.
func (m *Mappings) OnChange(fn func()) {
	m.listenMu.Lock()
	m.listeners = append(m.listeners, fn)
	m.listenMu.Unlock()
}

func (m *Mappings) notify() {
	m.listenMu.Lock()
	ls := slices.Clone(m.listeners)
	m.listenMu.Unlock()
	for _, fn := range ls {
		fn()
	}
}

// OpenMappings loads config/topicQueueMapping.json (or its .bak) for the
// broker brokerName.
func OpenMappings(opts Options, brokerName string) (*Mappings, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	m := &Mappings{file: opts.file(TopicQueueMappingFile), log: opts.Logger, broker: brokerName,
		now: opts.Now}
	m.mu.table = map[string]*protocol.TopicQueueMappingDetail{}
	m.mu.version = newDataVersion(opts.Now())
	_, err := m.file.load(func(data []byte) error {
		var w protocol.TopicQueueMappingSerializeWrapper
		if err := protocol.UnmarshalFastJSON(data, &w); err != nil {
			return err
		}
		for topic, d := range w.TopicQueueMappingInfoMap {
			if d != nil {
				m.mu.table[topic] = d
			}
		}
		if w.DataVersion.Timestamp != 0 {
			m.mu.version = w.DataVersion
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meta: topic queue mappings: %w", err)
	}
	m.publishLocked()
	return m, nil
}

// publishLocked replaces the lock-free view by a copy of the table.
// Caller holds mu (or owns m alone).
func (m *Mappings) publishLocked() {
	if len(m.mu.table) == 0 {
		m.view.Store(nil)
		return
	}
	v := make(map[string]*protocol.TopicQueueMappingDetail, len(m.mu.table))
	for topic, d := range m.mu.table {
		v[topic] = d.Clone()
	}
	m.view.Store(&v)
}

// Lookup returns topic's mapping detail for reading only (shared: the
// caller must not change it); nil when the topic is not static here.
// Lock-free and allocation-free.
func (m *Mappings) Lookup(topic string) *protocol.TopicQueueMappingDetail {
	if m == nil {
		return nil
	}
	v := m.view.Load()
	if v == nil {
		return nil
	}
	return (*v)[topic]
}

// RegisterInfos is what REGISTER_BROKER carries of the static topics
// (TopicQueueMappingDetail.cloneAsMappingInfo of each); nil when none.
// Lock-free.
func (m *Mappings) RegisterInfos() map[string]*protocol.TopicQueueMappingInfo {
	if m == nil {
		return nil
	}
	v := m.view.Load()
	if v == nil {
		return nil
	}
	out := make(map[string]*protocol.TopicQueueMappingInfo, len(*v))
	for topic, d := range *v {
		out[topic] = d.MappingInfo()
	}
	return out
}

// Get returns a copy of topic's mapping detail; nil when the topic is not
// static on this broker. A nil *Mappings has none.
func (m *Mappings) Get(topic string) *protocol.TopicQueueMappingDetail {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	d := m.mu.table[topic]
	m.mu.RUnlock()
	return d.Clone()
}

// Len is the number of static topics on this broker.
func (m *Mappings) Len() int {
	if m == nil {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.mu.table)
}

// DataVersion is the table's version (Java keeps it equal in spirit to the
// topic table's: it changes with every update).
func (m *Mappings) DataVersion() protocol.DataVersion {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.version
}

// Update stores d as TopicQueueMappingManager.updateTopicQueueMapping does
// (isClean false): every chain must pass protocol.CheckItemOffsets; a new
// topic is taken as it is; with force the new detail replaces the old one,
// keeping the old chains it lacks; otherwise the epoch must not go back,
// the scope must stay, a chain may be missing only with a newer epoch
// (then the old one is kept) and the items both have must agree
// (protocol.CheckItemsImmutable). Refusals wrap ErrMapping. The change is
// persisted; a persist error is returned with the change in effect.
func (m *Mappings) Update(d *protocol.TopicQueueMappingDetail, force bool) error {
	if d == nil {
		return fmt.Errorf("%w: no mapping detail", ErrMapping)
	}
	if d.Bname != m.broker {
		// Java asserts this (off in production) and stores it anyway.
		return fmt.Errorf("%w: the mapping is for broker %q, this is %q", ErrMapping, d.Bname, m.broker)
	}
	if d.Topic == "" {
		return fmt.Errorf("%w: the mapping has no topic", ErrMapping)
	}
	nd := d.Clone()
	if nd.Scope == "" {
		nd.Scope = protocol.MetadataScopeGlobal
	}
	for _, id := range slices.Sorted(maps.Keys(nd.HostedQueues)) {
		if err := protocol.CheckItemOffsets(nd.HostedQueues[id]); err != nil {
			return fmt.Errorf("%w: %s queue %d: %w", ErrMapping, nd.Topic, id, err)
		}
	}
	m.mu.Lock()
	old := m.mu.table[nd.Topic]
	if err := merge(old, nd, force); err != nil {
		m.mu.Unlock()
		return err
	}
	m.mu.table[nd.Topic] = nd
	nextVersion(&m.mu.version, m.now())
	m.publishLocked()
	m.mu.Unlock()
	m.log.Info("meta: static topic mapping updated", "topic", nd.Topic, "epoch", nd.Epoch, "totalQueues", nd.TotalQueues,
		"hosted", len(nd.HostedQueues), "force", force)
	err := m.Persist()
	m.notify()
	return err
}

// merge applies Java's rules for replacing old by nd (which it may
// complete with old chains).
func merge(old, nd *protocol.TopicQueueMappingDetail, force bool) error {
	if old == nil {
		return nil
	}
	if force {
		for id, items := range old.HostedQueues {
			if _, ok := nd.HostedQueues[id]; !ok {
				nd.HostedQueues[id] = slices.Clone(items)
			}
		}
		return nil
	}
	if nd.Epoch < old.Epoch {
		return fmt.Errorf("%w: Can't accept data with small epoch %d < %d", ErrMapping, nd.Epoch, old.Epoch)
	}
	if nd.Scope != old.Scope {
		return fmt.Errorf("%w: Can't accept data with unmatched scope %s != %s", ErrMapping, nd.Scope, old.Scope)
	}
	epochEqual := nd.Epoch == old.Epoch
	for _, id := range slices.Sorted(maps.Keys(old.HostedQueues)) {
		oldItems := old.HostedQueues[id]
		newItems, ok := nd.HostedQueues[id]
		if !ok {
			if epochEqual {
				return fmt.Errorf("%w: Cannot accept equal epoch with null data", ErrMapping)
			}
			nd.HostedQueues[id] = slices.Clone(oldItems)
			continue
		}
		if err := protocol.CheckItemsImmutable(oldItems, newItems, epochEqual); err != nil {
			return fmt.Errorf("%w: %s queue %d: %w", ErrMapping, nd.Topic, id, err)
		}
	}
	return nil
}

// ReplaceAll makes the table the master's (a slave's copy, Java's
// SlaveSynchronize.syncTopicConfig): the details are taken as they are,
// with version as the table's version; changed reports whether anything
// differed. A nil *Mappings changes nothing.
func (m *Mappings) ReplaceAll(details map[string]*protocol.TopicQueueMappingDetail, version protocol.DataVersion) (changed bool, err error) {
	if m == nil {
		return false, nil
	}
	table := make(map[string]*protocol.TopicQueueMappingDetail, len(details))
	for topic, d := range details {
		if d != nil {
			table[topic] = d.Clone()
		}
	}
	m.mu.Lock()
	if m.mu.version.Equal(version) || reflect.DeepEqual(table, m.mu.table) {
		m.mu.Unlock()
		return false, nil
	}
	m.mu.table, m.mu.version = table, version
	m.publishLocked()
	m.mu.Unlock()
	m.log.Info("meta: static topic mappings copied from the master", "topics", len(table))
	err = m.Persist()
	m.notify()
	return true, err
}

// Delete removes topic's mapping (the topic was deleted) and reports
// whether it had one.
func (m *Mappings) Delete(topic string) (bool, error) {
	if m == nil {
		return false, nil
	}
	m.mu.Lock()
	_, ok := m.mu.table[topic]
	if ok {
		delete(m.mu.table, topic)
		nextVersion(&m.mu.version, m.now())
		m.publishLocked()
	}
	m.mu.Unlock()
	if !ok {
		return false, nil
	}
	m.log.Info("meta: static topic mapping deleted", "topic", topic)
	err := m.Persist()
	m.notify()
	return true, err
}

// Snapshot returns a copy in the file form.
func (m *Mappings) Snapshot() protocol.TopicQueueMappingSerializeWrapper {
	m.mu.RLock()
	defer m.mu.RUnlock()
	w := protocol.TopicQueueMappingSerializeWrapper{
		TopicQueueMappingInfoMap: make(map[string]*protocol.TopicQueueMappingDetail, len(m.mu.table)),
		DataVersion:              m.mu.version,
	}
	for topic, d := range m.mu.table {
		w.TopicQueueMappingInfoMap[topic] = d.Clone()
	}
	return w
}

// Persist writes config/topicQueueMapping.json now.
func (m *Mappings) Persist() error {
	return m.file.persist(func() ([]byte, error) {
		return protocol.MarshalFastJSONPretty(m.Snapshot())
	})
}
