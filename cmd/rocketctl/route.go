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

// newRouteCommand is `topic route` (and the older top-level `route`).
func newRouteCommand(c *ctl, name string, hidden bool) *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:    name + " -t T",
		Short:  "Print the route of a topic: queues per broker, broker addresses (GET_ROUTEINFO_BY_TOPIC)",
		Args:   cobra.NoArgs,
		Hidden: hidden,
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
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic name")
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

// newClusterCommand is `cluster list`; a bare `cluster` (the first
// spelling) does the same.
func newClusterCommand(c *ctl) *cobra.Command {
	var runtime bool
	run := func(*cobra.Command, []string) error { return clusterList(c, runtime) }
	cluster := &cobra.Command{
		Use:   "cluster",
		Short: "Clusters and their brokers",
		Args:  cobra.NoArgs,
		RunE:  run,
	}
	list := &cobra.Command{
		Use:   "list [--runtime]",
		Short: "Print the brokers of every cluster (GET_BROKER_CLUSTER_INFO), with --runtime each broker's GET_BROKER_RUNTIME_INFO",
		Args:  cobra.NoArgs,
		RunE:  run,
	}
	list.Flags().BoolVar(&runtime, "runtime", false, "also ask every broker for its runtime info (version, offsets, message counts)")
	cluster.AddCommand(list)
	return cluster
}

// runtimeColumns are the GET_BROKER_RUNTIME_INFO keys `cluster list
// --runtime` shows (Java's brokers fill them; "-" when absent). The TPS
// keys hold "tps10s tps60s tps600s": the column shows the first, as mqadmin
// clusterList's InTPS and OutTPS do.
var runtimeColumns = []struct {
	title, key string
	first      bool
}{
	{"VERSION", "brokerVersionDesc", false},
	{"IN_TPS", "putTps", true},
	{"OUT_TPS", "getTransferredTps", true},
	{"PUT_TODAY", "msgPutTotalTodayNow", false},
	{"GET_TODAY", "msgGetTotalTodayNow", false},
	{"COMMITLOG_MAX", "commitLogMaxOffset", false},
}

func clusterList(c *ctl, runtime bool) error {
	resp, err := c.callOK("cluster info", protocol.GetBrokerClusterInfo, nil)
	if err != nil {
		return err
	}
	var ci protocol.ClusterInfo
	if err := protocol.UnmarshalFastJSON(resp.Body, &ci); err != nil {
		return fmt.Errorf("cluster info body: %w", err)
	}
	if c.json && !runtime {
		return c.printJSON(resp.Body)
	}
	type brokerRow struct {
		Cluster string            `json:"cluster"`
		Broker  string            `json:"brokerName"`
		ID      int64             `json:"brokerId"`
		Addr    string            `json:"addr"`
		Runtime map[string]string `json:"runtime,omitempty"`
		Error   string            `json:"runtimeError,omitempty"`
	}
	var rows []brokerRow
	for _, cluster := range slices.Sorted(maps.Keys(ci.ClusterAddrTable)) {
		names := slices.Clone(ci.ClusterAddrTable[cluster])
		slices.Sort(names)
		for _, name := range names {
			addrs := ci.BrokerAddrTable[name].BrokerAddrs
			for _, id := range slices.Sorted(maps.Keys(addrs)) {
				rows = append(rows, brokerRow{Cluster: cluster, Broker: name, ID: id, Addr: addrs[id]})
			}
		}
	}
	if runtime {
		for i := range rows {
			rows[i].Runtime, err = brokerRuntime(c, rows[i].Addr)
			if err != nil {
				rows[i].Error = err.Error()
			}
		}
	}
	if c.json {
		return c.writeJSON(rows)
	}
	tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "CLUSTER\tBROKER\tID\tADDRESS")
	if runtime {
		for _, col := range runtimeColumns {
			fmt.Fprint(tw, "\t", col.title)
		}
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s", r.Cluster, r.Broker, r.ID, r.Addr)
		if runtime {
			for _, col := range runtimeColumns {
				v := r.Runtime[col.key]
				if col.first {
					v, _, _ = strings.Cut(v, " ")
				}
				if v == "" {
					v = "-"
				}
				fmt.Fprint(tw, "\t", v)
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(c.out, "runtime info of %s: %s\n", r.Addr, r.Error)
		}
	}
	return nil
}

// brokerRuntime asks one broker for GET_BROKER_RUNTIME_INFO (a KVTable body).
func brokerRuntime(c *ctl, addr string) (map[string]string, error) {
	resp, err := c.invokeOK("runtime info", addr, protocol.GetBrokerRuntimeInfo, nil, nil)
	if err != nil {
		return nil, err
	}
	var t protocol.KVTable
	if err := protocol.UnmarshalFastJSON(resp.Body, &t); err != nil {
		return nil, fmt.Errorf("runtime info body of %s: %w", addr, err)
	}
	return t.Table, nil
}

// newTopicsCommand is `topic list` (and the older top-level `topics`).
func newTopicsCommand(c *ctl, name string, hidden bool) *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use:    name + " [-c cluster]",
		Short:  "List topic names (GET_ALL_TOPIC_LIST_FROM_NAMESERVER / GET_TOPICS_BY_CLUSTER)",
		Args:   cobra.NoArgs,
		Hidden: hidden,
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
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "only the topics of this cluster")
	return cmd
}
