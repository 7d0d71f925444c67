package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/protocol"
)

// resetRow is one queue's new offset after a reset.
type resetRow struct {
	Broker  string `json:"brokerName"`
	QueueID int32  `json:"queueId"`
	Offset  int64  `json:"offset"`
}

// The --time layouts group reset accepts besides RFC 3339.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"}

// parseResetTime reads --time: RFC 3339, or a local "2006-01-02 15:04:05"
// / "2006-01-02", or "now".
func parseResetTime(s string) (int64, error) {
	if s == "now" {
		return time.Now().UnixMilli(), nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("--time %q: want RFC 3339 (2026-12-01T10:00:00Z), \"2006-01-02 15:04:05\" (local), a date or now", s)
}

func newGroupResetCommand(c *ctl) *cobra.Command {
	var (
		group, topic, at string
		timestamp        int64
		force            bool
	)
	cmd := &cobra.Command{
		Use:   "reset -g G -t T (--time TIME | --timestamp MS)",
		Short: "Move a group's offsets on a topic to a point in time (INVOKE_BROKER_TO_RESET_OFFSET)",
		Long: `Reset the group's offset in every queue of the topic to the first message
stored at or after the time (--timestamp -1: the queues' ends), on every
broker of the topic, as mqadmin resetOffsetByTime does. A rocketd broker (and
a Java 5.x one) records the offsets and each consumer picks its queue's up on
its next pull; prints the new offset per queue.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case cmd.Flags().Changed("time") == cmd.Flags().Changed("timestamp"):
				return fmt.Errorf("group reset: give --time or --timestamp")
			case at != "":
				var err error
				if timestamp, err = parseResetTime(at); err != nil {
					return err
				}
			case timestamp < -1:
				return fmt.Errorf("--timestamp %d: want milliseconds since the epoch, or -1 for the queues' ends", timestamp)
			}
			route, err := c.route(topic)
			if err != nil {
				return err
			}
			var rows []resetRow
			for _, b := range route.BrokerDatas {
				addr := b.MasterAddr()
				if addr == "" {
					return fmt.Errorf("group reset: broker %s has no master online", b.BrokerName)
				}
				h := protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: timestamp, IsForce: force}
				resp, err := c.invokeOK("reset "+group+" on "+topic, addr, protocol.InvokeBrokerToResetOffset, protocol.Ext(&h), nil)
				if err != nil {
					return err
				}
				var body protocol.ResetOffsetBody
				if len(resp.Body) > 0 {
					if err := protocol.UnmarshalFastJSON(resp.Body, &body); err != nil {
						return fmt.Errorf("reset body from %s: %w", addr, err)
					}
				}
				for mq, off := range body.OffsetTable {
					rows = append(rows, resetRow{Broker: mq.BrokerName, QueueID: mq.QueueID, Offset: off})
				}
			}
			slices.SortFunc(rows, func(a, b resetRow) int {
				if n := strings.Compare(a.Broker, b.Broker); n != 0 {
					return n
				}
				return int(a.QueueID - b.QueueID)
			})
			if c.json {
				return c.writeJSON(map[string]any{"group": group, "topic": topic, "timestamp": timestamp, "offsets": rows})
			}
			if len(rows) == 0 {
				// A 4.x-style broker tells online consumers instead and
				// answers no table.
				_, err := fmt.Fprintf(c.out, "reset %s on %s to %d: no queue offsets in the answer (consumers were told)\n", group, topic, timestamp)
				return err
			}
			tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BROKER\tQUEUE\tNEW_OFFSET")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%d\t%d\n", r.Broker, r.QueueID, r.Offset)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&group, "group", "g", "", "consumer group")
	f.StringVarP(&topic, "topic", "t", "", "topic")
	f.StringVar(&at, "time", "", "point in time: RFC 3339, \"2006-01-02 15:04:05\" (local), a date, or now")
	f.Int64Var(&timestamp, "timestamp", 0, "point in time in ms since the epoch; -1: the queues' ends")
	f.BoolVar(&force, "force", true, "also move offsets backwards (isForce)")
	_ = cmd.MarkFlagRequired("group")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

func newGroupDeleteCommand(c *ctl) *cobra.Command {
	var group, cluster, addr string
	var removeOffset bool
	cmd := &cobra.Command{
		Use:   "delete -g G (-c cluster | -b addr) [--remove-offset]",
		Short: "Delete a subscription group (DELETE_SUBSCRIPTIONGROUP)",
		Long: `Delete the group's subscription config from one broker (-b) or every master of
a cluster (-c). With -c the group's %RETRY% and %DLQ% topics are deleted from
the cluster too (brokers and NameServers), as mqadmin deleteSubGroup does.
--remove-offset drops the group's committed offsets as well.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if (cluster == "") == (addr == "") {
				return fmt.Errorf("group delete: give -c cluster or -b broker")
			}
			targets := map[string]string{addr: addr}
			if cluster != "" {
				var err error
				if targets, err = c.clusterMasters(cluster); err != nil {
					return fmt.Errorf("group delete: %w", err)
				}
			}
			h := protocol.DeleteSubscriptionGroupRequestHeader{GroupName: group, RemoveOffset: removeOffset}
			var done []string
			for _, name := range slices.Sorted(maps.Keys(targets)) {
				if _, err := c.invokeOK("delete group "+group, targets[name], protocol.DeleteSubscriptionGroup, protocol.Ext(&h), nil); err != nil {
					return err
				}
				done = append(done, targets[name])
			}
			var topics []string
			if cluster != "" {
				for _, t := range []string{"%RETRY%" + group, "%DLQ%" + group} {
					if err := c.deleteTopic(t, cluster, targets); err != nil {
						return err
					}
					topics = append(topics, t)
				}
			}
			if c.json {
				return c.writeJSON(map[string]any{"group": group, "brokers": done, "deletedTopics": topics})
			}
			for _, a := range done {
				fmt.Fprintf(c.out, "deleted group %s from %s\n", group, a)
			}
			for _, t := range topics {
				fmt.Fprintf(c.out, "deleted topic %s from cluster %s\n", t, cluster)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&group, "group", "g", "", "consumer group")
	f.StringVarP(&cluster, "cluster", "c", "", "every master of this cluster")
	f.StringVarP(&addr, "broker", "b", "", "this broker address only")
	f.BoolVar(&removeOffset, "remove-offset", false, "also drop the group's committed offsets")
	_ = cmd.MarkFlagRequired("group")
	return cmd
}

func newTopicDeleteCommand(c *ctl) *cobra.Command {
	var topic, cluster string
	cmd := &cobra.Command{
		Use:   "delete -t T [-c cluster]",
		Short: "Delete a topic from a cluster's brokers and the NameServers (DELETE_TOPIC_IN_BROKER, DELETE_TOPIC_IN_NAMESRV)",
		Long: `Delete the topic from every master of the cluster, then its route for that
cluster from every NameServer given with -n, as mqadmin deleteTopic does.
Without -c the NameServer must know exactly one cluster.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			masters, err := c.clusterMasters(cluster)
			if err != nil {
				return fmt.Errorf("topic delete: %w", err)
			}
			if cluster == "" {
				_, cluster, err = c.clusterInfo("")
				if err != nil {
					return err
				}
			}
			if err := c.deleteTopic(topic, cluster, masters); err != nil {
				return err
			}
			if c.json {
				return c.writeJSON(map[string]any{"topic": topic, "cluster": cluster, "brokers": masters})
			}
			_, err = fmt.Fprintf(c.out, "deleted topic %s from cluster %s\n", topic, cluster)
			return err
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic name")
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "cluster (default: the only one)")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// deleteTopic deletes topic from the brokers (name -> master address),
// then from every NameServer for cluster.
func (c *ctl) deleteTopic(topic, cluster string, masters map[string]string) error {
	h := protocol.TopicRequestHeader{Topic: topic}
	for _, name := range slices.Sorted(maps.Keys(masters)) {
		if _, err := c.invokeOK("delete topic "+topic, masters[name], protocol.DeleteTopicInBroker, protocol.Ext(&h), nil); err != nil {
			return err
		}
	}
	nh := protocol.DeleteTopicFromNamesrvRequestHeader{Topic: topic, ClusterName: cluster}
	for _, addr := range c.namesrvAddrs() {
		if _, err := c.invokeOK("delete topic "+topic+" from the NameServer", addr, protocol.DeleteTopicInNamesrv, protocol.Ext(&nh), nil); err != nil {
			return err
		}
	}
	return nil
}
