package namesrv

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
)

// MasterID is the brokerId of a broker group's master; slaves have ids >= 1.
const MasterID int64 = 0

// Permission bits of a queue (rocketmq-spec.md §14.2).
const (
	PermRead  = 4
	PermWrite = 2
)

// DataVersion identifies one state of a broker's topic configuration. Two
// versions are equal when both fields match; the name server rebuilds a
// master's queue data only when the version it registers with has changed.
type DataVersion struct {
	Timestamp int64
	Counter   int64
}

// TopicConfig is the part of a broker's topic configuration the name server
// keeps: the queue counts, permission and system flag of one topic.
type TopicConfig struct {
	TopicName      string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32
	TopicSysFlag   int32
}

// QueueData is how one broker group (by name) serves a topic.
type QueueData struct {
	BrokerName     string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32
	TopicSysFlag   int32
}

// BrokerData is one broker group: its cluster, name and the address of each
// member by brokerId (0 = master).
type BrokerData struct {
	Cluster     string
	BrokerName  string
	BrokerAddrs map[int64]string
}

func (b *BrokerData) clone() BrokerData {
	return BrokerData{Cluster: b.Cluster, BrokerName: b.BrokerName, BrokerAddrs: maps.Clone(b.BrokerAddrs)}
}

// primeSlave reports whether id is a slave that speaks for the group: the
// group has no master and id is its lowest broker id (Java 5.x).
func (b *BrokerData) primeSlave(id int64) bool {
	if id == MasterID {
		return false
	}
	if _, ok := b.BrokerAddrs[MasterID]; ok {
		return false
	}
	for other := range b.BrokerAddrs {
		if other < id {
			return false
		}
	}
	return true
}

// Route is what GET_ROUTEINFO_BY_TOPIC answers for a topic: the queue data of
// every broker group that serves it and those groups' members, both sorted by
// broker name.
type Route struct {
	QueueDatas  []QueueData
	BrokerDatas []BrokerData
	// Mappings is a static topic's mapping info by broker name (nil for
	// other topics); shared, read only.
	Mappings map[string]*protocol.TopicQueueMappingInfo
}

// ClusterInfo is the whole broker membership: broker groups by name and
// broker names by cluster (each list sorted).
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData
	ClusterAddrTable map[string][]string
}

// Registration is one REGISTER_BROKER request as the table sees it.
type Registration struct {
	ClusterName  string
	BrokerName   string
	BrokerAddr   string
	BrokerID     int64
	HAServerAddr string
	DataVersion  DataVersion
	// Topics is the broker's topic configuration; it is applied only for a
	// master whose DataVersion changed (or on its first registration).
	Topics []TopicConfig
	// Body is set when the registration carried a topic table; then
	// Mappings (the static topics' mapping info by topic, 5.x) replaces
	// what the broker group registered before, for a master or the prime
	// slave. Unlike Java, which takes them only with a new data version,
	// every such registration applies them: a rocketd broker's mapping
	// may change while its topic table does not.
	Body     bool
	Mappings map[string]*protocol.TopicQueueMappingInfo
	// Conn identifies the connection the registration came on (any comparable
	// value, typically a *remoting.Conn). When it closes, RemoveConn drops
	// the broker. Nil means "not tracked".
	Conn any
}

// RegisterResult tells a slave where its master is.
type RegisterResult struct {
	MasterAddr   string
	HAServerAddr string
}

// Unregistration is one UNREGISTER_BROKER request.
type Unregistration struct {
	ClusterName string
	BrokerName  string
	BrokerAddr  string
	BrokerID    int64
}

// ExpiredBroker is a broker removed by Expire: its address and the connection
// it last registered on, which the caller should close.
type ExpiredBroker struct {
	Addr string
	Conn any
}

// liveBroker is the liveness record of one broker address.
type liveBroker struct {
	lastUpdate   time.Time
	dataVersion  DataVersion
	haServerAddr string
	conn         any
}

