package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/rocketd/rocketd/internal/protocol"
)

// Groups returns the names of the subscription groups of every master,
// sorted, without duplicates.
func (c *Client) Groups(ctx context.Context) ([]string, error) {
	masters, err := c.Masters(ctx, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var errs []error
	for _, b := range masters {
		if b.Addr == "" {
			continue
		}
		var t protocol.SubscriptionGroupTable
		if err := c.invokeJSON(ctx, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", b.Addr, protocol.GetAllSubscriptionGroupConfig, nil, &t); err != nil {
			errs = append(errs, err)
			continue
		}
		for g := range t.SubscriptionGroupTable {
			seen[g] = true
		}
	}
	if len(seen) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	slices.Sort(out)
	return out, nil
}

// QueueProgress is one queue's consumption by a group.
type QueueProgress struct {
	Topic          string `json:"topic"`
	Broker         string `json:"broker"`
	QueueID        int32  `json:"queueId"`
	BrokerOffset   int64  `json:"brokerOffset"`
	ConsumerOffset int64  `json:"consumerOffset"`
	Lag            int64  `json:"lag"` // brokerOffset - consumerOffset
	LastTimestamp  int64  `json:"lastTimestamp"`
}

// ConsumeStats returns group's progress on every queue of every master
// (of topic only when topic is set), sorted by topic, broker and queue,
// and the summed consume TPS the brokers report.
func (c *Client) ConsumeStats(ctx context.Context, group, topic string) ([]QueueProgress, float64, error) {
	masters, err := c.Masters(ctx, "")
	if err != nil {
		return nil, 0, err
	}
	var out []QueueProgress
	var tps float64
	var errs []error
	answered := false
	for _, b := range masters {
		if b.Addr == "" {
			continue
		}
		var st protocol.ConsumeStats
		h := protocol.GetConsumeStatsRequestHeader{ConsumerGroup: group, Topic: topic}
		if err := c.invokeJSON(ctx, "GET_CONSUME_STATS", b.Addr, protocol.GetConsumeStats, protocol.Ext(&h), &st); err != nil {
			errs = append(errs, err)
			continue
		}
		answered = true
		tps += st.ConsumeTps
		for mq, w := range st.OffsetTable {
			out = append(out, QueueProgress{Topic: mq.Topic, Broker: mq.BrokerName, QueueID: mq.QueueID,
				BrokerOffset: w.BrokerOffset, ConsumerOffset: w.ConsumerOffset,
				Lag: max(w.BrokerOffset-w.ConsumerOffset, 0), LastTimestamp: w.LastTimestamp})
		}
	}
	if !answered && len(errs) > 0 {
		return nil, 0, errors.Join(errs...)
	}
	slices.SortFunc(out, func(a, b QueueProgress) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		if a.Broker != b.Broker {
			if a.Broker < b.Broker {
				return -1
			}
			return 1
		}
		return int(a.QueueID - b.QueueID)
	})
	return out, tps, nil
}

// ConsumerConnections returns the online members of group across every
// master (merged by client id) and the subscription of the first broker
// that knows the group. A group online nowhere is a *StatusError with
// protocol.ConsumerNotOnline.
func (c *Client) ConsumerConnections(ctx context.Context, group string) (*protocol.ConsumerConnection, error) {
	masters, err := c.Masters(ctx, "")
	if err != nil {
		return nil, err
	}
	var merged *protocol.ConsumerConnection
	seen := map[string]bool{}
	var lastErr error
	for _, b := range masters {
		if b.Addr == "" {
			continue
		}
		var cc protocol.ConsumerConnection
		h := protocol.ConsumerGroupRequestHeader{ConsumerGroup: group}
		if err := c.invokeJSON(ctx, "GET_CONSUMER_CONNECTION_LIST", b.Addr, protocol.GetConsumerConnectionList, protocol.Ext(&h), &cc); err != nil {
			lastErr = err
			continue
		}
		if merged == nil {
			merged = &protocol.ConsumerConnection{SubscriptionTable: cc.SubscriptionTable, ConsumeType: cc.ConsumeType,
				MessageModel: cc.MessageModel, ConsumeFromWhere: cc.ConsumeFromWhere}
		}
		for _, conn := range cc.ConnectionSet {
			if !seen[conn.ClientID] {
				seen[conn.ClientID] = true
				merged.ConnectionSet = append(merged.ConnectionSet, conn)
			}
		}
	}
	if merged == nil {
		if lastErr == nil {
			lastErr = fmt.Errorf("admin: group %s: no master broker", group)
		}
		return nil, lastErr
	}
	slices.SortFunc(merged.ConnectionSet, func(a, b protocol.Connection) int {
		if a.ClientID < b.ClientID {
			return -1
		}
		if a.ClientID > b.ClientID {
			return 1
		}
		return 0
	})
	return merged, nil
}

