package namesrv

import (
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Topic lists tools and the dashboard read, and topic registration by 5.x
// brokers and tools: GET_SYSTEM_TOPIC_LIST_FROM_NS, GET_UNIT_TOPIC_LIST,
// GET_HAS_UNIT_SUB_TOPIC_LIST, GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST,
// REGISTER_TOPIC_IN_NAMESRV; and GET_NAMESRV_CONFIG.

func (s *Server) getSystemTopicList(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	names, addr := s.table.SystemTopics()
	if names == nil {
		names = []string{}
	}
	body, err := protocol.MarshalFastJSON(&protocol.TopicList{TopicList: names, BrokerAddr: addr})
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = body
	return resp
}

func (s *Server) getUnitTopicList(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return topicListResponse(s.table.TopicsWithSysFlag(func(f int32) bool { return f&topicSysFlagUnit != 0 }))
}

func (s *Server) getHasUnitSubTopicList(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return topicListResponse(s.table.TopicsWithSysFlag(func(f int32) bool { return f&topicSysFlagUnitSub != 0 }))
}

func (s *Server) getHasUnitSubUnUnitTopicList(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	return topicListResponse(s.table.TopicsWithSysFlag(func(f int32) bool {
		return f&topicSysFlagUnit == 0 && f&topicSysFlagUnitSub != 0
	}))
}

// registerTopic serves REGISTER_TOPIC_IN_NAMESRV: header {topic}, body a
// TopicRouteData whose queueDatas are recorded. Java answers SUCCESS also
// when it records nothing (an unknown broker group, no queue data).
func (s *Server) registerTopic(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.RegisterTopicRequestHeader
	if resp := decodeHeader(req, &h, "RegisterTopicRequestHeader", "topic"); resp != nil {
		return resp
	}
	if len(req.Body) == 0 {
		return remoting.NewResponse(protocol.Success, "")
	}
	var data protocol.TopicRouteData
	if err := protocol.UnmarshalFastJSON(req.Body, &data); err != nil {
		return remoting.NewResponse(protocol.SystemError, "register topic: bad TopicRouteData body: "+err.Error())
	}
	qds := make([]QueueData, 0, len(data.QueueDatas))
	for _, q := range data.QueueDatas {
		qds = append(qds, QueueData{BrokerName: q.BrokerName, ReadQueueNums: q.ReadQueueNums,
			WriteQueueNums: q.WriteQueueNums, Perm: q.Perm, TopicSysFlag: q.TopicSysFlag})
	}
	if s.table.RegisterTopic(h.Topic, qds) {
		s.log.Info("namesrv: topic registered", "topic", h.Topic, "queueDatas", len(qds), "remote", remoteAddr(conn))
	} else if len(qds) > 0 {
		s.log.Warn("namesrv: topic registration names an unknown broker group; ignored", "topic", h.Topic, "remote", remoteAddr(conn))
	}
	return remoting.NewResponse(protocol.Success, "")
}

// getConfig serves GET_NAMESRV_CONFIG (319, mqadmin getNamesrvConfig): the
// NameServer's settings as Java properties text (config.PropertiesText:
// the tls.* and authentication settings are not shown).
func (s *Server) getConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = []byte(config.PropertiesText(s.rt.Load()))
	return resp
}