// Table is the name server's route table: which broker groups exist, in which
// cluster, with which member addresses, which topics each group serves, and
// when each broker address last registered. It is a plain in-memory structure
// with no I/O and no clock of its own (callers pass "now"), safe for
// concurrent use.
//
// The rules follow RocketMQ 4.9.8's RouteInfoManager; see doc.go.
type Table struct {
	mu struct {
		sync.RWMutex
		// topics maps topic -> broker name -> queue data.
		topics map[string]map[string]*QueueData
		// brokers maps broker name -> group membership.
		brokers map[string]*BrokerData
		// clusters maps cluster name -> set of broker names.
		clusters map[string]map[string]struct{}
		// mappings maps a static topic -> broker name -> its mapping info
		// (RouteInfoManager.topicQueueMappingInfoTable).
		mappings map[string]map[string]*protocol.TopicQueueMappingInfo
		// live maps broker address -> liveness record.
		live map[string]*liveBroker
	}
}

// NewTable returns an empty route table.
func NewTable() *Table {
	t := &Table{}
	t.mu.topics = map[string]map[string]*QueueData{}
	t.mu.brokers = map[string]*BrokerData{}
	t.mu.clusters = map[string]map[string]struct{}{}
	t.mu.live = map[string]*liveBroker{}
	t.mu.mappings = map[string]map[string]*protocol.TopicQueueMappingInfo{}
	return t
}

// Register records a broker registration at time now.
func (t *Table) Register(r Registration, now time.Time) RegisterResult {
	t.mu.Lock()
	defer t.mu.Unlock()

	names := t.mu.clusters[r.ClusterName]
	if names == nil {
		names = map[string]struct{}{}
		t.mu.clusters[r.ClusterName] = names
	}
	names[r.BrokerName] = struct{}{}

	first := false
	bd := t.mu.brokers[r.BrokerName]
	if bd == nil {
		bd = &BrokerData{Cluster: r.ClusterName, BrokerName: r.BrokerName, BrokerAddrs: map[int64]string{}}
		t.mu.brokers[r.BrokerName] = bd
		first = true
	}
	// A broker that changed role keeps its address but comes back with another
	// id (slave -> master switch): drop the stale id so the address is listed once.
	for id, addr := range bd.BrokerAddrs {
		if addr == r.BrokerAddr && id != r.BrokerID {
			delete(bd.BrokerAddrs, id)
		}
	}
	if _, ok := bd.BrokerAddrs[r.BrokerID]; !ok {
		first = true
	}
	bd.BrokerAddrs[r.BrokerID] = r.BrokerAddr

	prev := t.mu.live[r.BrokerAddr]
	changed := first || prev == nil || prev.dataVersion != r.DataVersion
	if r.Body && (r.BrokerID == MasterID || bd.primeSlave(r.BrokerID)) {
		t.setMappingsLocked(r.BrokerName, r.Mappings)
	}
	switch {
	case r.BrokerID == MasterID:
		if changed {
			for _, tc := range r.Topics {
				t.updateQueueDataLocked(r.BrokerName, tc)
			}
		}
	case bd.primeSlave(r.BrokerID):
		// No master: the slave with the lowest id speaks for the group
		// (Java 5.x's prime slave). Queue data the master registered is
		// kept unless the slave's version changed; topics the group lacks
		// are added, so a topic whose master registration never arrived
		// (the master died first, or this name server started after it)
		// is still routed to the slave that serves it.
		for _, tc := range r.Topics {
			if changed || !t.hasQueueDataLocked(r.BrokerName, tc.TopicName) {
				t.updateQueueDataLocked(r.BrokerName, tc)
			}
		}
	}

	t.mu.live[r.BrokerAddr] = &liveBroker{
		lastUpdate:   now,
		dataVersion:  r.DataVersion,
		haServerAddr: r.HAServerAddr,
		conn:         r.Conn,
	}

	var res RegisterResult
	if r.BrokerID != MasterID {
		if master, ok := bd.BrokerAddrs[MasterID]; ok {
			if lb := t.mu.live[master]; lb != nil {
				res.MasterAddr = master
				res.HAServerAddr = lb.haServerAddr
			}
		}
	}
	return res
}

