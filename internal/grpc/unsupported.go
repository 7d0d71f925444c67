package grpc

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// The RPCs below are not served: each answers NOT_IMPLEMENTED with the
// RPC's name, as a proxy without the feature does (doc.go says why).

func notImplemented(rpc string) *v2.Status {
	return status(v2.Code_NOT_IMPLEMENTED, rpc+" is not implemented by rocketd's MessagingService yet")
}

func (s *Server) RecallMessage(context.Context, *v2.RecallMessageRequest) (*v2.RecallMessageResponse, error) {
	return &v2.RecallMessageResponse{Status: notImplemented("RecallMessage")}, nil
}

func (s *Server) SyncLiteSubscription(context.Context, *v2.SyncLiteSubscriptionRequest) (*v2.SyncLiteSubscriptionResponse, error) {
	return &v2.SyncLiteSubscriptionResponse{Status: notImplemented("SyncLiteSubscription")}, nil
}
