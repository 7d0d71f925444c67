package meta

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

// ErrNoTemplate is returned by Topics.AutoCreate when the template topic is
// missing or lacks the inherit bit: the send answers TOPIC_NOT_EXIST.
var ErrNoTemplate = errors.New("meta: no template topic to create the topic from")

// Topics is the broker's topic table (Java's TopicConfigManager): the topic
// configs with their DataVersion, persisted to config/topics.json on every
// change. Safe for concurrent use; readers never wait for file I/O.
type Topics struct {
	file       *configFile
	log        *slog.Logger
	now        func() time.Time
	autoCreate bool
	// configSystem are the system topics named by the configuration
	// (cluster, broker-name, reply, trace topics).
	configSystem map[string]bool

	mu struct {
		sync.RWMutex
		table   map[string]protocol.TopicConfig
		version protocol.DataVersion
		// fileUnknown are the file's top-level properties rocketd does
		// not model (a newer Java's), written back on every persist.
		fileUnknown protocol.UnknownMembers
	}
	listenMu  sync.Mutex
	listeners []func()
}

// OpenTopics builds the startup system topics of rocketmq-spec.md §14.5
// from bc and merges config/topics.json (or its .bak) over them: file
// entries win, and the file's DataVersion is kept. With
// autoCreateTopicEnable off, a TBW102 from the file loses its inherit bit
// so it cannot serve as a template.
func OpenTopics(opts Options, bc *config.BrokerConfig) (*Topics, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	t := &Topics{
		file:         opts.file(TopicsFile),
		log:          opts.Logger,
		now:          opts.Now,
		autoCreate:   bc.AutoCreateTopicEnable,
		configSystem: map[string]bool{},
	}
	t.mu.table = startupTopics(bc)
	t.mu.version = newDataVersion(t.now())
	for name := range t.mu.table {
		if !isFixedSystemTopic(name) {
			t.configSystem[name] = true
		}
	}
	t.configSystem[bc.BrokerClusterName+ReplyTopicSuffix] = true

	_, err := t.file.load(func(data []byte) error {
		var w protocol.TopicConfigSerializeWrapper
		if err := protocol.UnmarshalFastJSON(data, &w); err != nil {
			return err
		}
		for name, tc := range w.TopicConfigTable {
			if tc.TopicName == "" {
				tc.TopicName = name
			}
			t.mu.table[name] = tc
		}
		// A file without a dataVersion keeps the fresh one, as in Java
		// (its wrapper object starts with a new DataVersion).
		if w.DataVersion != (protocol.DataVersion{}) {
			t.mu.version = w.DataVersion
		}
		t.mu.fileUnknown = w.Unknown
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meta: topics: %w", err)
	}
	if tc, ok := t.mu.table[AutoCreateTopic]; ok && !t.autoCreate && IsInherited(tc.Perm) {
		tc.Perm = PermReadWrite
		t.mu.table[AutoCreateTopic] = tc
	}
	return t, nil
}

// startupTopics are the topics the broker creates at start (§14.5).
func startupTopics(bc *config.BrokerConfig) map[string]protocol.TopicConfig {
	table := map[string]protocol.TopicConfig{}
	add := func(name string, queues int32, perm int32) {
		tc := protocol.NewTopicConfig(name)
		if queues > 0 {
			tc.ReadQueueNums, tc.WriteQueueNums = queues, queues
		}
		tc.Perm = perm
		table[name] = tc
	}
	add(SelfTestTopic, 1, PermReadWrite)
	if bc.AutoCreateTopicEnable {
		add(AutoCreateTopic, bc.DefaultTopicQueueNums, PermInherit|PermReadWrite)
	}
	add(BenchmarkTopic, 1024, PermReadWrite)
	clusterPerm := PermInherit
	if bc.ClusterTopicEnable {
		clusterPerm |= PermReadWrite
	}
	add(bc.BrokerClusterName, 0, clusterPerm) // Java's TopicConfig default: 16 queues
	brokerPerm := PermInherit
	if bc.BrokerTopicEnable {
		brokerPerm |= PermReadWrite
	}
	add(bc.BrokerName, 1, brokerPerm)
	add(OffsetMovedTopic, 1, PermReadWrite)
	// One queue per delay level; never fewer than Java's 18, so that a
	// store written with the default levels stays addressable.
	scheduleQueues := int32(ScheduleQueueNums)
	if levels, err := bc.DelayLevels(); err == nil && len(levels) > ScheduleQueueNums {
		scheduleQueues = int32(len(levels))
	}
	add(ScheduleTopic, scheduleQueues, PermReadWrite)
	if bc.TraceTopicEnable {
		add(bc.MsgTraceTopicName, 1, PermReadWrite)
	}
	add(bc.BrokerClusterName+ReplyTopicSuffix, 1, PermReadWrite)
	// Java 4.9.8 creates the transaction topics on first use; creating them
	// up front gives them a route before the first half message.
	add(TransHalfTopic, 1, PermReadWrite)
	add(TransOpHalfTopic, 1, PermReadWrite)
	return table
}

// OnChange registers fn to be called after every change of the table (the
// broker re-registers with the NameServers). fn runs on the goroutine that
// made the change, after the table lock is released and the file written;
// it must not block (kick a goroutine instead).
func (t *Topics) OnChange(fn func()) {
	t.listenMu.Lock()
	t.listeners = append(t.listeners, fn)
	t.listenMu.Unlock()
}

func (t *Topics) notify() {
	t.listenMu.Lock()
	ls := slices.Clone(t.listeners)
	t.listenMu.Unlock()
	for _, fn := range ls {
		fn()
	}
}

// Get returns a topic's config. The returned value is a copy.
func (t *Topics) Get(topic string) (protocol.TopicConfig, bool) {
	t.mu.RLock()
	tc, ok := t.mu.table[topic]
	t.mu.RUnlock()
	return cloneTopic(tc), ok
}

// Contains reports whether the topic exists.
func (t *Topics) Contains(topic string) bool {
	t.mu.RLock()
	_, ok := t.mu.table[topic]
	t.mu.RUnlock()
	return ok
}

// Len is the number of topics.
func (t *Topics) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.mu.table)
}

