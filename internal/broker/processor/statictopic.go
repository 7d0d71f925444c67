package processor

import (
	"fmt"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// handleCreateStaticTopic serves UPDATE_AND_CREATE_STATIC_TOPIC (513),
// what mqadmin's updateStaticTopic and remappingStaticTopic send to every
// broker of the cluster (AdminBrokerProcessor.updateAndCreateStaticTopic):
// the header is UPDATE_AND_CREATE_TOPIC's (the broker's physical queues
// of the topic; force), the body this broker's TopicQueueMappingDetail.
// The topic config is updated and the mapping stored by Java's rules
// (meta.Mappings.Update); unlike Java, which writes the topic config
// first, nothing changes when either is refused. Refusals are
// SYSTEM_ERROR with the reason, as Java's exceptions are.
func (t *topicAdmin) handleCreateStaticTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.CreateTopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return headerError(err)
	}
	if err := meta.ValidateTopic(h.Topic); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if t.topics.IsSystemTopic(h.Topic) {
		return remoting.NewResponse(protocol.SystemError, meta.SystemTopicConflictRemark(h.Topic))
	}
	if t.mappings == nil {
		return remoting.NewResponse(protocol.SystemError, "this broker keeps no static topic mappings")
	}
	var detail protocol.TopicQueueMappingDetail
	if len(req.Body) == 0 {
		return remoting.NewResponse(protocol.SystemError, "UPDATE_AND_CREATE_STATIC_TOPIC without a TopicQueueMappingDetail body")
	}
	if err := protocol.UnmarshalFastJSON(req.Body, &detail); err != nil {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("decode TopicQueueMappingDetail: %v", err))
	}
	if detail.Topic != h.Topic {
		return remoting.NewResponse(protocol.SystemError, fmt.Sprintf("the mapping is of topic %q, the header names %q", detail.Topic, h.Topic))
	}
	// Java's TopicConfig for the request: the order flag is not taken.
	tc := h.TopicConfig()
	tc.Order = false
	if err := t.topics.CheckUpdate(tc, nil); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	force := h.Force.Set && h.Force.Value
	if err := t.mappings.Update(&detail, force); err != nil {
		return remoting.NewResponse(protocol.SystemError, err.Error())
	}
	if _, err := t.topics.Update(tc, nil); err != nil {
		return remoting.ErrorResponse(err)
	}
	// Registered before the answer, as Java's registerIncrementBrokerData:
	// the mapping changed (Mappings.OnChange asked for a round), so the
	// routes carry it once mqadmin goes on.
	t.awaitRegistration(h.Topic)
	return ok(nil)
}
