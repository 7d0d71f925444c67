package meta

import (
	"maps"
)

// PermIndexRead is Java's PermName.INDEX_PERM_READ: the bit of the
// forbidden table that keeps a group from pulling a topic.
const PermIndexRead = 2

// ReadForbidden reports whether group may not pull topic (Java's
// getForbidden(group, topic, INDEX_PERM_READ)).
func (g *Groups) ReadForbidden(group, topic string) bool {
	if !g.anyForbidden.Load() {
		return false
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.mu.forbidden[group][topic]&(1<<PermIndexRead) != 0
}

// SetReadForbidden sets or clears the read bit of group on topic
// (UPDATE_AND_GET_GROUP_FORBIDDEN), bumps the version and persists when
// it changed. Java drops the group's whole entry when one topic's bits
// become 0 (clearing one topic un-forbids the others); rocketd drops only
// that topic's. A persist error is returned; the change stays in effect.
func (g *Groups) SetReadForbidden(group, topic string, forbidden bool) error {
	g.mu.Lock()
	bits := g.mu.forbidden[group][topic]
	next := bits &^ (1 << PermIndexRead)
	if forbidden {
		next = bits | 1<<PermIndexRead
	}
	if next == bits {
		g.mu.Unlock()
		return nil
	}
	if g.mu.forbidden == nil {
		g.mu.forbidden = map[string]map[string]int32{}
	}
	topics := g.mu.forbidden[group]
	if topics == nil {
		topics = map[string]int32{}
		g.mu.forbidden[group] = topics
	}
	if next == 0 {
		delete(topics, topic)
		if len(topics) == 0 {
			delete(g.mu.forbidden, group)
		}
	} else {
		topics[topic] = next
	}
	g.anyForbidden.Store(len(g.mu.forbidden) > 0)
	nextVersion(&g.mu.version, g.now())
	g.mu.Unlock()
	g.log.Info("meta: group forbidden updated", "group", group, "topic", topic, "readForbidden", forbidden)
	return g.Persist()
}

func cloneForbidden(t map[string]map[string]int32) map[string]map[string]int32 {
	if len(t) == 0 {
		return nil
	}
	out := make(map[string]map[string]int32, len(t))
	for g, topics := range t {
		out[g] = maps.Clone(topics)
	}
	return out
}
