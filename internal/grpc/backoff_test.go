package grpc

import (
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
)

// A consumer's settings always carry a backoff strategy: the Java SDK's
// push consumer fails to start on settings without one
// (PushSubscriptionSettings.sync: "Unrecognized backoff policy strategy"),
// and its group does not exist yet when its first settings arrive.
func TestConsumerSettingsCarryBackoff(t *testing.T) {
	bc := config.NewBrokerConfig()
	groups, err := meta.OpenGroups(meta.Options{Dir: t.TempDir()}, &bc)
	if err != nil {
		t.Fatal(err)
	}
	exp := protocol.NewSubscriptionGroupConfig("expGroup")
	exp.RetryMaxTimes = 3
	exp.ConsumeMessageOrderly = true
	exp.GroupRetryPolicy = protocol.GroupRetryPolicy{Type: protocol.RetryPolicyExponential,
		ExponentialRetryPolicy: &protocol.ExponentialRetryPolicy{Initial: 100, Max: 1000, Multiplier: 3}}
	if err := groups.Put(exp); err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: Config{Broker: &bc, Groups: groups}}
	settings := func(group string) *v2.Settings {
		out, st := s.applySettings(&v2.Settings{ClientType: v2.ClientType_PUSH_CONSUMER.Enum(),
			PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: &v2.Resource{Name: group}}}})
		if st != nil {
			t.Fatalf("%s: status %v", group, st)
		}
		return out
	}

	missing := settings("notCreatedYet").GetBackoffPolicy()
	next := missing.GetCustomizedBackoff().GetNext()
	if missing.GetMaxAttempts() != 17 || len(next) != 18 || next[0].AsDuration() != time.Second || next[17].AsDuration() != 2*time.Hour {
		t.Errorf("new group's backoff = %v, want 17 attempts, Java's 18 customized delays 1s..2h", missing)
	}

	got := settings("expGroup")
	e := got.GetBackoffPolicy().GetExponentialBackoff()
	if got.GetBackoffPolicy().GetMaxAttempts() != 4 || e.GetInitial().AsDuration() != 100*time.Millisecond ||
		e.GetMax().AsDuration() != time.Second || e.GetMultiplier() != 3 {
		t.Errorf("exponential group's backoff = %v, want 4 attempts, 100ms..1s x3", got.GetBackoffPolicy())
	}
	if !got.GetSubscription().GetFifo() {
		t.Error("orderly group's settings are not fifo")
	}

	custom := protocol.NewSubscriptionGroupConfig("customGroup")
	custom.GroupRetryPolicy.CustomizedRetryPolicy = &protocol.CustomizedRetryPolicy{Next: []int64{250, 500}}
	if err := groups.Put(custom); err != nil {
		t.Fatal(err)
	}
	next = settings("customGroup").GetBackoffPolicy().GetCustomizedBackoff().GetNext()
	if len(next) != 2 || next[0].AsDuration() != 250*time.Millisecond || next[1].AsDuration() != 500*time.Millisecond {
		t.Errorf("customized group's delays = %v, want 250ms 500ms", next)
	}
}
