package grpc

import (
	"context"
	"net"
	"strconv"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
)

// QueryRoute follows RouteActivity.queryRoute: the topic's queues on every
// broker of its route, each broker's endpoint being its gRPC service.
func (s *Server) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	topic := req.GetTopic().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.QueryRouteResponse{Status: st}, nil
	}
	route, found, st := s.route(ctx, topic)
	if st != nil {
		return &v2.QueryRouteResponse{Status: st}, nil
	}
	if !found {
		return &v2.QueryRouteResponse{Status: status(v2.Code_TOPIC_NOT_FOUND, "topic not found: "+topic)}, nil
	}
	types := acceptTypes(s.topicMessageType(topic))
	res := &v2.Resource{Name: topic, ResourceNamespace: req.GetTopic().GetResourceNamespace()}
	var mqs []*v2.MessageQueue
	for _, qd := range route.QueueDatas {
		b := s.brokerOf(route, qd.BrokerName)
		if b == nil {
			continue
		}
		mqs = append(mqs, queuesOf(qd, res, b, types)...)
	}
	return &v2.QueryRouteResponse{Status: okStatus(), MessageQueues: mqs}, nil
}

// QueryAssignment follows RouteActivity.queryAssignment: one assignment
// per readable broker (queue -1: the POP service picks the queue), or one
// per queue for a group that consumes orderly.
func (s *Server) QueryAssignment(ctx context.Context, req *v2.QueryAssignmentRequest) (*v2.QueryAssignmentResponse, error) {
	topic, group := req.GetTopic().GetName(), req.GetGroup().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.QueryAssignmentResponse{Status: st}, nil
	}
	if st := checkGroupName(group); st != nil {
		return &v2.QueryAssignmentResponse{Status: st}, nil
	}
	route, found, st := s.route(ctx, topic)
	if st != nil {
		return &v2.QueryAssignmentResponse{Status: st}, nil
	}
	if !found {
		return &v2.QueryAssignmentResponse{Status: status(v2.Code_TOPIC_NOT_FOUND, "topic not found: "+topic)}, nil
	}
	fifo := false
	if gc, ok := s.cfg.Groups.Get(group); ok {
		fifo = gc.ConsumeMessageOrderly
	}
	var as []*v2.Assignment
	for _, qd := range route.QueueDatas {
		if !meta.IsReadable(qd.Perm) || qd.ReadQueueNums <= 0 {
			continue
		}
		b := s.brokerOf(route, qd.BrokerName)
		if b == nil {
			continue
		}
		perm := permission(qd.Perm)
		if !fifo {
			as = append(as, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: -1, Permission: perm, Broker: b}})
			continue
		}
		for i := range qd.ReadQueueNums {
			as = append(as, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: i, Permission: perm, Broker: b}})
		}
	}
	if len(as) == 0 {
		return &v2.QueryAssignmentResponse{Status: status(v2.Code_FORBIDDEN, "no readable queue")}, nil
	}
	return &v2.QueryAssignmentResponse{Status: okStatus(), Assignments: as}, nil
}

// route is the topic's route: the NameServers' (as Java's proxy reads
// it), or this broker's topic config when the broker has no NameServer.
func (s *Server) route(ctx context.Context, topic string) (protocol.TopicRouteData, bool, *v2.Status) {
	if s.cfg.Route != nil {
		r, found, err := s.cfg.Route(ctx, topic)
		if err != nil {
			return r, false, status(v2.Code_INTERNAL_SERVER_ERROR, "query route of "+topic+": "+err.Error())
		}
		return r, found, nil
	}
	tc, ok := s.cfg.Topics.Get(topic)
	if !ok {
		return protocol.TopicRouteData{}, false, nil
	}
	bc := s.cfg.Broker
	return protocol.TopicRouteData{
		QueueDatas:  []protocol.QueueData{{BrokerName: bc.BrokerName, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums, Perm: tc.Perm}},
		BrokerDatas: []protocol.BrokerData{{Cluster: bc.BrokerClusterName, BrokerName: bc.BrokerName, BrokerAddrs: map[int64]string{0: s.cfg.BrokerAddr}}},
	}, true, nil
}

