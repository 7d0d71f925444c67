package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleBrokerConsumeStats serves GET_BROKER_CONSUME_STATS (317, mqadmin
// brokerConsumeStats) as Java's fetchAllConsumeStatsInBroker does: for
// every subscription group, one ConsumeStats per topic it has offsets for,
// over the topic's write queues. Topics gone from the topic config are
// skipped, so are non-order topics when isOrder is set, and topics the
// group's online consumers do not subscribe to (when they subscribe to
// any).
func (ca *consumerAdmin) handleBrokerConsumeStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if resp := missing(req, "isOrder"); resp != nil {
		return resp
	}
	var h protocol.GetConsumeStatsInBrokerHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	out := protocol.ConsumeStatsList{
		ConsumeStatsList: []map[string][]protocol.ConsumeStats{},
		BrokerAddr:       ca.storeHost.String(),
	}
	for _, group := range ca.groups.Names() {
		online, _ := ca.clients.ConsumerGroup(group)
		list := []protocol.ConsumeStats{}
		for _, topic := range ca.offsets.TopicsOfGroup(group) {
			tc, found := ca.topics.Get(topic)
			if !found || (h.IsOrder && !tc.Order) {
				continue
			}
			if _, subscribed := online.Subscriptions[topic]; !subscribed && len(online.Subscriptions) > 0 {
				continue
			}
			stats := protocol.ConsumeStats{OffsetTable: map[protocol.MessageQueue]protocol.OffsetWrapper{}}
			ca.addQueueProgress(&stats, group, topic, tc.WriteQueueNums)
			stats.ConsumeTps = ca.stats.GroupGetTPS(group, topic)
			for _, w := range stats.OffsetTable {
				out.TotalDiff += w.BrokerOffset - w.ConsumerOffset
			}
			list = append(list, stats)
		}
		out.ConsumeStatsList = append(out.ConsumeStatsList, map[string][]protocol.ConsumeStats{group: list})
	}
	return bodyResponse(&out)
}
