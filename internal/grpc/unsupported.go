package grpc

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
)

// The RPCs below are not served yet: each answers NOT_IMPLEMENTED with
// the RPC's name, as a proxy without the feature does.

func notImplemented(rpc string) *v2.Status {
	return status(v2.Code_NOT_IMPLEMENTED, rpc+" is not implemented by rocketd's MessagingService yet")
}

func (s *Server) PullMessage(_ *v2.PullMessageRequest, stream grpc.ServerStreamingServer[v2.PullMessageResponse]) error {
	return stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Status{Status: notImplemented("PullMessage")}})
}

func (s *Server) UpdateOffset(context.Context, *v2.UpdateOffsetRequest) (*v2.UpdateOffsetResponse, error) {
	return &v2.UpdateOffsetResponse{Status: notImplemented("UpdateOffset")}, nil
}

func (s *Server) GetOffset(context.Context, *v2.GetOffsetRequest) (*v2.GetOffsetResponse, error) {
	return &v2.GetOffsetResponse{Status: notImplemented("GetOffset")}, nil
}

func (s *Server) QueryOffset(context.Context, *v2.QueryOffsetRequest) (*v2.QueryOffsetResponse, error) {
	return &v2.QueryOffsetResponse{Status: notImplemented("QueryOffset")}, nil
}

func (s *Server) RecallMessage(context.Context, *v2.RecallMessageRequest) (*v2.RecallMessageResponse, error) {
	return &v2.RecallMessageResponse{Status: notImplemented("RecallMessage")}, nil
}

func (s *Server) SyncLiteSubscription(context.Context, *v2.SyncLiteSubscriptionRequest) (*v2.SyncLiteSubscriptionResponse, error) {
	return &v2.SyncLiteSubscriptionResponse{Status: notImplemented("SyncLiteSubscription")}, nil
}
