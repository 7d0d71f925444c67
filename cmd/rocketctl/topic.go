package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/protocol"
)

func newTopicCommand(c *ctl) *cobra.Command {
	topic := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, inspect and delete topics",
	}
	topic.AddCommand(newTopicCreateCommand(c), newTopicsCommand(c, "list", false),
		newRouteCommand(c, "route", false), newTopicStatusCommand(c), newTopicDeleteCommand(c))
	return topic
}

// orderConfNamespace is the NameServer KV namespace of ordered topics'
// queue layout ("brokerA:8;brokerB:8"), as mqadmin writes it.
const orderConfNamespace = "ORDER_TOPIC_CONFIG"

func newTopicCreateCommand(c *ctl) *cobra.Command {
	var (
		topic, cluster, brokerAddr string
		read, write, perm          int32
		order                      bool
	)
	cmd := &cobra.Command{
		Use:   "create -t T [-c cluster | -b brokerAddr] [-r 8] [-w 8] [-p 6] [--order]",
		Short: "Create or update a topic on every master of a cluster, or on one broker (UPDATE_AND_CREATE_TOPIC)",
		Long: `Create or update a topic. With -c (or when the NameServer knows exactly one
cluster) the topic goes to every master of the cluster; with -b to that broker
only. The brokers register the new topic with the NameServer themselves.
With --order and a cluster, the queue layout is also written to the
NameServer's ORDER_TOPIC_CONFIG namespace, as mqadmin does.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if cluster != "" && brokerAddr != "" {
				return fmt.Errorf("topic create: give -c or -b, not both")
			}
			targets := map[string]string{} // broker name -> master address
			if brokerAddr != "" {
				targets[brokerAddr] = brokerAddr
			} else {
				var err error
				if targets, err = c.clusterMasters(cluster); err != nil {
					return fmt.Errorf("topic create: %w", err)
				}
			}
			h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: defaultTopic,
				ReadQueueNums: read, WriteQueueNums: write, Perm: perm,
				TopicFilterType: protocol.SingleTag, Order: order}
			var orderConf []string
			for _, name := range slices.Sorted(maps.Keys(targets)) {
				addr := targets[name]
				if _, err := c.invokeOK("topic create "+topic, addr, protocol.UpdateAndCreateTopic, protocol.Ext(&h), nil); err != nil {
					return err
				}
				orderConf = append(orderConf, name+":"+strconv.Itoa(int(write)))
				if !c.json {
					fmt.Fprintf(c.out, "created %s on %s (%s): read %d write %d perm %s\n", topic, name, addr, read, write, permString(perm))
				}
			}
			if order && brokerAddr == "" {
				ext := map[string]string{"namespace": orderConfNamespace, "key": topic, "value": strings.Join(orderConf, ";")}
				if _, err := c.callOK("topic create: order conf", protocol.PutKVConfig, ext); err != nil {
					return err
				}
			}
			if c.json {
				return c.writeJSON(map[string]any{"topic": topic, "brokers": targets, "readQueueNums": read,
					"writeQueueNums": write, "perm": perm, "order": order})
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&topic, "topic", "t", "", "topic name")
	f.StringVarP(&cluster, "cluster", "c", "", "create on every master of this cluster")
	f.StringVarP(&brokerAddr, "broker", "b", "", "create on this broker address only (host:port)")
	f.Int32VarP(&read, "read-queues", "r", 8, "read queue count")
	f.Int32VarP(&write, "write-queues", "w", 8, "write queue count")
	f.Int32VarP(&perm, "perm", "p", 6, "permission: 2 write, 4 read, 6 read+write")
	f.BoolVar(&order, "order", false, "ordered topic")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// clusterMasters returns the master address of every broker group of a
// cluster; with cluster "" the NameServer must know exactly one cluster.
func (c *ctl) clusterMasters(cluster string) (map[string]string, error) {
	ci, cluster, err := c.clusterInfo(cluster)
	if err != nil {
		return nil, err
	}
	masters := map[string]string{}
	for _, name := range ci.ClusterAddrTable[cluster] {
		if addr := ci.BrokerAddrTable[name].BrokerAddrs[0]; addr != "" {
			masters[name] = addr
		}
	}
	if len(masters) == 0 {
		return nil, fmt.Errorf("cluster %q has no master broker", cluster)
	}
	return masters, nil
}

// clusterInfo asks the NameServer for its cluster table and names the
// cluster meant: the one given, which must be known, or with "" the only
// one there is.
func (c *ctl) clusterInfo(cluster string) (protocol.ClusterInfo, string, error) {
	ci, err := c.clusterTable()
	if err != nil {
		return ci, "", err
	}
	if cluster == "" {
		switch len(ci.ClusterAddrTable) {
		case 0:
			return ci, "", fmt.Errorf("no broker is registered with the NameServer %s", c.namesrv)
		case 1:
			for name := range ci.ClusterAddrTable {
				cluster = name
			}
		default:
			return ci, "", fmt.Errorf("several clusters (%s): choose one with -c", strings.Join(slices.Sorted(maps.Keys(ci.ClusterAddrTable)), ", "))
		}
	}
	if _, ok := ci.ClusterAddrTable[cluster]; !ok {
		return ci, "", fmt.Errorf("cluster %q is not known to the NameServer", cluster)
	}
	return ci, cluster, nil
}

// clusterTable is the NameServer's GET_BROKER_CLUSTER_INFO answer.
func (c *ctl) clusterTable() (protocol.ClusterInfo, error) {
	var ci protocol.ClusterInfo
	resp, err := c.callOK("cluster info", protocol.GetBrokerClusterInfo, nil)
	if err != nil {
		return ci, err
	}
	if err := protocol.UnmarshalFastJSON(resp.Body, &ci); err != nil {
		return ci, fmt.Errorf("cluster info body: %w", err)
	}
	return ci, nil
}

// queueStatus is one queue's offsets.
type queueStatus struct {
	Broker     string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
	MinOffset  int64  `json:"minOffset"`
	MaxOffset  int64  `json:"maxOffset"`
	LastUpdate int64  `json:"lastUpdateTimestamp,omitempty"` // ms; 0 when unknown
}

func newTopicStatusCommand(c *ctl) *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:   "status -t T",
		Short: "Per queue min and max offset and last store time (GET_TOPIC_STATS_INFO, else GET_MIN_OFFSET/GET_MAX_OFFSET)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			qs, err := c.readQueues(topic, -1)
			if err != nil {
				return err
			}
			rows, err := c.topicStatus(topic, qs)
			if err != nil {
				return err
			}
			if c.json {
				return c.writeJSON(rows)
			}
			tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BROKER\tQUEUE\tMIN\tMAX\tLAST_UPDATE")
			var total int64
			for _, r := range rows {
				last := "-"
				if r.LastUpdate > 0 {
					last = time.UnixMilli(r.LastUpdate).Format("2006-01-02 15:04:05.000")
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", r.Broker, r.QueueID, r.MinOffset, r.MaxOffset, last)
				total += r.MaxOffset - r.MinOffset
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.out, "messages held: %d\n", total)
			return err
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic name")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// topicStatus asks each broker of the queues for GET_TOPIC_STATS_INFO and
// falls back to one GET_MIN_OFFSET and GET_MAX_OFFSET per queue when the
// broker does not serve it.
func (c *ctl) topicStatus(topic string, qs []queue) ([]queueStatus, error) {
	stats := map[string]*protocol.TopicStatsTable{} // by broker address; nil = not served
	rows := make([]queueStatus, 0, len(qs))
	for _, q := range qs {
		st, asked := stats[q.addr]
		if !asked {
			h := protocol.GetTopicStatsInfoRequestHeader{Topic: topic}
			resp, err := c.invoke(q.addr, protocol.GetTopicStatsInfo, protocol.Ext(&h), nil)
			if err != nil {
				return nil, fmt.Errorf("topic status: %w", err)
			}
			if resp.Code == protocol.Success {
				st = &protocol.TopicStatsTable{}
				if err := protocol.UnmarshalFastJSON(resp.Body, st); err != nil {
					return nil, fmt.Errorf("topic stats body from %s: %w", q.addr, err)
				}
			}
			stats[q.addr] = st
		}
		if st != nil {
			if off, ok := st.OffsetTable[protocol.MessageQueue{Topic: topic, BrokerName: q.broker, QueueID: q.id}]; ok {
				rows = append(rows, queueStatus{Broker: q.broker, QueueID: q.id, MinOffset: off.MinOffset,
					MaxOffset: off.MaxOffset, LastUpdate: off.LastUpdateTimestamp})
				continue
			}
		}
		lo, err := c.queueOffset(q, topic, protocol.GetMinOffset)
		if err != nil {
			return nil, err
		}
		hi, err := c.queueOffset(q, topic, protocol.GetMaxOffset)
		if err != nil {
			return nil, err
		}
		rows = append(rows, queueStatus{Broker: q.broker, QueueID: q.id, MinOffset: lo, MaxOffset: hi})
	}
	return rows, nil
}

// queueOffset asks a queue's GET_MIN_OFFSET or GET_MAX_OFFSET.
func (c *ctl) queueOffset(q queue, topic string, code int32) (int64, error) {
	h := protocol.QueueRequestHeader{Topic: topic, QueueID: q.id, BrokerName: q.broker}
	what := "max offset of " + q.String()
	if code == protocol.GetMinOffset {
		what = "min offset of " + q.String()
	}
	resp, err := c.invokeOK(what, q.addr, code, protocol.Ext(&h), nil)
	if err != nil {
		return 0, err
	}
	var off protocol.OffsetResponseHeader
	if err := off.Decode(resp.ExtFields); err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return off.Offset, nil
}
