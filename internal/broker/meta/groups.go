package meta

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

// builtinGroups are the subscription groups a 4.9.8 broker holds in memory
// from the start (rocketmq-spec.md §6.5).
var builtinGroups = []string{
	"TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP",
	"CID_ONS-HTTP-PROXY", "CID_ONSAPI_PULL", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER",
}

// Groups is the broker's subscription group table (Java's
// SubscriptionGroupManager) with its DataVersion, persisted to
// config/subscriptionGroup.json on every change. Safe for concurrent use;
// readers never wait for file I/O.
type Groups struct {
	file       *configFile
	log        *slog.Logger
	now        func() time.Time
	autoCreate bool
	// anyForbidden mirrors len(mu.forbidden) > 0 (set under mu), so that
	// ReadForbidden, asked on every pull, takes no lock while no group is
	// forbidden (the usual case).
	anyForbidden atomic.Bool

	mu struct {
		sync.RWMutex
		table   map[string]protocol.SubscriptionGroupConfig
		version protocol.DataVersion
		// forbidden is 5.x's forbiddenTable: group -> topic -> bits
		// (UPDATE_AND_GET_GROUP_FORBIDDEN; forbidden.go).
		forbidden map[string]map[string]int32
		// fileUnknown are the file's top-level properties rocketd does
		// not model, written back on every persist.
		fileUnknown protocol.UnknownMembers
	}
}

