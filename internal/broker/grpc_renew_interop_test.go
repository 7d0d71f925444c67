package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestGRPCPushAutoRenew: a Go v5 SDK push consumer (its receives ask for
// auto_renew) whose handler takes longer than the invisible time the
// server gives its messages (defaultInvisibleTimeMills, 2 s here) still
// gets each message once: the server renews the invisible time of the
// messages the client holds (renewAheadTimeMillis before they would be
// visible, every renewSchedulePeriodMillis), and the client's acks with
// the handles it got end the renewals (they use the renewed handles).
func TestGRPCPushAutoRenew(t *testing.T) {
	if raceEnabled {
		// The SDK races with itself (see TestGRPCProducerAndSimpleConsumer).
		proc.RerunWithoutRace(t)
		return
	}
	rmq.EnableSsl = false
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.GrpcServerEnable = true
		bc.DefaultInvisibleTime = 2 * time.Second
		bc.RenewAheadTime = time.Second
		bc.RenewSchedulePeriod = 200 * time.Millisecond
	})
	ctx := context.Background()
	topic, group := uniq(t, "GrpcRenew"), uniq(t, "GrpcRenewGroup")
	c.createTopic(topic, 2)
	const n, handling = 3, 5 * time.Second
	var mu sync.Mutex
	seen := map[string]int{}
	done := 0
	pc, err := rmq.NewPushConsumer(sdkConfig(c, group),
		rmq.WithPushAwaitDuration(5*time.Second),
		rmq.WithPushSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}),
		rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
			mu.Lock()
			seen[string(mv.GetBody())]++
			mu.Unlock()
			// The slow handler is the case under test: it holds the
			// message 2.5 times its invisible time.
			time.Sleep(handling)
			mu.Lock()
			done++
			mu.Unlock()
			return rmq.SUCCESS
		}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("push consumer start: %v", err)
	}
	defer func() { _ = pc.GracefulStop() }()
	p := startSDKProducer(t, c, topic)
	for i := range n {
		if _, err := p.Send(ctx, &rmq.Message{Topic: topic, Body: fmt.Appendf(nil, "slow-%d", i)}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	// A redelivery would come 2 s into a handler's 5 s: once every
	// handler has returned, any second delivery was counted.
	wait.For(t, 60*time.Second, "every message handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done >= n
	})
	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		if k := fmt.Sprintf("slow-%d", i); seen[k] != 1 {
			t.Errorf("%s delivered %d times", k, seen[k])
		}
	}
	if len(seen) != n {
		t.Errorf("delivered %v, want %d messages once each", seen, n)
	}
}

// TestGRPCAutoRenewClientGone: a message a push consumer holds (received
// with auto_renew, 60 s invisible by default) becomes visible again about
// invisibleTimeMillisWhenClear (1 s) after the client terminates, as
// Java's proxy clears a departed client's handles, instead of after its
// invisible time; a receive without auto_renew keeps its own invisible
// time. Raw gRPC, under -race.
func TestGRPCAutoRenewClientGone(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.GrpcServerEnable = true
		bc.RenewSchedulePeriod = 100 * time.Millisecond
	})
	topic, group := uniq(t, "GrpcRenewGone"), uniq(t, "GrpcRenewGoneGroup")
	c.createTopic(topic, 1)
	holder, hctx := rawGRPC(t, c)
	if r, err := holder.Heartbeat(hctx, &v2.HeartbeatRequest{Group: &v2.Resource{Name: group}, ClientType: v2.ClientType_PUSH_CONSUMER}); err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("heartbeat: %v %v", err, r)
	}
	res := &v2.Resource{Name: topic}
	if sr, err := holder.SendMessage(hctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: res, Body: []byte("held"),
		SystemProperties: &v2.SystemProperties{MessageId: "RENEW-GONE-1", MessageType: v2.MessageType_NORMAL}}}}); err != nil || sr.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("send: %v %v", err, sr)
	}
	var held []*v2.Message
	wait.For(t, 20*time.Second, "the push consumer receives the message", func() bool {
		st, err := holder.ReceiveMessage(hctx, &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: group},
			MessageQueue: &v2.MessageQueue{Topic: res, Id: -1}, BatchSize: 1, AutoRenew: true,
			LongPollingTimeout: durationpb.New(5 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		for {
			r, err := st.Recv()
			if err != nil {
				break
			}
			if m := r.GetMessage(); m != nil {
				held = append(held, m)
			}
		}
		return len(held) > 0
	})
	if d := held[0].GetSystemProperties().GetInvisibleDuration().AsDuration(); d != config.DefaultInvisibleTimeForRenew {
		t.Fatalf("auto-renew receive got invisible duration %v, want %v", d, config.DefaultInvisibleTimeForRenew)
	}
	gone := time.Now()
	if r, err := holder.NotifyClientTermination(hctx, &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: group}}); err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("notify termination: %v %v", err, r)
	}
	other, octx := rawGRPC(t, c)
	var again []*v2.Message
	wait.For(t, 20*time.Second, "the message visible again", func() bool {
		_, msgs := rawReceive(t, octx, other, group, topic, 1)
		again = append(again, msgs...)
		return len(again) > 0
	})
	if since := time.Since(gone); since > 15*time.Second {
		t.Fatalf("visible again %v after the client left; its 60 s invisible time ran out instead of the clear", since)
	}
	if again[0].GetSystemProperties().GetMessageId() != "RENEW-GONE-1" || again[0].GetSystemProperties().GetDeliveryAttempt() != 2 {
		t.Fatalf("received %v attempt %d, want RENEW-GONE-1 attempt 2", again[0].GetSystemProperties().GetMessageId(),
			again[0].GetSystemProperties().GetDeliveryAttempt())
	}
}
