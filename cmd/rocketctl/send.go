package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// sendResult is what `send` prints for each message.
type sendResult struct {
	MsgID       string  `json:"msgId"` // the client id (UNIQ_KEY), what consumers see as msgId
	OffsetMsgID string  `json:"offsetMsgId"`
	Broker      string  `json:"brokerName"`
	QueueID     int32   `json:"queueId"`
	QueueOffset int64   `json:"queueOffset"`
	Status      string  `json:"status"`
	RTTMillis   float64 `json:"rttMs"`
}

// sendStatus names the send response codes that still mean "stored".
var sendStatus = map[int32]string{
	protocol.Success:           "SEND_OK",
	protocol.FlushDiskTimeout:  "FLUSH_DISK_TIMEOUT",
	protocol.FlushSlaveTimeout: "FLUSH_SLAVE_TIMEOUT",
	protocol.SlaveNotAvailable: "SLAVE_NOT_AVAILABLE",
}

func newSendCommand(c *ctl) *cobra.Command {
	var (
		topic, body, bodyFile, tags, keys, group string
		props                                    []string
		count                                    int
		queueID                                  int32
	)
	cmd := &cobra.Command{
		Use:   "send -t T -b body [--tags A] [--keys K] [-p k=v ...] [--count N]",
		Short: "Send messages (SEND_MESSAGE_V2) and print msgId, queue, offset and round-trip time",
		Long: `Send one message (or --count copies) to the masters of the topic's route,
queues taken round-robin, and print for each its msgId (the client id consumers
see), offset msgId, queue, queue offset and round-trip time (the first one
includes connecting to the broker).

A topic the NameServer does not know is sent through the route of TBW102, as
the official producers do: a broker with autoCreateTopicEnable creates it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return fmt.Errorf("send: --count must be at least 1")
			}
			payload := []byte(body)
			if bodyFile != "" {
				if cmd.Flags().Changed("body") {
					return fmt.Errorf("send: give -b or --body-file, not both")
				}
				var err error
				if payload, err = os.ReadFile(bodyFile); err != nil {
					return fmt.Errorf("send: %w", err)
				}
			}
			user, err := parseProps(props)
			if err != nil {
				return fmt.Errorf("send: %w", err)
			}
			qs, err := c.writeQueues(topic)
			if err != nil {
				return err
			}
			if queueID >= 0 {
				var only []queue
				for _, q := range qs {
					if q.id == queueID {
						only = append(only, q)
					}
				}
				if len(only) == 0 {
					return fmt.Errorf("send: topic %s has no writable queue %d", topic, queueID)
				}
				qs = only
			}
			ids := message.NewUniqIDGenerator(localIP(), os.Getpid(), int32(time.Now().UnixNano()))
			var rtts []time.Duration
			// Round-robin from a random queue, as the official producers
			// start: separate one-message runs spread over the queues too.
			first := rand.IntN(len(qs))
			for i := range count {
				q := qs[(first+i)%len(qs)]
				user[message.PropertyUniqClientMessageIDKeyIdx] = ids.Next()
				res, err := c.sendOne(topic, group, q, payload, tags, keys, user)
				if err != nil {
					return err
				}
				rtts = append(rtts, time.Duration(res.RTTMillis*float64(time.Millisecond)))
				if c.json {
					if err := c.writeJSON(res); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(c.out, "%s msgId=%s offsetMsgId=%s queue=%s:%d offset=%d rtt=%.3fms\n",
					res.Status, res.MsgID, res.OffsetMsgID, res.Broker, res.QueueID, res.QueueOffset, res.RTTMillis)
			}
			if count > 1 && !c.json {
				fmt.Fprintln(c.out, summarizeRTT(rtts))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&topic, "topic", "t", "", "topic name")
	f.StringVarP(&body, "body", "b", "", "message body")
	f.StringVar(&bodyFile, "body-file", "", "read the body from this file instead")
	f.StringVar(&tags, "tags", "", "message tag")
	f.StringVar(&keys, "keys", "", "business keys, separated by spaces")
	f.StringArrayVarP(&props, "property", "p", nil, "user property k=v (repeatable)")
	f.IntVar(&count, "count", 1, "number of messages to send")
	f.Int32VarP(&queueID, "queue", "q", -1, "send to this queue id only (default: round-robin)")
	f.StringVarP(&group, "group", "g", "rocketctl_producer", "producer group")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// parseProps turns k=v flags into a map; system property names are refused
// (the broker and consumers would misread them).
func parseProps(kvs []string) (map[string]string, error) {
	m := make(map[string]string, len(kvs)+1)
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("property %q: want key=value", kv)
		}
		if strings.ContainsAny(kv, "\x01\x02") {
			return nil, fmt.Errorf("property %q: must not contain \\x01 or \\x02 (the property separators)", kv)
		}
		switch k {
		case message.PropertyTags, message.PropertyKeys, message.PropertyUniqClientMessageIDKeyIdx,
			message.PropertyWaitStoreMsgOK, message.PropertyDelayTimeLevel:
			return nil, fmt.Errorf("property %q is a system property: use the matching flag", k)
		}
		m[k] = v
	}
	return m, nil
}

// writeQueues returns the writable queues of a topic, or of TBW102 (4 per
// broker, DefaultTopicQueueNums) when the NameServer does not know the topic.
func (c *ctl) writeQueues(topic string) ([]queue, error) {
	r, err := c.route(topic)
	limit := int32(0)
	if isCode(err, protocol.TopicNotExist) {
		r, err = c.route(defaultTopic)
		if err != nil {
			return nil, fmt.Errorf("topic %s does not exist and no broker auto-creates topics (%w); create it with `rocketctl topic create -t %s`", topic, err, topic)
		}
		limit = defaultTopicQueueNums
	}
	if err != nil {
		return nil, err
	}
	qs := queuesOf(r, true, limit)
	if len(qs) == 0 {
		return nil, fmt.Errorf("topic %s: no writable queue on a master", topic)
	}
	for i := range qs {
		qs[i].topic = topic
	}
	return qs, nil
}

// defaultTopicQueueNums is the queue count the official producers ask for
// when a topic is auto-created.
const defaultTopicQueueNums = 4

// sendOne sends one message to a queue and measures the round trip.
func (c *ctl) sendOne(topic, group string, q queue, body []byte, tags, keys string, user map[string]string) (sendResult, error) {
	props := make(map[string]string, len(user)+3)
	for k, v := range user {
		props[k] = v
	}
	props[message.PropertyWaitStoreMsgOK] = "true"
	if tags != "" {
		props[message.PropertyTags] = tags
	}
	if keys != "" {
		props[message.PropertyKeys] = keys
	}
	h := protocol.SendMessageRequestHeader{ProducerGroup: group, Topic: topic, DefaultTopic: defaultTopic,
		DefaultTopicQueueNums: defaultTopicQueueNums, QueueID: q.id, BornTimestamp: time.Now().UnixMilli(),
		Properties: message.EncodeProperties(props), ReconsumeTimes: protocol.Some[int32](0),
		UnitMode: protocol.Some(false), Batch: protocol.Some(false), BrokerName: q.broker}
	ext := make(map[string]string, 16)
	h.AppendExtV2(ext)
	start := time.Now()
	resp, err := c.invoke(q.addr, protocol.SendMessageV2, ext, body)
	rtt := time.Since(start)
	if err != nil {
		return sendResult{}, fmt.Errorf("send to %s: %w", q, err)
	}
	status, ok := sendStatus[resp.Code]
	if !ok {
		return sendResult{}, &responseError{what: "send to " + q.String() + " at " + q.addr, code: resp.Code, remark: resp.Remark}
	}
	var rh protocol.SendMessageResponseHeader
	if err := rh.Decode(resp.ExtFields); err != nil {
		return sendResult{}, fmt.Errorf("send to %s: response header: %w", q, err)
	}
	return sendResult{MsgID: props[message.PropertyUniqClientMessageIDKeyIdx], OffsetMsgID: rh.MsgID,
		Broker: q.broker, QueueID: rh.QueueID, QueueOffset: rh.QueueOffset, Status: status,
		RTTMillis: float64(rtt.Microseconds()) / 1000}, nil
}

// summarizeRTT is the min/avg/max line printed after several sends.
func summarizeRTT(rtts []time.Duration) string {
	lo, hi, sum := rtts[0], rtts[0], time.Duration(0)
	for _, d := range rtts {
		lo, hi, sum = min(lo, d), max(hi, d), sum+d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return fmt.Sprintf("sent %d: rtt min %.3fms avg %.3fms max %.3fms", len(rtts), ms(lo), ms(sum/time.Duration(len(rtts))), ms(hi))
}

// localIP is the first non-loopback IPv4 address of this host (what the
// client ids encode, as Java's producers do), or 127.0.0.1.
func localIP() netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(p.IP); ok {
					ip = ip.Unmap()
					if ip.Is4() && !ip.IsLoopback() {
						return ip
					}
				}
			}
		}
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}
