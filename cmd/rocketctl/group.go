package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/protocol"
)

func newGroupCommand(c *ctl) *cobra.Command {
	group := &cobra.Command{
		Use:   "group",
		Short: "Inspect, reset and delete consumer groups",
	}
	group.AddCommand(newGroupProgressCommand(c), newGroupResetCommand(c), newGroupDeleteCommand(c))
	return group
}

// queueProgress is one queue's consumption by a group.
type queueProgress struct {
	Topic          string `json:"topic"`
	Broker         string `json:"brokerName"`
	QueueID        int32  `json:"queueId"`
	BrokerOffset   int64  `json:"brokerOffset"`
	ConsumerOffset int64  `json:"consumerOffset"` // -1: the group has no offset for the queue
	Lag            int64  `json:"lag"`
}

func newGroupProgressCommand(c *ctl) *cobra.Command {
	var group, topic string
	cmd := &cobra.Command{
		Use:   "progress -g G [-t T]",
		Short: "Per queue broker offset, group offset and lag",
		Long: `Print, per queue, the broker's max offset, the group's committed offset and
the lag between them. With -t the queues of that topic are asked one by one
(GET_MAX_OFFSET, QUERY_CONSUMER_OFFSET); without it every master of every
cluster is asked for the group's consume stats (GET_CONSUME_STATS), which
covers every topic the group has offsets for.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var rows []queueProgress
			var err error
			if topic != "" {
				rows, err = c.topicProgress(group, topic)
			} else {
				rows, err = c.consumeStats(group)
			}
			if err != nil {
				return err
			}
			if c.json {
				return c.writeJSON(rows)
			}
			tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tBROKER\tQUEUE\tBROKER_OFFSET\tCONSUMER_OFFSET\tLAG")
			var total int64
			for _, r := range rows {
				consumer := "-"
				if r.ConsumerOffset >= 0 {
					consumer = fmt.Sprint(r.ConsumerOffset)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\n", r.Topic, r.Broker, r.QueueID, r.BrokerOffset, consumer, r.Lag)
				total += r.Lag
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.out, "total lag: %d\n", total)
			return err
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "consumer group")
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "only this topic")
	_ = cmd.MarkFlagRequired("group")
	return cmd
}

// topicProgress asks each queue of a topic for its max offset and the
// group's offset. A queue the group never committed counts its whole
// content as lag.
func (c *ctl) topicProgress(group, topic string) ([]queueProgress, error) {
	qs, err := c.readQueues(topic, -1)
	if err != nil {
		return nil, err
	}
	rows := make([]queueProgress, 0, len(qs))
	for _, q := range qs {
		hi, err := c.queueOffset(q, topic, protocol.GetMaxOffset)
		if err != nil {
			return nil, err
		}
		off, found, err := c.groupOffset(group, topic, q)
		if err != nil {
			return nil, err
		}
		row := queueProgress{Topic: topic, Broker: q.broker, QueueID: q.id, BrokerOffset: hi, ConsumerOffset: -1}
		if found {
			row.ConsumerOffset = off
			row.Lag = max(hi-off, 0)
		} else {
			lo, err := c.queueOffset(q, topic, protocol.GetMinOffset)
			if err != nil {
				return nil, err
			}
			row.Lag = hi - lo
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// consumeStats gathers GET_CONSUME_STATS from every master of every cluster.
func (c *ctl) consumeStats(group string) ([]queueProgress, error) {
	ci, err := c.clusterTable()
	if err != nil {
		return nil, err
	}
	var rows []queueProgress
	for _, name := range slices.Sorted(maps.Keys(ci.BrokerAddrTable)) {
		addr := ci.BrokerAddrTable[name].BrokerAddrs[0]
		if addr == "" {
			continue
		}
		h := protocol.GetConsumeStatsRequestHeader{ConsumerGroup: group}
		resp, err := c.invoke(addr, protocol.GetConsumeStats, protocol.Ext(&h), nil)
		if err != nil {
			return nil, fmt.Errorf("consume stats of %s: %w", group, err)
		}
		switch resp.Code {
		case protocol.Success:
		case protocol.RequestCodeNotSupported:
			return nil, fmt.Errorf("broker %s (%s) does not serve GET_CONSUME_STATS: name the topic with -t", name, addr)
		default:
			return nil, &responseError{what: "consume stats of " + group + " at " + addr, code: resp.Code, remark: resp.Remark}
		}
		var st protocol.ConsumeStats
		if err := protocol.UnmarshalFastJSON(resp.Body, &st); err != nil {
			return nil, fmt.Errorf("consume stats body from %s: %w", addr, err)
		}
		for mq, w := range st.OffsetTable {
			rows = append(rows, queueProgress{Topic: mq.Topic, Broker: mq.BrokerName, QueueID: mq.QueueID,
				BrokerOffset: w.BrokerOffset, ConsumerOffset: w.ConsumerOffset, Lag: max(w.BrokerOffset-w.ConsumerOffset, 0)})
		}
	}
	if len(rows) == 0 {
		// Java's mqadmin consumerProgress fails the same way.
		return nil, fmt.Errorf("group %s has no consume offsets on any broker: it never committed one, or does not exist", group)
	}
	slices.SortFunc(rows, func(a, b queueProgress) int {
		if n := strings.Compare(a.Topic, b.Topic); n != 0 {
			return n
		}
		if n := strings.Compare(a.Broker, b.Broker); n != 0 {
			return n
		}
		return int(a.QueueID - b.QueueID)
	})
	return rows, nil
}