// hasQueueDataLocked reports whether brokerName serves topic.
// REQUIRES: t.mu held.
func (t *Table) hasQueueDataLocked(brokerName, topic string) bool {
	_, ok := t.mu.topics[topic][brokerName]
	return ok
}

// updateQueueDataLocked sets the queue data of one topic on one broker group.
// REQUIRES: t.mu held for writing.
func (t *Table) updateQueueDataLocked(brokerName string, tc TopicConfig) {
	byBroker := t.mu.topics[tc.TopicName]
	if byBroker == nil {
		byBroker = map[string]*QueueData{}
		t.mu.topics[tc.TopicName] = byBroker
	}
	byBroker[brokerName] = &QueueData{
		BrokerName:     brokerName,
		ReadQueueNums:  tc.ReadQueueNums,
		WriteQueueNums: tc.WriteQueueNums,
		Perm:           tc.Perm,
		TopicSysFlag:   tc.TopicSysFlag,
	}
}

// Unregister removes one broker (an explicit UNREGISTER_BROKER). The group's
// queue data goes only when its last member is gone: a group whose master
// left but whose slave remains still serves reads.
func (t *Table) Unregister(u Unregistration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mu.live, u.BrokerAddr)
	bd := t.mu.brokers[u.BrokerName]
	if bd == nil {
		return
	}
	delete(bd.BrokerAddrs, u.BrokerID)
	if len(bd.BrokerAddrs) > 0 {
		return
	}
	t.removeGroupLocked(u.BrokerName)
}

// removeGroupLocked forgets a broker group that lost its last member: its
// membership in every cluster (not only the one a request names: a group may
// have registered under several, and Java's leftovers here would list a group
// that no longer exists) and its queue data. REQUIRES: t.mu held for writing.
func (t *Table) removeGroupLocked(brokerName string) {
	delete(t.mu.brokers, brokerName)
	for cluster, names := range t.mu.clusters {
		delete(names, brokerName)
		if len(names) == 0 {
			delete(t.mu.clusters, cluster)
		}
	}
	t.removeBrokerTopicsLocked(brokerName)
}

// setMappingsLocked replaces the mapping info broker group brokerName
// registered (Java keys it by the info's bname, which a broker sets to
// its own name). REQUIRES: t.mu held for writing.
func (t *Table) setMappingsLocked(brokerName string, infos map[string]*protocol.TopicQueueMappingInfo) {
	for topic, byBroker := range t.mu.mappings {
		if _, ok := infos[topic]; !ok {
			delete(byBroker, brokerName)
			if len(byBroker) == 0 {
				delete(t.mu.mappings, topic)
			}
		}
	}
	for topic, info := range infos {
		if info == nil {
			continue
		}
		bname := info.Bname
		if bname == "" {
			bname = brokerName
		}
		byBroker := t.mu.mappings[topic]
		if byBroker == nil {
			byBroker = map[string]*protocol.TopicQueueMappingInfo{}
			t.mu.mappings[topic] = byBroker
		}
		c := *info
		c.CurrIDMap = maps.Clone(info.CurrIDMap)
		byBroker[bname] = &c
	}
}

// removeBrokerTopicsLocked drops a broker group from every topic and topics
// left with no group. REQUIRES: t.mu held for writing.
func (t *Table) removeBrokerTopicsLocked(brokerName string) {
	t.setMappingsLocked(brokerName, nil)
	for topic, byBroker := range t.mu.topics {
		delete(byBroker, brokerName)
		if len(byBroker) == 0 {
			delete(t.mu.topics, topic)
		}
	}
}

// removeAddrLocked forgets everything known about one broker address: its
// liveness record, its membership in every group, and groups (with their
// cluster membership and queue data) that lose their last member.
// REQUIRES: t.mu held for writing.
func (t *Table) removeAddrLocked(addr string) {
	delete(t.mu.live, addr)
	for name, bd := range t.mu.brokers {
		for id, a := range bd.BrokerAddrs {
			if a == addr {
				delete(bd.BrokerAddrs, id)
			}
		}
		if len(bd.BrokerAddrs) == 0 {
			t.removeGroupLocked(name)
		}
	}
}

