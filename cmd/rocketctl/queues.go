package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
)

// Permission bits of a queue (RocketMQ's PermName).
const (
	permRead  int32 = 4
	permWrite int32 = 2
)

// defaultTopic is the template topic brokers create new topics from when
// autoCreateTopicEnable is on; producers fall back to its route for a topic
// the NameServer does not know yet.
const defaultTopic = "TBW102"

// queue is one message queue of a topic with the address that serves it.
type queue struct {
	topic  string // set by writeQueues
	broker string // broker name
	id     int32
	addr   string // master address (or the lowest broker id when no master is listed)
}

func (q queue) String() string { return fmt.Sprintf("%s:%d", q.broker, q.id) }

// route fetches a topic's route from the NameServer. A missing topic is a
// *responseError with code TOPIC_NOT_EXIST.
func (c *ctl) route(topic string) (*protocol.TopicRouteData, error) {
	h := protocol.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: true}
	resp, err := c.callOK("route of "+topic, protocol.GetRouteinfoByTopic, protocol.Ext(&h))
	if err != nil {
		return nil, err
	}
	var r protocol.TopicRouteData
	if err := protocol.UnmarshalFastJSON(resp.Body, &r); err != nil {
		return nil, fmt.Errorf("route body of %s: %w", topic, err)
	}
	return &r, nil
}

// isCode reports whether err is a non-SUCCESS answer with this code.
func isCode(err error, code int32) bool {
	var re *responseError
	return errors.As(err, &re) && re.code == code
}

// brokerAddr picks the address to talk to in a broker group: the master, or
// the lowest id when the master is gone (reads still work on a slave).
func brokerAddr(b protocol.BrokerData) string {
	if a := b.MasterAddr(); a != "" {
		return a
	}
	for _, id := range slices.Sorted(maps.Keys(b.BrokerAddrs)) {
		return b.BrokerAddrs[id]
	}
	return ""
}

// queuesOf lists a route's queues in broker-name then id order. write
// selects the writable queues of a master (for sending), otherwise the
// readable queues (for pulling and offsets). limit caps the queue count per
// broker when positive (the default-topic fallback).
func queuesOf(r *protocol.TopicRouteData, write bool, limit int32) []queue {
	addrs := make(map[string]protocol.BrokerData, len(r.BrokerDatas))
	for _, b := range r.BrokerDatas {
		addrs[b.BrokerName] = b
	}
	qds := slices.Clone(r.QueueDatas)
	slices.SortFunc(qds, func(a, b protocol.QueueData) int { return strings.Compare(a.BrokerName, b.BrokerName) })
	var out []queue
	for _, qd := range qds {
		n, perm := qd.ReadQueueNums, permRead
		if write {
			n, perm = qd.WriteQueueNums, permWrite
		}
		if qd.Perm&perm == 0 {
			continue
		}
		if limit > 0 && n > limit {
			n = limit
		}
		addr := brokerAddr(addrs[qd.BrokerName])
		if write {
			addr = addrs[qd.BrokerName].BrokerAddrs[0]
		}
		if addr == "" {
			continue
		}
		for id := range n {
			out = append(out, queue{broker: qd.BrokerName, id: id, addr: addr})
		}
	}
	return out
}

// readQueues returns a topic's readable queues, only queue id onlyID when it
// is not negative.
func (c *ctl) readQueues(topic string, onlyID int32) ([]queue, error) {
	r, err := c.route(topic)
	if err != nil {
		return nil, err
	}
	qs := queuesOf(r, false, 0)
	if onlyID >= 0 {
		qs = slices.DeleteFunc(qs, func(q queue) bool { return q.id != onlyID })
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("topic %s: no readable queue (check the route with `rocketctl topic route -t %s`)", topic, topic)
	}
	return qs, nil
}
