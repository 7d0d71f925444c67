package grpc

import (
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketd/rocketd/internal/protocol"
)

// Java's defaults of a group's retry policies (CustomizedRetryPolicy's
// next, ExponentialRetryPolicy's initial, max and multiplier).
var (
	defaultCustomizedNext = []time.Duration{
		time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
		6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
		20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	}
	defaultExponential = protocol.ExponentialRetryPolicy{Initial: 5000, Max: 2 * 3600 * 1000, Multiplier: 2}
)

// consumerBackoff is the backoff policy a consumer's settings carry, as
// GrpcClientSettingsManager.mergeSubscriptionData builds it from the
// group's config: retryMaxTimes+1 attempts, an exponential backoff for an
// EXPONENTIAL group retry policy, else a customized one (a policy without
// parameters: Java's defaults). The SDK's push consumer refuses settings
// without a strategy, so a group not created yet gets the defaults of a new
// group, as Java's createDefaultConsumerSettingsBuilder does.
func consumerBackoff(gc protocol.SubscriptionGroupConfig) *v2.RetryPolicy {
	rp := &v2.RetryPolicy{MaxAttempts: gc.RetryMaxTimes + 1}
	if gc.GroupRetryPolicy.Type == protocol.RetryPolicyExponential {
		e := defaultExponential
		if p := gc.GroupRetryPolicy.ExponentialRetryPolicy; p != nil {
			e = *p
		}
		rp.Strategy = &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
			Initial: durationpb.New(time.Duration(e.Initial) * time.Millisecond),
			Max:     durationpb.New(time.Duration(e.Max) * time.Millisecond), Multiplier: float32(e.Multiplier),
		}}
		return rp
	}
	var next []*durationpb.Duration
	if p := gc.GroupRetryPolicy.CustomizedRetryPolicy; p != nil {
		for _, ms := range p.Next {
			next = append(next, durationpb.New(time.Duration(ms)*time.Millisecond))
		}
	} else {
		for _, d := range defaultCustomizedNext {
			next = append(next, durationpb.New(d))
		}
	}
	rp.Strategy = &v2.RetryPolicy_CustomizedBackoff{CustomizedBackoff: &v2.CustomizedBackoff{Next: next}}
	return rp
}
