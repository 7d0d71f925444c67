package grpc

import (
	"context"
	"fmt"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/protocol"
)

// checkGroup is the broker's check of a consumer group before its
// offsets are touched (ConsumerManageProcessor: "Group %s not exist!"),
// creating it when autoCreateSubscriptionGroup allows.
func (s *Server) checkGroup(group string) *v2.Status {
	if st := checkGroupName(group); st != nil {
		return st
	}
	if _, ok := s.cfg.Groups.FindOrCreate(group); !ok {
		return status(v2.Code_CONSUMER_GROUP_NOT_FOUND, "Group "+group+" not exist!")
	}
	return nil
}

// UpdateOffset commits a group's offset of one queue
// (ConsumerProcessor.updateConsumerOffset: UPDATE_CONSUMER_OFFSET). Any
// offset is stored, a lower one being a reset, as the broker does.
func (s *Server) UpdateOffset(_ context.Context, req *v2.UpdateOffsetRequest) (*v2.UpdateOffsetResponse, error) {
	group := req.GetGroup().GetName()
	if st := s.checkGroup(group); st != nil {
		return &v2.UpdateOffsetResponse{Status: st}, nil
	}
	topic, queueID, st := s.checkQueue(req.GetMessageQueue())
	if st != nil {
		return &v2.UpdateOffsetResponse{Status: st}, nil
	}
	if req.GetOffset() < 0 {
		return &v2.UpdateOffsetResponse{Status: status(v2.Code_ILLEGAL_OFFSET, fmt.Sprintf("offset %d is negative", req.GetOffset()))}, nil
	}
	code, remark := s.cfg.Processor.LocalUpdateOffset(&protocol.UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: queueID, CommitOffset: req.GetOffset(),
	})
	return &v2.UpdateOffsetResponse{Status: remotingStatus(code, remark)}, nil
}

// GetOffset answers a group's committed offset of one queue
// (ConsumerProcessor.queryConsumerOffset: QUERY_CONSUMER_OFFSET, whose
// QUERY_NOT_FOUND is OFFSET_NOT_FOUND). As on the broker, a group without
// an offset gets 0 while the queue's first message is still in memory.
func (s *Server) GetOffset(_ context.Context, req *v2.GetOffsetRequest) (*v2.GetOffsetResponse, error) {
	group := req.GetGroup().GetName()
	if st := s.checkGroup(group); st != nil {
		return &v2.GetOffsetResponse{Status: st}, nil
	}
	topic, queueID, st := s.checkQueue(req.GetMessageQueue())
	if st != nil {
		return &v2.GetOffsetResponse{Status: st}, nil
	}
	off, code, remark := s.cfg.Processor.LocalQueryOffset(&protocol.QueryConsumerOffsetRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: queueID,
	})
	if code == protocol.QueryNotFound {
		return &v2.GetOffsetResponse{Status: status(v2.Code_OFFSET_NOT_FOUND, remark)}, nil
	}
	return &v2.GetOffsetResponse{Status: remotingStatus(code, remark), Offset: off}, nil
}

// QueryOffset answers a queue's offset by policy: BEGINNING its min
// offset (GET_MIN_OFFSET), END its max (GET_MAX_OFFSET), TIMESTAMP the
// first message stored at or after the timestamp
// (SEARCH_OFFSET_BY_TIMESTAMP, lower boundary), as the remoting client's
// minOffset, maxOffset and searchOffset.
func (s *Server) QueryOffset(_ context.Context, req *v2.QueryOffsetRequest) (*v2.QueryOffsetResponse, error) {
	topic, queueID, st := s.checkQueue(req.GetMessageQueue())
	if st != nil {
		return &v2.QueryOffsetResponse{Status: st}, nil
	}
	var (
		off    int64
		code   int32
		remark string
	)
	q := &protocol.QueueRequestHeader{Topic: topic, QueueID: queueID}
	switch req.GetQueryOffsetPolicy() {
	case v2.QueryOffsetPolicy_BEGINNING:
		off, code, remark = s.cfg.Processor.LocalMinOffset(q)
	case v2.QueryOffsetPolicy_END:
		off, code, remark = s.cfg.Processor.LocalMaxOffset(q)
	case v2.QueryOffsetPolicy_TIMESTAMP:
		if req.Timestamp == nil {
			return &v2.QueryOffsetResponse{Status: status(v2.Code_BAD_REQUEST, "timestamp is required by the TIMESTAMP policy")}, nil
		}
		off, code, remark = s.cfg.Processor.LocalSearchOffset(&protocol.SearchOffsetRequestHeader{
			Topic: topic, QueueID: queueID, Timestamp: req.GetTimestamp().AsTime().UnixMilli(),
		})
	default:
		return &v2.QueryOffsetResponse{Status: status(v2.Code_BAD_REQUEST, fmt.Sprintf("query offset policy %v is unknown", req.GetQueryOffsetPolicy()))}, nil
	}
	return &v2.QueryOffsetResponse{Status: remotingStatus(code, remark), Offset: off}, nil
}
