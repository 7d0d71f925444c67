package grpc

import (
	"fmt"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"

	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
)

// defaultPullBatch is the batch of a PullMessage that names none
// (DefaultLitePullConsumer's pullBatchSize).
const defaultPullBatch = 32

// PullMessage pulls one queue from an offset, as the proxy's
// ConsumerProcessor.pullMessage does: a PULL_MESSAGE with the request's
// filter (the subscription flag: no heartbeat is needed), no offset commit
// (UpdateOffset commits), waiting up to long_polling_timeout (at most
// 20 s, within the deadline) when the queue has nothing beyond the
// offset. The stream is a status, the messages (OK only), then the
// next offset to pull from (whenever the store was read).
func (s *Server) PullMessage(req *v2.PullMessageRequest, stream grpc.ServerStreamingServer[v2.PullMessageResponse]) error {
	ctx, cancel := s.untilClosed(stream.Context())
	defer cancel()
	reply := func(st *v2.Status) error {
		return stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Status{Status: st}})
	}
	group := req.GetGroup().GetName()
	if st := checkGroupName(group); st != nil {
		return reply(st)
	}
	topic, queueID, st := s.checkQueue(req.GetMessageQueue())
	if st != nil {
		return reply(st)
	}
	if req.GetOffset() < 0 {
		return reply(status(v2.Code_ILLEGAL_OFFSET, fmt.Sprintf("offset %d is negative", req.GetOffset())))
	}
	batch := req.GetBatchSize()
	switch {
	case batch < 0:
		return reply(status(v2.Code_BAD_REQUEST, fmt.Sprintf("batch size %d is negative", batch)))
	case batch == 0:
		batch = defaultPullBatch
	}
	var poll time.Duration
	if req.GetLongPollingTimeout() != nil {
		poll = min(max(req.GetLongPollingTimeout().AsDuration(), 0), maxPollTime)
	}
	if dl, ok := ctx.Deadline(); ok {
		poll = max(min(poll, time.Until(dl)-pollReserve), 0)
	}
	expType, exp := filterOf(req.GetFilterExpression())
	h := protocol.PullMessageRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: queueID, QueueOffset: req.GetOffset(), MaxMsgNums: batch,
		SysFlag: protocol.PullFlagSubscription, SuspendTimeoutMillis: poll.Milliseconds(),
		Subscription: exp, ExpressionType: expType,
	}
	resp := s.cfg.Processor.LocalPull(ctx, &h)
	if resp.Release != nil {
		defer resp.Release()
	}
	var rh protocol.PullMessageResponseHeader
	switch resp.Code {
	case protocol.Success, protocol.PullNotFound, protocol.PullRetryImmediately, protocol.PullOffsetMoved:
		if err := rh.Decode(resp.Ext()); err != nil {
			return reply(status(v2.Code_INTERNAL_SERVER_ERROR, "decode pull response: "+err.Error()))
		}
	}
	var first *v2.Status
	switch resp.Code {
	case protocol.Success:
		first = okStatus()
	case protocol.PullNotFound:
		first = status(v2.Code_MESSAGE_NOT_FOUND, "no new message")
	case protocol.PullRetryImmediately:
		first = status(v2.Code_MESSAGE_NOT_FOUND, "no matched message")
	case protocol.PullOffsetMoved:
		first = status(v2.Code_ILLEGAL_OFFSET, fmt.Sprintf("offset %d is illegal, queue offsets are [%d, %d]", req.GetOffset(), rh.MinOffset, rh.MaxOffset))
	case protocol.SubscriptionGroupNotExist:
		return reply(status(v2.Code_CONSUMER_GROUP_NOT_FOUND, resp.Remark))
	case protocol.TopicNotExist:
		return reply(status(v2.Code_TOPIC_NOT_FOUND, resp.Remark))
	case protocol.SubscriptionParseFailed:
		// GrpcValidator.validateFilterExpression's code.
		return reply(status(v2.Code_ILLEGAL_FILTER_EXPRESSION, resp.Remark))
	default:
		return reply(remotingStatus(resp.Code, resp.Remark))
	}
	var msgs []*v2.Message
	if resp.Code == protocol.Success {
		parts := resp.BodyParts
		if resp.Body != nil {
			parts = [][]byte{resp.Body}
		}
		for _, part := range parts {
			for len(part) > 0 {
				rec, n, err := message.DecodeRecord(part, false)
				if err != nil {
					return reply(status(v2.Code_INTERNAL_SERVER_ERROR, "decode pulled message: "+err.Error()))
				}
				part = part[n:]
				msgs = append(msgs, grpcMessage(topic, &rec, "", rec.ReconsumeTimes, 0))
			}
		}
	}
	if err := reply(first); err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Message{Message: m}}); err != nil {
			return err
		}
	}
	return stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_NextOffset{NextOffset: rh.NextBeginOffset}})
}

// checkQueue checks a request's queue as the broker's pull does: a legal
// topic name (ILLEGAL_TOPIC), a topic of this broker (TOPIC_NOT_FOUND)
// and a readable queue id (BAD_REQUEST).
func (s *Server) checkQueue(mq *v2.MessageQueue) (string, int32, *v2.Status) {
	topic := mq.GetTopic().GetName()
	if st := checkTopicName(topic); st != nil {
		return "", 0, st
	}
	tc, ok := s.cfg.Topics.Get(topic)
	if !ok {
		return "", 0, status(v2.Code_TOPIC_NOT_FOUND, fmt.Sprintf("topic[%s] not exist, apply first please!", topic))
	}
	if id := mq.GetId(); id < 0 || id >= tc.ReadQueueNums {
		return "", 0, status(v2.Code_BAD_REQUEST, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]", id, topic, tc.ReadQueueNums))
	}
	return topic, mq.GetId(), nil
}