// OpenGroups builds the built-in groups and merges
// config/subscriptionGroup.json (or its .bak) over them; the file's
// DataVersion is kept.
func OpenGroups(opts Options, bc *config.BrokerConfig) (*Groups, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	g := &Groups{
		file:       opts.file(SubscriptionGroupFile),
		log:        opts.Logger,
		now:        opts.Now,
		autoCreate: bc.AutoCreateSubscriptionGroup,
	}
	g.mu.table = map[string]protocol.SubscriptionGroupConfig{}
	for _, name := range builtinGroups {
		cfg := protocol.NewSubscriptionGroupConfig(name)
		cfg.ConsumeBroadcastEnable = true
		g.mu.table[name] = cfg
	}
	g.mu.version = newDataVersion(g.now())
	_, err := g.file.load(func(data []byte) error {
		var w protocol.SubscriptionGroupTable
		if err := protocol.UnmarshalFastJSON(data, &w); err != nil {
			return err
		}
		for name, cfg := range w.SubscriptionGroupTable {
			if cfg.GroupName == "" {
				cfg.GroupName = name
			}
			g.mu.table[name] = cfg
		}
		// A file without a dataVersion keeps the fresh one, as in Java
		// (its wrapper object starts with a new DataVersion).
		if w.DataVersion != (protocol.DataVersion{}) {
			g.mu.version = w.DataVersion
		}
		g.mu.fileUnknown = w.Unknown
		g.mu.forbidden = cloneForbidden(w.ForbiddenTable)
		g.anyForbidden.Store(len(g.mu.forbidden) > 0)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("meta: subscription groups: %w", err)
	}
	return g, nil
}

// Get returns a group's config without creating it.
func (g *Groups) Get(group string) (protocol.SubscriptionGroupConfig, bool) {
	g.mu.RLock()
	cfg, ok := g.mu.table[group]
	g.mu.RUnlock()
	return cfg.Clone(), ok
}

// FindOrCreate returns a group's config, creating it with the defaults when
// absent and autoCreateSubscriptionGroup is on or the name starts with
// CID_RMQ_SYS_ (findSubscriptionGroupConfig). Like Java 5.x (4.9.8 creates
// any name) it does not create a group whose name breaks the topic
// character rules or is longer than 255. ok=false means the group does not exist (the caller answers
// SUBSCRIPTION_GROUP_NOT_EXIST). A failed persist after a creation is
// logged, not returned.
func (g *Groups) FindOrCreate(group string) (cfg protocol.SubscriptionGroupConfig, ok bool) {
	if cfg, ok := g.Get(group); ok {
		return cfg, true
	}
	if !(g.autoCreate || IsSysConsumerGroup(group)) || !validAutoCreateGroup(group) {
		return protocol.SubscriptionGroupConfig{}, false
	}
	g.mu.Lock()
	if cfg, ok := g.mu.table[group]; ok {
		g.mu.Unlock()
		return cfg.Clone(), true
	}
	cfg = protocol.NewSubscriptionGroupConfig(group)
	g.mu.table[group] = cfg
	nextVersion(&g.mu.version, g.now())
	g.mu.Unlock()
	g.log.Info("meta: subscription group created", "group", group)
	if err := g.Persist(); err != nil {
		g.log.Error("meta: persist after creating a subscription group", "group", group, "err", err)
	}
	return cfg, true
}

// Put creates or replaces a group (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP),
// bumps the version and persists. A persist error is returned; the change
// stays in effect in memory.
func (g *Groups) Put(cfg protocol.SubscriptionGroupConfig) error {
	if cfg.GroupName == "" {
		return fmt.Errorf("%w: empty group name", ErrInvalidName)
	}
	cfg = cfg.Clone()
	g.mu.Lock()
	g.mu.table[cfg.GroupName] = cfg
	nextVersion(&g.mu.version, g.now())
	g.mu.Unlock()
	g.log.Info("meta: subscription group updated", "group", cfg.GroupName)
	return g.Persist()
}

// Update creates or replaces a group as UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// does in Java 5.x: cfg.Attributes is a modification ("+key" -> value) of
// the current attributes (AlterGroupAttributes; 5.x knows no group
// attribute, so any is refused with ErrAttribute). Properties of the
// current entry rocketd does not model (from a newer Java's file) are
// kept; those of the request are not, as Java's decoding drops them.
// Otherwise as Put.
func (g *Groups) Update(cfg protocol.SubscriptionGroupConfig) error {
	if cfg.GroupName == "" {
		return fmt.Errorf("%w: empty group name", ErrInvalidName)
	}
	cfg = cfg.Clone()
	g.mu.Lock()
	cur, exists := g.mu.table[cfg.GroupName]
	attrs, err := AlterGroupAttributes(!exists, cur.Attributes, cfg.Attributes)
	if err != nil {
		g.mu.Unlock()
		return err
	}
	cfg.Attributes, cfg.Unknown = attrs, maps.Clone(cur.Unknown)
	g.mu.table[cfg.GroupName] = cfg
	nextVersion(&g.mu.version, g.now())
	g.mu.Unlock()
	g.log.Info("meta: subscription group updated", "group", cfg.GroupName, "retryMaxTimes", cfg.RetryMaxTimes,
		"consumeEnable", cfg.ConsumeEnable, "orderly", cfg.ConsumeMessageOrderly)
	return g.Persist()
}

// Delete removes a group (DELETE_SUBSCRIPTIONGROUP) and reports whether it
// existed. Its offsets are the caller's to remove.
func (g *Groups) Delete(group string) (bool, error) {
	g.mu.Lock()
	_, ok := g.mu.table[group]
	_, forbidden := g.mu.forbidden[group]
	if ok || forbidden {
		delete(g.mu.table, group)
		delete(g.mu.forbidden, group) // a group may be forbidden without a config
		g.anyForbidden.Store(len(g.mu.forbidden) > 0)
		nextVersion(&g.mu.version, g.now())
	}
	g.mu.Unlock()
	if !ok {
		if forbidden {
			return false, g.Persist()
		}
		return false, nil
	}
	g.log.Info("meta: subscription group deleted", "group", group)
	return true, g.Persist()
}

// Names returns the group names, sorted.
func (g *Groups) Names() []string {
	g.mu.RLock()
	names := slices.Collect(maps.Keys(g.mu.table))
	g.mu.RUnlock()
	slices.Sort(names)
	return names
}

// DataVersion is the table's current version.
func (g *Groups) DataVersion() protocol.DataVersion {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.mu.version
}

// Snapshot returns a copy of the table and its version (the body of
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG).
func (g *Groups) Snapshot() protocol.SubscriptionGroupTable {
	g.mu.RLock()
	defer g.mu.RUnlock()
	table := make(map[string]protocol.SubscriptionGroupConfig, len(g.mu.table))
	for name, cfg := range g.mu.table {
		table[name] = cfg.Clone()
	}
	return protocol.SubscriptionGroupTable{SubscriptionGroupTable: table, ForbiddenTable: cloneForbidden(g.mu.forbidden),
		DataVersion: g.mu.version}
}

// Persist writes config/subscriptionGroup.json now, with the file's
// properties rocketd does not model.
func (g *Groups) Persist() error {
	return g.file.persist(func() ([]byte, error) {
		w := g.Snapshot()
		g.mu.RLock()
		w.Unknown = g.mu.fileUnknown
		g.mu.RUnlock()
		return protocol.MarshalFastJSONPretty(w)
	})
}