// RemoveConn drops every broker whose latest registration came on conn (the
// connection closed). It returns the addresses removed. A broker that has
// since re-registered on another connection is kept.
func (t *Table) RemoveConn(conn any) []string {
	if conn == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var removed []string
	for addr, lb := range t.mu.live {
		if lb.conn == conn {
			removed = append(removed, addr)
		}
	}
	sort.Strings(removed)
	for _, addr := range removed {
		t.removeAddrLocked(addr)
	}
	return removed
}

// Expire removes every broker that has not registered since now-ttl and
// returns them (sorted by address) so their connections can be closed.
func (t *Table) Expire(now time.Time, ttl time.Duration) []ExpiredBroker {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []ExpiredBroker
	for addr, lb := range t.mu.live {
		if lb.lastUpdate.Add(ttl).Before(now) {
			out = append(out, ExpiredBroker{Addr: addr, Conn: lb.conn})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	for _, e := range out {
		t.removeAddrLocked(e.Addr)
	}
	return out
}

// DataVersionChanged reports whether dv differs from the version brokerAddr
// last registered with (true for an unknown broker). When it has not changed
// the broker's liveness is refreshed: a broker with forceRegister=false sends
// QUERY_DATA_VERSION instead of re-registering, so it counts as a heartbeat.
func (t *Table) DataVersionChanged(brokerAddr string, dv DataVersion, now time.Time) (changed bool, current DataVersion, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lb := t.mu.live[brokerAddr]
	if lb == nil {
		return true, DataVersion{}, false
	}
	if lb.dataVersion != dv {
		return true, lb.dataVersion, true
	}
	lb.lastUpdate = now
	return false, lb.dataVersion, true
}

// Route assembles the route of a topic. ok is false when the topic has no
// queue data or none of its broker groups is known (TOPIC_NOT_EXIST).
func (t *Table) Route(topic string) (r Route, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	byBroker := t.mu.topics[topic]
	if len(byBroker) == 0 {
		return Route{}, false
	}
	for _, name := range slices.Sorted(maps.Keys(byBroker)) {
		r.QueueDatas = append(r.QueueDatas, *byBroker[name])
		if bd := t.mu.brokers[name]; bd != nil {
			r.BrokerDatas = append(r.BrokerDatas, bd.clone())
		}
	}
	if len(r.BrokerDatas) == 0 {
		return Route{}, false
	}
	if m := t.mu.mappings[topic]; len(m) > 0 {
		r.Mappings = maps.Clone(m)
	}
	return r, true
}

// ClusterInfo returns a copy of the broker membership.
func (t *Table) ClusterInfo() ClusterInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ci := ClusterInfo{
		BrokerAddrTable:  make(map[string]BrokerData, len(t.mu.brokers)),
		ClusterAddrTable: make(map[string][]string, len(t.mu.clusters)),
	}
	for name, bd := range t.mu.brokers {
		ci.BrokerAddrTable[name] = bd.clone()
	}
	for cluster, names := range t.mu.clusters {
		ci.ClusterAddrTable[cluster] = slices.Sorted(maps.Keys(names))
	}
	return ci
}

// Topics returns every topic name, sorted.
func (t *Table) Topics() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.mu.topics))
}

