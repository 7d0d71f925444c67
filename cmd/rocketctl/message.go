package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

func newMessageCommand(c *ctl) *cobra.Command {
	cmd := &cobra.Command{Use: "message", Short: "Find stored messages (query by key or message id)"}
	cmd.AddCommand(newMessageQueryCommand(c))
	return cmd
}

type messageQueryOptions struct {
	topic, key string
	unique     bool
	maxNum     int32
	begin, end int64
}

func newMessageQueryCommand(c *ctl) *cobra.Command {
	var o messageQueryOptions
	cmd := &cobra.Command{
		Use:   "query -t TOPIC -k KEY [--unique] [--max N] [--begin MS] [--end MS]",
		Short: "Messages by a KEYS entry or by message id (QUERY_MESSAGE to every broker of the topic)",
		Long: `Query sends QUERY_MESSAGE to the master of every broker that routes the
topic, as the Java client's queryMessage does (mqadmin queryMsgByKey /
queryMsgByUniqueKey), and prints the messages whose KEYS hold the key (with
--unique: whose message id, UNIQ_KEY, is the key). The broker looks the key
up in its index files; a hash collision is filtered out here. Exits with an
error when no broker finds anything.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.topic == "" || o.key == "" {
				return fmt.Errorf("-t and -k are required")
			}
			if o.maxNum <= 0 {
				return fmt.Errorf("--max %d: must be positive", o.maxNum)
			}
			return c.queryMessages(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.topic, "topic", "t", "", "topic")
	f.StringVarP(&o.key, "key", "k", "", "a KEYS entry, or with --unique a message id")
	f.BoolVar(&o.unique, "unique", false, "the key is a message id (UNIQ_KEY); the broker caps the result at defaultQueryMaxNum")
	f.Int32Var(&o.maxNum, "max", 64, "most messages per broker (the broker caps it at maxMsgsNumBatch)")
	f.Int64Var(&o.begin, "begin", 0, "earliest store time, ms since the epoch")
	f.Int64Var(&o.end, "end", math.MaxInt64, "latest store time, ms since the epoch")
	return cmd
}

// queryMessages is Java's MQAdminImpl.queryMessage.
func (c *ctl) queryMessages(o messageQueryOptions) error {
	route, err := c.route(o.topic)
	if err != nil {
		return err
	}
	h := protocol.QueryMessageRequestHeader{Topic: o.topic, Key: o.key, MaxNum: o.maxNum,
		BeginTimestamp: o.begin, EndTimestamp: o.end, UniqueKeyQuery: o.unique}
	type hit struct {
		q   queue
		rec message.Record
	}
	var hits []hit
	var errs []string
	for _, bd := range route.BrokerDatas {
		addr := brokerAddr(bd)
		if addr == "" {
			continue
		}
		resp, err := c.invoke(addr, protocol.QueryMessage, protocol.Ext(&h), nil)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if resp.Code != protocol.Success {
			if resp.Code != protocol.QueryNotFound {
				errs = append(errs, (&responseError{what: "query at " + addr, code: resp.Code, remark: resp.Remark}).Error())
			}
			continue
		}
		for b := resp.Body; len(b) > 0; {
			rec, n, err := message.DecodeRecord(b, false)
			if err != nil {
				return fmt.Errorf("query at %s: record %d: %w", addr, len(hits), err)
			}
			b = b[n:]
			if matchesKey(&rec, o) {
				hits = append(hits, hit{queue{broker: bd.BrokerName, id: rec.QueueID, addr: addr}, rec})
			}
		}
	}
	if len(hits) == 0 {
		if len(errs) > 0 {
			return fmt.Errorf("query %s#%s: %s", o.topic, o.key, strings.Join(errs, "; "))
		}
		return fmt.Errorf("query %s#%s: no message found", o.topic, o.key)
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if c := strings.Compare(a.q.broker, b.q.broker); c != 0 {
			return c
		}
		return int(a.rec.PhysicalOffset - b.rec.PhysicalOffset)
	})
	r := &consumeRun{c: c}
	for _, h := range hits {
		if err := r.print(h.q, &h.rec); err != nil {
			return err
		}
	}
	return nil
}

// matchesKey is the client-side filter of Java's queryMessage: the index
// returns hash hits, the record must carry the key itself.
func matchesKey(rec *message.Record, o messageQueryOptions) bool {
	if o.unique {
		id, _ := message.Property(rec.Properties, message.PropertyUniqClientMessageIDKeyIdx)
		return id == o.key
	}
	if rec.Topic != o.topic {
		return false
	}
	keys, _ := message.Property(rec.Properties, message.PropertyKeys)
	return slices.Contains(strings.Split(keys, message.KeySeparator), o.key)
}
