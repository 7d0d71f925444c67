package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleGetTopicConfig serves GET_TOPIC_CONFIG (351, 5.x): one topic's
// config with its attributes and, when the request asks for it (lo=true)
// and the topic is static, this broker's mapping detail (Java's
// TopicConfigAndQueueMapping; mappingDetail is omitted otherwise, as Java
// omits a null). 5.x clients, tools and the proxy read a topic's
// message.type with it; mqadmin's static topic commands the mapping.
func (t *topicAdmin) handleGetTopicConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetTopicConfigRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if h.Topic == "" { // @CFNotNull: Java's header decoding refuses it
		return remoting.NewResponse(protocol.SystemError, "the custom field <topic> is null")
	}
	tc, found := t.topics.Get(h.Topic)
	if !found {
		return remoting.NewResponse(protocol.TopicNotExist, "No topic in this broker. topic: "+h.Topic)
	}
	var detail *protocol.TopicQueueMappingDetail
	if h.Lo.Set && h.Lo.Value {
		detail = t.mappings.Get(h.Topic)
	}
	body := protocol.NewTopicConfigAndQueueMapping(tc, detail)
	return bodyResponse(&body)
}