// TopicsByCluster returns, sorted, the topics served by at least one broker
// group of the cluster.
func (t *Table) TopicsByCluster(cluster string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	names := t.mu.clusters[cluster]
	var out []string
	for topic, byBroker := range t.mu.topics {
		for name := range byBroker {
			if _, ok := names[name]; ok {
				out = append(out, topic)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// DeleteTopic removes a topic's queue data: from the broker groups of
// cluster when cluster is not empty, otherwise everywhere. It reports whether
// anything was removed.
func (t *Table) DeleteTopic(topic, cluster string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	byBroker, ok := t.mu.topics[topic]
	if !ok {
		return false
	}
	if cluster == "" {
		delete(t.mu.topics, topic)
		delete(t.mu.mappings, topic)
		return true
	}
	removed := false
	for name := range t.mu.clusters[cluster] {
		if _, ok := byBroker[name]; ok {
			delete(byBroker, name)
			removed = true
		}
	}
	if len(byBroker) == 0 {
		delete(t.mu.topics, topic)
		delete(t.mu.mappings, topic)
	}
	return removed
}

// WipeWritePerm clears the write bit of every queue data of the broker group
// (the group stops taking sends but still serves reads) and returns how many
// topics it touched.
func (t *Table) WipeWritePerm(brokerName string) int {
	return t.setWritePerm(brokerName, func(perm int32) int32 { return perm &^ PermWrite })
}

// AddWritePerm gives every queue data of the broker group read and write
// permission again and returns how many topics it touched.
func (t *Table) AddWritePerm(brokerName string) int {
	return t.setWritePerm(brokerName, func(int32) int32 { return PermRead | PermWrite })
}

func (t *Table) setWritePerm(brokerName string, perm func(int32) int32) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, byBroker := range t.mu.topics {
		if qd, ok := byBroker[brokerName]; ok {
			qd.Perm = perm(qd.Perm)
			n++
		}
	}
	return n
}

// LiveBrokers returns the addresses of the registered brokers, sorted.
func (t *Table) LiveBrokers() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.mu.live))
}

// Topic system flags (Java's TopicSysFlag).
const (
	topicSysFlagUnit    int32 = 1 << 0
	topicSysFlagUnitSub int32 = 1 << 1
)

// SystemTopics returns what Java calls the system topic list: every
// cluster name and every broker name (clients and tools send to them to
// reach one cluster or one broker group), sorted, and the address of one
// live broker (the master of the first broker group by name, else its
// lowest-id member), which the dashboard then asks for its own system
// topics. addr is "" when no broker is registered.
func (t *Table) SystemTopics() (names []string, addr string) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := map[string]struct{}{}
	for cluster, brokers := range t.mu.clusters {
		seen[cluster] = struct{}{}
		for name := range brokers {
			seen[name] = struct{}{}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.mu.brokers)) {
		bd := t.mu.brokers[name]
		if len(bd.BrokerAddrs) > 0 {
			addr = bd.BrokerAddrs[slices.Min(slices.Collect(maps.Keys(bd.BrokerAddrs)))]
			break
		}
	}
	return slices.Sorted(maps.Keys(seen)), addr
}

// TopicsWithSysFlag returns, sorted, the topics whose system flag (that of
// the first broker group serving it, by name, as Java looks at one) passes
// keep: the unit-topic lists of GET_UNIT_TOPIC_LIST and its two siblings.
func (t *Table) TopicsWithSysFlag(keep func(flag int32) bool) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	for topic, byBroker := range t.mu.topics {
		if len(byBroker) == 0 {
			continue
		}
		first := slices.Min(slices.Collect(maps.Keys(byBroker)))
		if keep(byBroker[first].TopicSysFlag) {
			out = append(out, topic)
		}
	}
	sort.Strings(out)
	return out
}

// RegisterTopic adds or replaces the queue data of topic for the broker
// groups named in qds (REGISTER_TOPIC_IN_NAMESRV, sent by 5.x brokers and
// tools). Like Java, nothing changes when any of them is unknown; it
// reports whether the table changed.
func (t *Table) RegisterTopic(topic string, qds []QueueData) bool {
	if topic == "" || len(qds) == 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, qd := range qds {
		if _, ok := t.mu.brokers[qd.BrokerName]; !ok {
			return false
		}
	}
	byBroker := t.mu.topics[topic]
	if byBroker == nil {
		byBroker = map[string]*QueueData{}
		t.mu.topics[topic] = byBroker
	}
	for _, qd := range qds {
		byBroker[qd.BrokerName] = &qd
	}
	return true
}
