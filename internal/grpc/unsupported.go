package grpc

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// SyncLiteSubscription is not served: it belongs to the lite topics of
// newer rocketmq-apis, which neither this store nor Apache RocketMQ 5.3
// has. It answers NOT_IMPLEMENTED with the reason, so the SDKs report the
// missing feature instead of misbehaving.
func (s *Server) SyncLiteSubscription(context.Context, *v2.SyncLiteSubscriptionRequest) (*v2.SyncLiteSubscriptionResponse, error) {
	return &v2.SyncLiteSubscriptionResponse{Status: status(v2.Code_NOT_IMPLEMENTED,
		"SyncLiteSubscription is not implemented: rocketd has no lite topics (Lite Topic is not in Apache RocketMQ 5.3 either)")}, nil
}
