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

// statsRow is one statistics item of one broker (VIEW_BROKER_STATS_DATA):
// a topic's puts (Group empty) or a group's gets from a topic.
type statsRow struct {
	Topic  string                   `json:"topic"`
	Group  string                   `json:"group,omitempty"`
	Broker string                   `json:"brokerName"`
	Kind   string                   `json:"kind"` // "put" or "get"
	Minute protocol.BrokerStatsItem `json:"minute"`
	Hour   protocol.BrokerStatsItem `json:"hour"`
	Day    protocol.BrokerStatsItem `json:"day"`
}

func newStatsCommand(c *ctl) *cobra.Command {
	var cluster, topic string
	cmd := &cobra.Command{
		Use:   "stats [-c cluster] [-t topic]",
		Short: "Per topic put and per group get TPS and counts of every master (VIEW_BROKER_STATS_DATA)",
		Long: `Ask every master of the cluster for the statistics of each topic
(TOPIC_PUT_NUMS) and of each group consuming it (GROUP_GET_NUMS, groups from
QUERY_TOPIC_CONSUME_BY_WHO), as mqadmin statsAll does: TPS over the last
minute and messages over the last minute, hour and day. Without -t every
topic but retry, dead-letter and rmq_sys_ ones; a topic or group a broker
has counted nothing for is left out.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			rows, err := c.brokerStats(cluster, topic)
			if err != nil {
				return err
			}
			if c.json {
				if rows == nil {
					rows = []statsRow{}
				}
				return c.writeJSON(rows)
			}
			tw := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tGROUP\tBROKER\tKIND\tTPS_1M\tMSGS_1M\tMSGS_1H\tMSGS_1D")
			for _, r := range rows {
				group := r.Group
				if group == "" {
					group = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t%d\t%d\t%d\n", r.Topic, group, r.Broker, r.Kind,
					r.Minute.Tps, r.Minute.Sum, r.Hour.Sum, r.Day.Sum)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "cluster (default: the only one)")
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "only this topic")
	return cmd
}

func (c *ctl) brokerStats(cluster, topic string) ([]statsRow, error) {
	masters, err := c.clusterMasters(cluster)
	if err != nil {
		return nil, err
	}
	topics := []string{topic}
	if topic == "" {
		resp, err := c.callOK("topic list", protocol.GetAllTopicListFromNameserver, nil)
		if err != nil {
			return nil, err
		}
		var tl protocol.TopicList
		if err := protocol.UnmarshalFastJSON(resp.Body, &tl); err != nil {
			return nil, fmt.Errorf("topic list body: %w", err)
		}
		topics = topics[:0]
		for _, t := range tl.TopicList {
			if !strings.HasPrefix(t, "%RETRY%") && !strings.HasPrefix(t, "%DLQ%") && !strings.HasPrefix(t, "rmq_sys_") {
				topics = append(topics, t)
			}
		}
		slices.Sort(topics)
	}
	var rows []statsRow
	for _, name := range slices.Sorted(maps.Keys(masters)) {
		addr := masters[name]
		for _, t := range topics {
			d, found, err := c.viewStats(addr, "TOPIC_PUT_NUMS", t)
			if err != nil {
				return nil, err
			}
			if found {
				rows = append(rows, statsRow{Topic: t, Broker: name, Kind: "put", Minute: d.StatsMinute, Hour: d.StatsHour, Day: d.StatsDay})
			}
			resp, err := c.invokeOK("consumers of "+t, addr, protocol.QueryTopicConsumeByWho,
				protocol.Ext(&protocol.TopicRequestHeader{Topic: t}), nil)
			if err != nil {
				return nil, err
			}
			var gl protocol.GroupList
			if err := protocol.UnmarshalFastJSON(resp.Body, &gl); err != nil {
				return nil, fmt.Errorf("group list body from %s: %w", addr, err)
			}
			groups := slices.Clone(gl.GroupList)
			slices.Sort(groups)
			for _, g := range groups {
				d, found, err := c.viewStats(addr, "GROUP_GET_NUMS", t+"@"+g)
				if err != nil {
					return nil, err
				}
				if found {
					rows = append(rows, statsRow{Topic: t, Group: g, Broker: name, Kind: "get", Minute: d.StatsMinute, Hour: d.StatsHour, Day: d.StatsDay})
				}
			}
		}
	}
	return rows, nil
}

// viewStats asks addr for one statistics item; found is false when the
// broker has none under that key (SYSTEM_ERROR "The stats <..> not exist").
func (c *ctl) viewStats(addr, name, key string) (protocol.BrokerStatsData, bool, error) {
	var d protocol.BrokerStatsData
	h := protocol.ViewBrokerStatsDataRequestHeader{StatsName: name, StatsKey: key}
	resp, err := c.invoke(addr, protocol.ViewBrokerStatsData, protocol.Ext(&h), nil)
	if err != nil {
		return d, false, fmt.Errorf("stats %s %s: %w", name, key, err)
	}
	switch {
	case resp.Code == protocol.Success:
	case resp.Code == protocol.SystemError && strings.HasSuffix(resp.Remark, "not exist"):
		return d, false, nil
	default:
		return d, false, &responseError{what: "stats " + name + " " + key + " at " + addr, code: resp.Code, remark: resp.Remark}
	}
	if err := protocol.UnmarshalFastJSON(resp.Body, &d); err != nil {
		return d, false, fmt.Errorf("stats body from %s: %w", addr, err)
	}
	return d, true, nil
}
