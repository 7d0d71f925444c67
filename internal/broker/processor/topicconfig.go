package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleGetTopicConfig serves GET_TOPIC_CONFIG (351, 5.x): one topic's
// config with its attributes, the body Java writes from
// TopicConfigAndQueueMapping. rocketd has no static topics, so the
// mappingDetail the request may ask for (lo=true) is always null and
// omitted, as Java omits it for a topic without a mapping. 5.x clients,
// tools and the proxy read a topic's message.type with it.
func (p *Processor) handleGetTopicConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetTopicConfigRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if h.Topic == "" { // @CFNotNull: Java's header decoding refuses it
		return remoting.NewResponse(protocol.SystemError, "the custom field <topic> is null")
	}
	tc, found := p.topics.Get(h.Topic)
	if !found {
		return remoting.NewResponse(protocol.TopicNotExist, "No topic in this broker. topic: "+h.Topic)
	}
	return bodyResponse(&tc)
}
