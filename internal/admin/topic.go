package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rocketd/rocketd/internal/protocol"
)

// QueueStat is one queue's offsets (GET_TOPIC_STATS_INFO).
type QueueStat struct {
	Broker         string `json:"broker"`
	QueueID        int32  `json:"queueId"`
	MinOffset      int64  `json:"minOffset"`
	MaxOffset      int64  `json:"maxOffset"`
	LastUpdateTime int64  `json:"lastUpdateTime"` // store time of the last message, ms (0: none)
}

// TopicStats returns the offsets of every queue of topic on every master
// of its route, sorted by broker and queue.
func (c *Client) TopicStats(ctx context.Context, topic string) ([]QueueStat, error) {
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	var out []QueueStat
	var errs []error
	for _, b := range routeMasters(r) {
		var st protocol.TopicStatsTable
		h := protocol.GetTopicStatsInfoRequestHeader{Topic: topic}
		if err := c.invokeJSON(ctx, "GET_TOPIC_STATS_INFO", b.Addr, protocol.GetTopicStatsInfo, protocol.Ext(&h), &st); err != nil {
			errs = append(errs, err)
			continue
		}
		for mq, o := range st.OffsetTable {
			out = append(out, QueueStat{Broker: mq.BrokerName, QueueID: mq.QueueID, MinOffset: o.MinOffset,
				MaxOffset: o.MaxOffset, LastUpdateTime: o.LastUpdateTimestamp})
		}
	}
	sortQueues(out, func(q QueueStat) (string, int32) { return q.Broker, q.QueueID })
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func sortQueues[T any](s []T, key func(T) (string, int32)) {
	slices.SortFunc(s, func(a, b T) int {
		ab, aq := key(a)
		bb, bq := key(b)
		if ab != bb {
			if ab < bb {
				return -1
			}
			return 1
		}
		return int(aq - bq)
	})
}

// TopicSpec describes a topic to create.
type TopicSpec struct {
	Name        string
	Cluster     string // create on every master of this cluster ("" = every cluster)
	ReadQueues  int32
	WriteQueues int32
	Perm        int32 // 6 = read+write when 0
	Order       bool
}

// Perm bits (PermName).
const (
	PermWrite = 2
	PermRead  = 4
)

// CreateTopic creates (or updates) a topic on every master of the cluster,
// as mqadmin updateTopic -c does; it returns the brokers it was created on.
func (c *Client) CreateTopic(ctx context.Context, spec TopicSpec) ([]string, error) {
	if spec.Perm == 0 {
		spec.Perm = PermRead | PermWrite
	}
	masters, err := c.Masters(ctx, spec.Cluster)
	if err != nil {
		return nil, err
	}
	if len(masters) == 0 {
		return nil, fmt.Errorf("admin: no master broker in cluster %q", spec.Cluster)
	}
	h := protocol.CreateTopicRequestHeader{
		Topic: spec.Name, DefaultTopic: "TBW102", ReadQueueNums: spec.ReadQueues, WriteQueueNums: spec.WriteQueues,
		Perm: spec.Perm, TopicFilterType: protocol.SingleTag, Order: spec.Order,
	}
	var done []string
	for _, b := range masters {
		if b.Addr == "" {
			continue
		}
		if _, err := c.invokeOK(ctx, "UPDATE_AND_CREATE_TOPIC", b.Addr, protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil); err != nil {
			return done, err
		}
		done = append(done, b.Name)
	}
	return done, nil
}

// QueueOffsets returns a queue's min and max offsets on the broker at addr.
func (c *Client) QueueOffsets(ctx context.Context, addr, topic string, queueID int32) (minOff, maxOff int64, err error) {
	h := protocol.QueueRequestHeader{Topic: topic, QueueID: queueID}
	resp, err := c.invokeOK(ctx, "GET_MIN_OFFSET", addr, protocol.GetMinOffset, protocol.Ext(&h), nil)
	if err != nil {
		return 0, 0, err
	}
	var o protocol.OffsetResponseHeader
	if err := o.Decode(resp.Ext()); err != nil {
		return 0, 0, err
	}
	minOff = o.Offset
	if resp, err = c.invokeOK(ctx, "GET_MAX_OFFSET", addr, protocol.GetMaxOffset, protocol.Ext(&h), nil); err != nil {
		return 0, 0, err
	}
	if err := o.Decode(resp.Ext()); err != nil {
		return 0, 0, err
	}
	return minOff, o.Offset, nil
}

// ConsumerOffset returns group's committed offset of a queue on the broker
// at addr; found is false when the group has none there.
func (c *Client) ConsumerOffset(ctx context.Context, addr, group, topic string, queueID int32) (offset int64, found bool, err error) {
	h := protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: queueID}
	resp, err := c.invoke(ctx, addr, protocol.QueryConsumerOffset, protocol.Ext(&h), nil)
	if err != nil {
		return 0, false, err
	}
	switch resp.Code {
	case protocol.Success:
	case protocol.QueryNotFound:
		return 0, false, nil
	default:
		return 0, false, &StatusError{Op: "QUERY_CONSUMER_OFFSET", Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	var o protocol.OffsetResponseHeader
	if err := o.Decode(resp.Ext()); err != nil {
		return 0, false, err
	}
	return o.Offset, true, nil
}

// BrokerTopicStats returns the queues of topic on the broker at addr
// alone (GET_TOPIC_STATS_INFO), sorted by queue; for system topics the
// NameServer does not route (SCHEDULE_TOPIC_XXXX, ...).
func (c *Client) BrokerTopicStats(ctx context.Context, addr, topic string) ([]QueueStat, error) {
	var st protocol.TopicStatsTable
	h := protocol.GetTopicStatsInfoRequestHeader{Topic: topic}
	if err := c.invokeJSON(ctx, "GET_TOPIC_STATS_INFO", addr, protocol.GetTopicStatsInfo, protocol.Ext(&h), &st); err != nil {
		return nil, err
	}
	out := make([]QueueStat, 0, len(st.OffsetTable))
	for mq, o := range st.OffsetTable {
		out = append(out, QueueStat{Broker: mq.BrokerName, QueueID: mq.QueueID, MinOffset: o.MinOffset,
			MaxOffset: o.MaxOffset, LastUpdateTime: o.LastUpdateTimestamp})
	}
	sortQueues(out, func(q QueueStat) (string, int32) { return q.Broker, q.QueueID })
	return out, nil
}

// DelayOffsets returns the broker's delivery progress per delay level
// (GET_ALL_DELAY_OFFSET): level (1-based) -> next offset of queue
// level-1 of SCHEDULE_TOPIC_XXXX to deliver.
func (c *Client) DelayOffsets(ctx context.Context, addr string) (map[int32]int64, error) {
	var t protocol.DelayOffsetTable
	if err := c.invokeJSON(ctx, "GET_ALL_DELAY_OFFSET", addr, protocol.GetAllDelayOffset, nil, &t); err != nil {
		return nil, err
	}
	if t.OffsetTable == nil {
		t.OffsetTable = map[int32]int64{}
	}
	return t.OffsetTable, nil
}
