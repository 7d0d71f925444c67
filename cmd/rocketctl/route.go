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

func newRouteCommand(c *ctl) *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:   "route --topic T",
		Short: "Print the route of a topic (GET_ROUTEINFO_BY_TOPIC)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// Ask for standard JSON: the output may be fed to other tools.
			h := protocol.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: true}
			resp, err := c.callOK("route of "+topic, protocol.GetRouteinfoByTopic, protocol.Ext(&h))
			if err != nil {
				return err
			}
			if c.json {
				return c.printJSON(resp.Body)
			}
			var r protocol.TopicRouteData
			if err := protocol.UnmarshalFastJSON(resp.Body, &r); err != nil {
				return fmt.Errorf("route body: %w", err)
			}
			return printRoute(c, topic, &r)
		},
	}
	cmd.Flags().StringVar(&topic, "topic", "", "topic name")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// permString is RocketMQ's PermName.perm2String: R, W, X (inherit) or '-'.
func permString(perm int32) string {
	b := []byte("---")
	if perm&4 != 0 {
		b[0] = 'R'
	}
	if perm&2 != 0 {
		b[1] = 'W'
	}
	if perm&1 != 0 {
		b[2] = 'X'
	}
	return string(b)
}

func printRoute(c *ctl, topic string, r *protocol.TopicRouteData) error {
	fmt.Fprintf(c.out, "topic %s\n", topic)
	if r.OrderTopicConf != "" {
		fmt.Fprintf(c.out, "orderTopicConf %s\n", r.OrderTopicConf)
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nBROKER\tREAD\tWRITE\tPERM\tSYSFLAG")
	for _, q := range r.QueueDatas {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\n", q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, permString(q.Perm), q.TopicSysFlag)
	}
	fmt.Fprintln(tw, "\nBROKER\tCLUSTER\tID\tADDRESS")
	for _, b := range r.BrokerDatas {
		writeBrokerRows(tw, b.BrokerName+"\t"+b.Cluster, b.BrokerAddrs)
	}
	return tw.Flush()
}

// writeBrokerRows writes one row per broker id, ids ascending.
func writeBrokerRows(tw *tabwriter.Writer, prefix string, addrs map[int64]string) {
	if len(addrs) == 0 {
		fmt.Fprintf(tw, "%s\t-\t-\n", prefix)
		return
	}
	for _, id := range slices.Sorted(maps.Keys(addrs)) {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", prefix, id, addrs[id])
	}
}

func newClusterCommand(c *ctl) *cobra.Command {
	return &cobra.Command{
		Use:   "cluster",
		Short: "Print the brokers of every cluster (GET_BROKER_CLUSTER_INFO)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			resp, err := c.callOK("cluster info", protocol.GetBrokerClusterInfo, nil)
			if err != nil {
				return err
			}
			if c.json {
				return c.printJSON(resp.Body)
			}
			var ci protocol.ClusterInfo
			if err := protocol.UnmarshalFastJSON(resp.Body, &ci); err != nil {
				return fmt.Errorf("cluster info body: %w", err)
			}
			tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CLUSTER\tBROKER\tID\tADDRESS")
			for _, cluster := range slices.Sorted(maps.Keys(ci.ClusterAddrTable)) {
				names := slices.Clone(ci.ClusterAddrTable[cluster])
				slices.Sort(names)
				for _, name := range names {
					writeBrokerRows(tw, cluster+"\t"+name, ci.BrokerAddrTable[name].BrokerAddrs)
				}
			}
			return tw.Flush()
		},
	}
}

func newTopicsCommand(c *ctl) *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use:   "topics [--cluster C]",
		Short: "List topic names (GET_ALL_TOPIC_LIST_FROM_NAMESERVER / GET_TOPICS_BY_CLUSTER)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			code, ext := protocol.GetAllTopicListFromNameserver, map[string]string(nil)
			if cluster != "" {
				code, ext = protocol.GetTopicsByCluster, protocol.Ext(&protocol.GetTopicsByClusterRequestHeader{Cluster: cluster})
			}
			resp, err := c.callOK("topic list", code, ext)
			if err != nil {
				return err
			}
			if c.json {
				return c.printJSON(resp.Body)
			}
			var tl protocol.TopicList
			if err := protocol.UnmarshalFastJSON(resp.Body, &tl); err != nil {
				return fmt.Errorf("topic list body: %w", err)
			}
			topics := slices.Clone(tl.TopicList)
			slices.Sort(topics)
			if len(topics) > 0 {
				_, err = fmt.Fprintln(c.out, strings.Join(topics, "\n"))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "only the topics of this cluster")
	return cmd
}