// Names returns the topic names, sorted.
func (t *Topics) Names() []string {
	t.mu.RLock()
	names := slices.Collect(maps.Keys(t.mu.table))
	t.mu.RUnlock()
	slices.Sort(names)
	return names
}

// DataVersion is the table's current version.
func (t *Topics) DataVersion() protocol.DataVersion {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.mu.version
}

// Snapshot returns a deep copy of the table and its version, the body of
// GET_ALL_TOPIC_CONFIG and the topic part of REGISTER_BROKER.
func (t *Topics) Snapshot() protocol.TopicConfigSerializeWrapper {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.snapshotLocked()
}

// RegisterSnapshot is Snapshot as REGISTER_BROKER sends it: when
// brokerPermission lacks the read or the write bit, every topic is
// announced with brokerPermission as its perm (a read-only or write-only
// broker), as Java's registerBrokerAll does.
func (t *Topics) RegisterSnapshot(brokerPermission int32) protocol.TopicConfigSerializeWrapper {
	w := t.Snapshot()
	if IsReadable(brokerPermission) && IsWriteable(brokerPermission) {
		return w
	}
	for name, tc := range w.TopicConfigTable {
		tc.Perm = brokerPermission
		w.TopicConfigTable[name] = tc
	}
	return w
}

// IsOrderTopic reports a topic whose config has the order flag (the send
// path refuses it with NO_PERMISSION when the broker is not writeable).
func (t *Topics) IsOrderTopic(topic string) bool {
	t.mu.RLock()
	tc, ok := t.mu.table[topic]
	t.mu.RUnlock()
	return ok && tc.Order
}

// REQUIRES: t.mu held (read).
func (t *Topics) snapshotLocked() protocol.TopicConfigSerializeWrapper {
	table := make(map[string]protocol.TopicConfig, len(t.mu.table))
	for name, tc := range t.mu.table {
		table[name] = cloneTopic(tc)
	}
	return protocol.TopicConfigSerializeWrapper{TopicConfigTable: table, DataVersion: t.mu.version}
}

// IsSystemTopic reports a topic admins may not create, update or delete
// (§14.4): the fixed system topics, rmq_sys_*, and this broker's cluster,
// broker-name, reply and (when enabled) trace topics.
func (t *Topics) IsSystemTopic(topic string) bool {
	return isFixedSystemTopic(topic) || t.configSystem[topic]
}

// Put creates or replaces a topic (UPDATE_AND_CREATE_TOPIC), bumps the
// version, persists and notifies. The name must pass ValidateTopic; the
// caller decides about system topics. A persist error is returned, but the
// change stays in effect in memory.
func (t *Topics) Put(tc protocol.TopicConfig) error {
	if err := ValidateTopic(tc.TopicName); err != nil {
		return err
	}
	if tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 {
		return fmt.Errorf("meta: topic %s: negative queue count %d/%d", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums)
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = protocol.SingleTag
	}
	tc = cloneTopic(tc)
	t.mu.Lock()
	t.mu.table[tc.TopicName] = tc
	nextVersion(&t.mu.version, t.now())
	t.mu.Unlock()
	t.log.Info("meta: topic updated", "topic", tc.TopicName, "read", tc.ReadQueueNums, "write", tc.WriteQueueNums, "perm", tc.Perm)
	err := t.Persist()
	t.notify()
	return err
}