// ResetOffsetByTime moves group's offsets on topic to the first message
// stored at or after timestamp (ms; -1: the queues' ends) on every master
// of the topic's route (mqadmin resetOffsetByTime, forced). It returns the
// brokers that reset.
func (c *Client) ResetOffsetByTime(ctx context.Context, group, topic string, timestamp int64) ([]string, error) {
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	h := protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: timestamp, IsForce: true}
	var done []string
	for _, b := range routeMasters(r) {
		if _, err := c.invokeOK(ctx, "INVOKE_BROKER_TO_RESET_OFFSET", b.Addr, protocol.InvokeBrokerToResetOffset, protocol.Ext(&h), nil); err != nil {
			return done, err
		}
		done = append(done, b.Name)
	}
	if len(done) == 0 {
		return nil, fmt.Errorf("admin: topic %s has no master broker", topic)
	}
	return done, nil
}

// ConsumeDirectResult is the ConsumeMessageDirectlyResult a consumer
// reports.
type ConsumeDirectResult struct {
	Order          bool          `json:"order"`
	AutoCommit     bool          `json:"autoCommit"`
	ConsumeResult  ConsumeResult `json:"consumeResult"`
	Remark         string        `json:"remark"`
	SpentTimeMills int64         `json:"spentTimeMills"`
	ClientID       string        `json:"clientId"` // the consumer that consumed it
}

// ConsumeMessageDirectly hands the message msgID (an offset message id) of
// topic to a consumer of group, which consumes it and reports back: what
// rocketmq-dashboard's DLQ "resend" does. clientID "" picks the first
// online member, as the dashboard does. The call goes to the broker
// holding the message (the msgID names it through the route's masters).
func (c *Client) ConsumeMessageDirectly(ctx context.Context, group, clientID, topic, msgID string) (*ConsumeDirectResult, error) {
	addr, err := c.brokerOfMsgID(ctx, topic, msgID)
	if err != nil {
		return nil, err
	}
	if clientID == "" {
		cc, err := c.ConsumerConnections(ctx, group)
		if err != nil {
			return nil, err
		}
		for _, conn := range cc.ConnectionSet {
			if conn.ClientID != "" {
				clientID = conn.ClientID
				break
			}
		}
		if clientID == "" {
			return nil, &StatusError{Op: "CONSUME_MESSAGE_DIRECTLY", Addr: addr, Code: protocol.ConsumerNotOnline,
				Remark: "no consumer of group " + group + " is online"}
		}
	}
	h := protocol.ConsumeMessageDirectlyResultRequestHeader{ConsumerGroup: group, ClientID: clientID, MsgID: msgID}
	ext := protocol.Ext(&h)
	ext["topic"] = topic
	resp, err := c.invokeOK(ctx, "CONSUME_MESSAGE_DIRECTLY", addr, protocol.ConsumeMessageDirectly, ext, nil)
	if err != nil {
		return nil, err
	}
	res := ConsumeDirectResult{ClientID: clientID}
	if err := protocol.UnmarshalFastJSON(resp.Body, &res); err != nil {
		return nil, fmt.Errorf("admin: CONSUME_MESSAGE_DIRECTLY at %s: bad body: %w", addr, err)
	}
	res.ClientID = clientID
	return &res, nil
}

// ConsumeResult is Java's CMResult by name (CR_SUCCESS, CR_LATER, ...).
// Java writes the name; the Go client writes the ordinal, decoded here to
// the same names.
type ConsumeResult string

var cmResultNames = []string{"CR_SUCCESS", "CR_LATER", "CR_ROLLBACK", "CR_COMMIT", "CR_THROW_EXCEPTION", "CR_RETURN_NULL"}

// UnmarshalJSON accepts the name or the ordinal.
func (r *ConsumeResult) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		*r = ConsumeResult(name)
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("admin: consumeResult %s: want a CMResult name or ordinal", b)
	}
	if n < 0 || n >= len(cmResultNames) {
		return fmt.Errorf("admin: consumeResult %d out of range", n)
	}
	*r = ConsumeResult(cmResultNames[n])
	return nil
}

// TopicConsumers returns the groups that consume topic on any master of
// its route (QUERY_TOPIC_CONSUME_BY_WHO), sorted.
func (c *Client) TopicConsumers(ctx context.Context, topic string) ([]string, error) {
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, b := range routeMasters(r) {
		var gl protocol.GroupList
		h := protocol.QueryTopicConsumeByWhoRequestHeader{Topic: topic}
		if err := c.invokeJSON(ctx, "QUERY_TOPIC_CONSUME_BY_WHO", b.Addr, protocol.QueryTopicConsumeByWho, protocol.Ext(&h), &gl); err != nil {
			return nil, err
		}
		for _, g := range gl.GroupList {
			seen[g] = true
		}
	}
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	slices.Sort(out)
	return out, nil
}
