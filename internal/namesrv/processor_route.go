package namesrv

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Requests clients and tools send about routes: GET_ROUTEINFO_BY_TOPIC,
// GET_BROKER_CLUSTER_INFO, GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
// GET_TOPICS_BY_CLUSTER, DELETE_TOPIC_IN_NAMESRV.

// RemarkNoTopicRoute starts the TOPIC_NOT_EXIST remark of a route miss.
const RemarkNoTopicRoute = "No topic route info in name server for the topic: "

func (s *Server) getRouteInfo(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetRouteInfoRequestHeader
	if resp := decodeHeader(req, &h, "GetRouteInfoRequestHeader", "topic"); resp != nil {
		return resp
	}
	r, ok := s.table.Route(h.Topic)
	if !ok {
		return remoting.NewResponse(protocol.TopicNotExist, RemarkNoTopicRoute+h.Topic)
	}
	data := routeData(r)
	if s.rt.Load().OrderMessageEnable {
		data.OrderTopicConf, _ = s.kv.Get(OrderTopicConfigNamespace, h.Topic)
	}
	// Old clients (rocketmq-client-go among them) parse only fastjson's
	// unquoted integer keys; newer ones say so by version or header.
	style := protocol.JSONLegacy
	if h.WantsStandardJSON(req.Version) {
		style = protocol.JSONStandard
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = data.MarshalFastJSON(style)
	return resp
}

// routeData converts a table route to its wire body.
func routeData(r Route) *protocol.TopicRouteData {
	d := &protocol.TopicRouteData{
		QueueDatas:        make([]protocol.QueueData, len(r.QueueDatas)),
		BrokerDatas:       make([]protocol.BrokerData, len(r.BrokerDatas)),
		FilterServerTable: map[string][]string{},
		// A static topic's mapping info (5.x topicQueueMappingByBroker).
		TopicQueueMappingByBroker: r.Mappings,
	}
	for i, q := range r.QueueDatas {
		d.QueueDatas[i] = protocol.QueueData{
			BrokerName:     q.BrokerName,
			ReadQueueNums:  q.ReadQueueNums,
			WriteQueueNums: q.WriteQueueNums,
			Perm:           q.Perm,
			TopicSysFlag:   q.TopicSysFlag,
		}
	}
	for i, b := range r.BrokerDatas {
		d.BrokerDatas[i] = brokerData(b)
	}
	return d
}

func brokerData(b BrokerData) protocol.BrokerData {
	addrs := b.BrokerAddrs
	if addrs == nil {
		addrs = map[int64]string{} // the Go client panics on a missing brokerAddrs
	}
	return protocol.BrokerData{Cluster: b.Cluster, BrokerName: b.BrokerName, BrokerAddrs: addrs}
}

func (s *Server) getBrokerClusterInfo(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	ci := s.table.ClusterInfo()
	body := protocol.ClusterInfo{
		BrokerAddrTable:  make(map[string]protocol.BrokerData, len(ci.BrokerAddrTable)),
		ClusterAddrTable: ci.ClusterAddrTable,
	}
	for name, b := range ci.BrokerAddrTable {
		body.BrokerAddrTable[name] = brokerData(b)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = body.MarshalFastJSON()
	return resp
}

func topicListResponse(topics []string) *remoting.Command {
	if topics == nil {
		topics = []string{}
	}
	body, err := protocol.MarshalFastJSON(&protocol.TopicList{TopicList: topics})
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = body
	return resp
}

func (s *Server) getAllTopicList(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return topicListResponse(s.table.Topics())
}

func (s *Server) getTopicsByCluster(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetTopicsByClusterRequestHeader
	if resp := decodeHeader(req, &h, "GetTopicsByClusterRequestHeader", "cluster"); resp != nil {
		return resp
	}
	return topicListResponse(s.table.TopicsByCluster(h.Cluster))
}

func (s *Server) deleteTopic(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.DeleteTopicFromNamesrvRequestHeader
	if resp := decodeHeader(req, &h, "DeleteTopicFromNamesrvRequestHeader", "topic"); resp != nil {
		return resp
	}
	removed := s.table.DeleteTopic(h.Topic, h.ClusterName)
	s.log.Info("namesrv: topic deleted", "topic", h.Topic, "cluster", h.ClusterName,
		"found", removed, "remote", remoteAddr(conn))
	return remoting.NewResponse(protocol.Success, "")
}