// Update creates or updates a topic as UPDATE_AND_CREATE_TOPIC does in
// Java 5.x (TopicConfigManager.updateTopicConfig): tc's attributes are
// ignored; changes are applied to the current attributes by
// AlterTopicAttributes (creation when the topic does not exist), refusals
// wrapping ErrAttribute. Properties of the current entry rocketd does not
// model are kept. A request that changes nothing leaves the table and its
// version alone and reports changed=false, as Java answers such a request
// without re-registering. Otherwise as Put.
func (t *Topics) Update(tc protocol.TopicConfig, changes []AttributeChange) (changed bool, err error) {
	if err := ValidateTopic(tc.TopicName); err != nil {
		return false, err
	}
	if tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 {
		return false, fmt.Errorf("meta: topic %s: negative queue count %d/%d", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums)
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = protocol.SingleTag
	}
	t.mu.Lock()
	cur, exists := t.mu.table[tc.TopicName]
	attrs, err := AlterTopicAttributes(!exists, cur.Attributes, changes)
	if err != nil {
		t.mu.Unlock()
		return false, err
	}
	tc.Attributes, tc.Unknown = attrs, maps.Clone(cur.Unknown)
	if exists && reflect.DeepEqual(tc, cur) {
		t.mu.Unlock()
		return false, nil
	}
	t.mu.table[tc.TopicName] = tc
	nextVersion(&t.mu.version, t.now())
	t.mu.Unlock()
	t.log.Info("meta: topic updated", "topic", tc.TopicName, "read", tc.ReadQueueNums, "write", tc.WriteQueueNums,
		"perm", tc.Perm, "attributes", attrs)
	err = t.Persist()
	t.notify()
	return true, err
}

// CheckUpdate reports the error Update would return for tc and changes
// (nil when it would succeed), changing nothing.
func (t *Topics) CheckUpdate(tc protocol.TopicConfig, changes []AttributeChange) error {
	if err := ValidateTopic(tc.TopicName); err != nil {
		return err
	}
	if tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 {
		return fmt.Errorf("meta: topic %s: negative queue count %d/%d", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums)
	}
	t.mu.RLock()
	cur, exists := t.mu.table[tc.TopicName]
	t.mu.RUnlock()
	_, err := AlterTopicAttributes(!exists, cur.Attributes, changes)
	return err
}

// Delete removes a topic (DELETE_TOPIC_IN_BROKER) and reports whether it
// existed. Consumer offsets and store files are the caller's to remove.
func (t *Topics) Delete(topic string) (bool, error) {
	t.mu.Lock()
	_, ok := t.mu.table[topic]
	if ok {
		delete(t.mu.table, topic)
		nextVersion(&t.mu.version, t.now())
	}
	t.mu.Unlock()
	if !ok {
		return false, nil
	}
	t.log.Info("meta: topic deleted", "topic", topic)
	err := t.Persist()
	t.notify()
	return true, err
}

// AutoCreate is the send path's topic lookup with creation from a template
// (createTopicInSendMessageMethod, §14.3). An existing topic is returned as
// it is. Otherwise the template (normally TBW102, the request's
// defaultTopic) must exist and carry the inherit bit, else ErrNoTemplate;
// the new topic gets min(queueNums, template write queues) read and write
// queues (at least 1: a topic without queues could not take a message),
// the template's perm without the inherit bit, its filter type, and sysFlag.
// created=true means the table changed and the broker should re-register
// (the OnChange listeners have run). A failed persist is logged, not
// returned: the topic is usable and the file catches up on the next change.
//
// A send to an unknown %RETRY% topic that cannot be created this way falls
// back to EnsureTopic(topic, 1, PermReadWrite, sysFlag) in the caller, as
// Java's msgCheck does.
func (t *Topics) AutoCreate(topic, template string, queueNums, sysFlag int32) (protocol.TopicConfig, bool, error) {
	if tc, ok := t.Get(topic); ok {
		return tc, false, nil
	}
	if err := ValidateTopic(topic); err != nil {
		return protocol.TopicConfig{}, false, err
	}
	t.mu.Lock()
	if tc, ok := t.mu.table[topic]; ok { // created meanwhile
		t.mu.Unlock()
		return cloneTopic(tc), false, nil
	}
	tmpl, ok := t.mu.table[template]
	if !ok {
		t.mu.Unlock()
		return protocol.TopicConfig{}, false, fmt.Errorf("%w: topic %s: template %s does not exist", ErrNoTemplate, topic, template)
	}
	perm := tmpl.Perm
	if template == AutoCreateTopic && !t.autoCreate {
		perm = PermReadWrite // Java forces TBW102 to RW when auto-creation is off
	}
	if !IsInherited(perm) {
		t.mu.Unlock()
		return protocol.TopicConfig{}, false, fmt.Errorf("%w: topic %s: template %s (perm %d) is not inheritable", ErrNoTemplate, topic, template, perm)
	}
	queues := max(min(queueNums, tmpl.WriteQueueNums), 1)
	tc := protocol.TopicConfig{
		TopicName:       topic,
		ReadQueueNums:   queues,
		WriteQueueNums:  queues,
		Perm:            perm &^ PermInherit,
		TopicFilterType: tmpl.TopicFilterType,
		TopicSysFlag:    sysFlag,
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = protocol.SingleTag
	}
	t.mu.table[topic] = tc
	nextVersion(&t.mu.version, t.now())
	t.mu.Unlock()
	t.created(tc, "template", template)
	return cloneTopic(tc), true, nil
}

