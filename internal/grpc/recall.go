package grpc

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/protocol"
)

// RecallMessage follows RecallMessageActivity and ProducerProcessor in
// Local mode: the topic name, the topic's message type (DELAY or MIXED;
// a topic this broker does not have is UNSPECIFIED, a conflict too), the
// handle (INTERNAL_SERVER_ERROR when it does not decode), then the
// broker's RECALL_MESSAGE, whose every refusal LocalMessageService turns
// into INTERNAL_SERVER_ERROR with the broker's remark.
func (s *Server) RecallMessage(ctx context.Context, req *v2.RecallMessageRequest) (*v2.RecallMessageResponse, error) {
	topic := req.GetTopic().GetName()
	if st := checkTopicName(topic); st != nil {
		return &v2.RecallMessageResponse{Status: st}, nil
	}
	topicType := "UNSPECIFIED"
	if _, found := s.cfg.Topics.Get(topic); found {
		topicType = s.topicMessageType(topic)
	}
	if topicType != protocol.MessageTypeDelay && topicType != protocol.MessageTypeMixed {
		return &v2.RecallMessageResponse{Status: status(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			"TopicMessageType validate failed, the expected type is "+topicType+", but actual type is "+protocol.MessageTypeDelay)}, nil
	}
	handle, err := timer.DecodeRecallHandle(req.GetRecallHandle())
	if err != nil {
		return &v2.RecallMessageResponse{Status: status(v2.Code_INTERNAL_SERVER_ERROR, err.Error())}, nil
	}
	resp := s.cfg.Processor.LocalRecall(&protocol.RecallMessageRequestHeader{
		Topic: topic, RecallHandle: req.GetRecallHandle(), BrokerName: handle.BrokerName,
	}, remoteAddr(ctx))
	if resp.Code != protocol.Success {
		return &v2.RecallMessageResponse{Status: status(v2.Code_INTERNAL_SERVER_ERROR, resp.Remark)}, nil
	}
	var rh protocol.RecallMessageResponseHeader
	if err := rh.Decode(resp.Ext()); err != nil {
		return &v2.RecallMessageResponse{Status: status(v2.Code_INTERNAL_SERVER_ERROR, "decode recall response: "+err.Error())}, nil
	}
	return &v2.RecallMessageResponse{Status: okStatus(), MessageId: rh.MsgID}, nil
}
