package namesrv

import (
	"fmt"
)

// checkInvariants verifies the table's internal consistency:
//   - every broker group has at least one member, and its name is listed
//     under at least one cluster;
//   - every cluster lists at least one broker name, each of a known group;
//   - every topic has queue data from at least one group, each of a known
//     group, under the group's own name;
//   - every known topic has a route.
func (t *Table) checkInvariants() error {
	t.mu.RLock()
	inCluster := map[string]bool{}
	for cluster, names := range t.mu.clusters {
		if len(names) == 0 {
			t.mu.RUnlock()
			return fmt.Errorf("cluster %q lists no broker", cluster)
		}
		for name := range names {
			if t.mu.brokers[name] == nil {
				t.mu.RUnlock()
				return fmt.Errorf("cluster %q lists unknown broker %q", cluster, name)
			}
			inCluster[name] = true
		}
	}
	for name, bd := range t.mu.brokers {
		if len(bd.BrokerAddrs) == 0 {
			t.mu.RUnlock()
			return fmt.Errorf("broker group %q has no member", name)
		}
		if bd.BrokerName != name || !inCluster[name] {
			t.mu.RUnlock()
			return fmt.Errorf("broker group %q (named %q) is in no cluster", name, bd.BrokerName)
		}
	}
	for topic, byBroker := range t.mu.topics {
		if len(byBroker) == 0 {
			t.mu.RUnlock()
			return fmt.Errorf("topic %q has no queue data", topic)
		}
		for name, qd := range byBroker {
			if t.mu.brokers[name] == nil || qd.BrokerName != name {
				t.mu.RUnlock()
				return fmt.Errorf("topic %q has queue data of unknown group %q (%q)", topic, name, qd.BrokerName)
			}
		}
	}
	t.mu.RUnlock()
	for _, topic := range t.Topics() {
		if _, ok := t.Route(topic); !ok {
			return fmt.Errorf("topic %q is listed but has no route", topic)
		}
	}
	return nil
}
