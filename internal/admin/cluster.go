package admin

import (
	"context"
	"slices"

	"github.com/rocketd/rocketd/internal/protocol"
)

// ClusterInfo returns the NameServer's brokers by name and clusters.
func (c *Client) ClusterInfo(ctx context.Context) (*protocol.ClusterInfo, error) {
	var ci protocol.ClusterInfo
	if err := c.namesrvJSON(ctx, "GET_BROKER_CLUSTER_INFO", protocol.GetBrokerClusterInfo, nil, &ci); err != nil {
		return nil, err
	}
	return &ci, nil
}

// Broker is one broker group's master as the console addresses it.
type Broker struct {
	Cluster string
	Name    string
	Addr    string // master address ("" when the group has none)
}

// Masters lists the master of every broker group the NameServer knows,
// sorted by cluster and name; cluster "" means all clusters.
func (c *Client) Masters(ctx context.Context, cluster string) ([]Broker, error) {
	ci, err := c.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	var out []Broker
	for name, bd := range ci.BrokerAddrTable {
		if cluster != "" && bd.Cluster != cluster {
			continue
		}
		out = append(out, Broker{Cluster: bd.Cluster, Name: name, Addr: bd.MasterAddr()})
	}
	slices.SortFunc(out, func(a, b Broker) int {
		if a.Cluster != b.Cluster {
			if a.Cluster < b.Cluster {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}

// TopicList returns every topic the NameServer routes, sorted.
func (c *Client) TopicList(ctx context.Context) ([]string, error) {
	var tl protocol.TopicList
	if err := c.namesrvJSON(ctx, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER", protocol.GetAllTopicListFromNameserver, nil, &tl); err != nil {
		return nil, err
	}
	slices.Sort(tl.TopicList)
	return tl.TopicList, nil
}

// TopicRoute returns topic's route; a topic without one is a *StatusError
// with protocol.TopicNotExist.
func (c *Client) TopicRoute(ctx context.Context, topic string) (*protocol.TopicRouteData, error) {
	var r protocol.TopicRouteData
	h := protocol.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: true}
	if err := c.namesrvJSON(ctx, "GET_ROUTEINFO_BY_TOPIC", protocol.GetRouteinfoByTopic, protocol.Ext(&h), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// routeMasters returns the master of each broker group of a route that
// has one, sorted by broker name.
func routeMasters(r *protocol.TopicRouteData) []Broker {
	var out []Broker
	for _, bd := range r.BrokerDatas {
		if addr := bd.MasterAddr(); addr != "" {
			out = append(out, Broker{Cluster: bd.Cluster, Name: bd.BrokerName, Addr: addr})
		}
	}
	slices.SortFunc(out, func(a, b Broker) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// BrokerRuntimeInfo returns a broker's GET_BROKER_RUNTIME_INFO table
// (putTps, getTransferedTps, msgPutTotalTodayNow, commitLogMaxOffset, ...).
func (c *Client) BrokerRuntimeInfo(ctx context.Context, addr string) (map[string]string, error) {
	var t protocol.KVTable
	if err := c.invokeJSON(ctx, "GET_BROKER_RUNTIME_INFO", addr, protocol.GetBrokerRuntimeInfo, nil, &t); err != nil {
		return nil, err
	}
	if t.Table == nil {
		t.Table = map[string]string{}
	}
	return t.Table, nil
}