// EnsureTopic returns the topic, creating it with the given queue count,
// perm and sysFlag when absent (createTopicInSendMessageBackMethod: retry,
// DLQ and transaction topics). An existing topic is never changed. As in
// AutoCreate, created=true means the table changed and a failed persist is
// only logged.
func (t *Topics) EnsureTopic(topic string, queueNums, perm, sysFlag int32) (protocol.TopicConfig, bool, error) {
	if tc, ok := t.Get(topic); ok {
		return tc, false, nil
	}
	if err := ValidateTopic(topic); err != nil {
		return protocol.TopicConfig{}, false, err
	}
	if queueNums < 0 {
		return protocol.TopicConfig{}, false, fmt.Errorf("meta: topic %s: negative queue count %d", topic, queueNums)
	}
	t.mu.Lock()
	if tc, ok := t.mu.table[topic]; ok {
		t.mu.Unlock()
		return cloneTopic(tc), false, nil
	}
	tc := protocol.TopicConfig{
		TopicName:       topic,
		ReadQueueNums:   queueNums,
		WriteQueueNums:  queueNums,
		Perm:            perm,
		TopicFilterType: protocol.SingleTag,
		TopicSysFlag:    sysFlag,
	}
	t.mu.table[topic] = tc
	nextVersion(&t.mu.version, t.now())
	t.mu.Unlock()
	t.created(tc)
	return cloneTopic(tc), true, nil
}

// EnsureRetryTopic returns %RETRY%group, creating it with retryQueueNums
// queues and perm RW when absent (HEART_BEAT, CONSUMER_SEND_MSG_BACK).
func (t *Topics) EnsureRetryTopic(group string, retryQueueNums int32) (protocol.TopicConfig, bool, error) {
	return t.EnsureTopic(RetryTopic(group), retryQueueNums, PermReadWrite, 0)
}

// EnsureDLQTopic returns %DLQ%group, creating it with one queue and perm
// RW (4.9.2+) when absent. An older broker's write-only DLQ topic is kept.
func (t *Topics) EnsureDLQTopic(group string) (protocol.TopicConfig, bool, error) {
	return t.EnsureTopic(DLQTopic(group), DLQQueueNums, PermReadWrite, 0)
}

// created persists and notifies after a send-path creation.
func (t *Topics) created(tc protocol.TopicConfig, attrs ...any) {
	t.log.Info("meta: topic created", append([]any{"topic", tc.TopicName, "queues", tc.WriteQueueNums, "perm", tc.Perm}, attrs...)...)
	if err := t.Persist(); err != nil {
		t.log.Error("meta: persist after creating a topic", "topic", tc.TopicName, "err", err)
	}
	t.notify()
}

// Persist writes config/topics.json now.
func (t *Topics) Persist() error {
	return t.file.persist(func() ([]byte, error) {
		t.mu.RLock()
		w := t.snapshotLocked()
		w.Unknown = t.mu.fileUnknown
		t.mu.RUnlock()
		return protocol.MarshalFastJSONPretty(w)
	})
}

func cloneTopic(tc protocol.TopicConfig) protocol.TopicConfig {
	if tc.Attributes != nil {
		tc.Attributes = maps.Clone(tc.Attributes)
	}
	if tc.Unknown != nil {
		tc.Unknown = maps.Clone(tc.Unknown) // the JSON texts are immutable
	}
	return tc
}