// brokerOf is the master of brokerName in the route as a gRPC broker:
// this server for this broker, else the master's host with this
// server's grpcServerPort (Java's proxies of one cluster share the port).
// Nil when the broker has no master.
func (s *Server) brokerOf(route protocol.TopicRouteData, brokerName string) *v2.Broker {
	for i := range route.BrokerDatas {
		bd := &route.BrokerDatas[i]
		if bd.BrokerName != brokerName {
			continue
		}
		addr := bd.MasterAddr()
		if addr == "" {
			return nil
		}
		if addr == s.cfg.BrokerAddr {
			return &v2.Broker{Name: brokerName, Id: 0, Endpoints: s.endpoint}
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil
		}
		return &v2.Broker{Name: brokerName, Id: 0, Endpoints: endpoints(host, s.cfg.Broker.GrpcServerPort)}
	}
	return nil
}

// queuesOf is RouteActivity.genMessageQueueFromQueueData: read-only, then
// write-only, then read-write queues, numbered from 0.
func queuesOf(qd protocol.QueueData, topic *v2.Resource, b *v2.Broker, types []v2.MessageType) []*v2.MessageQueue {
	var r, w, rw, n int32
	switch {
	case meta.IsReadable(qd.Perm) && meta.IsWriteable(qd.Perm):
		rw = min(qd.WriteQueueNums, qd.ReadQueueNums)
		r, w = qd.ReadQueueNums-rw, qd.WriteQueueNums-rw
	case meta.IsWriteable(qd.Perm):
		w = qd.WriteQueueNums
	case meta.IsReadable(qd.Perm):
		r = qd.ReadQueueNums
	default:
		n = max(1, qd.WriteQueueNums, qd.ReadQueueNums)
	}
	var out []*v2.MessageQueue
	id := int32(0)
	add := func(count int32, p v2.Permission) {
		for range count {
			out = append(out, &v2.MessageQueue{Topic: topic, Id: id, Permission: p, Broker: b, AcceptMessageTypes: types})
			id++
		}
	}
	add(r, v2.Permission_READ)
	add(w, v2.Permission_WRITE)
	add(rw, v2.Permission_READ_WRITE)
	add(n, v2.Permission_NONE)
	return out
}

func permission(perm int32) v2.Permission {
	switch {
	case meta.IsReadable(perm) && meta.IsWriteable(perm):
		return v2.Permission_READ_WRITE
	case meta.IsReadable(perm):
		return v2.Permission_READ
	case meta.IsWriteable(perm):
		return v2.Permission_WRITE
	}
	return v2.Permission_NONE
}

// topicMessageType is TopicConfig.getTopicMessageType: the message.type
// attribute, NORMAL when unset (or when the topic is not on this broker).
func (s *Server) topicMessageType(topic string) string {
	tc, ok := s.cfg.Topics.Get(topic)
	if !ok {
		return protocol.MessageTypeNormal
	}
	return messageTypeOf(tc)
}

// acceptTypes is RouteActivity.parseTopicMessageType.
func acceptTypes(t string) []v2.MessageType {
	switch t {
	case protocol.MessageTypeNormal:
		return []v2.MessageType{v2.MessageType_NORMAL}
	case protocol.MessageTypeFIFO:
		return []v2.MessageType{v2.MessageType_FIFO}
	case protocol.MessageTypeTransaction:
		return []v2.MessageType{v2.MessageType_TRANSACTION}
	case protocol.MessageTypeDelay:
		return []v2.MessageType{v2.MessageType_DELAY}
	case protocol.MessageTypeMixed:
		return []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}
	}
	return []v2.MessageType{v2.MessageType_MESSAGE_TYPE_UNSPECIFIED}
}

// checkTopicName is GrpcValidator.validateTopic: ILLEGAL_TOPIC.
func checkTopicName(topic string) *v2.Status {
	if err := meta.ValidateTopic(topic); err != nil {
		return status(v2.Code_ILLEGAL_TOPIC, "topic name is illegal: "+strconv.Quote(topic)+": "+err.Error())
	}
	return nil
}

// maxGroupLength is GrpcValidator's limit on a consumer group name.
const maxGroupLength = 255

// checkGroupName is GrpcValidator.validateConsumerGroup: not blank, the
// characters of ^[%|a-zA-Z0-9_-]+$, at most 255 of them, else
// ILLEGAL_CONSUMER_GROUP.
func checkGroupName(group string) *v2.Status {
	bad := group == "" || len(group) > maxGroupLength
	for i := 0; i < len(group) && !bad; i++ {
		c := group[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '%' || c == '|' || c == '_' || c == '-')
	}
	if bad {
		return status(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group is illegal: "+strconv.Quote(group))
	}
	return nil
}
