package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// TestGRPCSDKConsumers drives the consumer side of the gRPC
// MessagingService with the official Go v5 SDK: its push consumer, tag
// and SQL92 filters, several simple consumers sharing a group, and the
// dead-letter queue after the group's attempts are used up.
func TestGRPCSDKConsumers(t *testing.T) {
	if raceEnabled {
		// The SDK races with itself (see TestGRPCProducerAndSimpleConsumer):
		// run this test in a build without the race detector.
		proc.RerunWithoutRace(t)
		return
	}
	rmq.EnableSsl = false
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.GrpcServerEnable = true
		bc.EnablePropertyFilter = true
	})
	ctx := context.Background()

	t.Run("push consumer receives every message once", func(t *testing.T) {
		topic, group := uniq(t, "GrpcPush"), uniq(t, "GrpcPushGroup")
		c.createTopic(topic, 4)
		const n = 20
		var mu sync.Mutex
		seen := map[string]int{}
		pc, err := rmq.NewPushConsumer(sdkConfig(c, group),
			rmq.WithPushAwaitDuration(5*time.Second),
			rmq.WithPushSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}),
			rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
				mu.Lock()
				seen[string(mv.GetBody())]++
				mu.Unlock()
				return rmq.SUCCESS
			}}))
		if err != nil {
			t.Fatal(err)
		}
		if err := pc.Start(); err != nil {
			t.Fatalf("push consumer start: %v", err)
		}
		p := startSDKProducer(t, c, topic)
		for i := range n {
			if _, err := p.Send(ctx, &rmq.Message{Topic: topic, Body: fmt.Appendf(nil, "push-%d", i)}); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		wait.For(t, 60*time.Second, "all messages consumed", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) == n
		})
		// GracefulStop waits for the listener's running calls; a
		// message delivered twice shows up as a count of 2.
		if err := pc.GracefulStop(); err != nil {
			t.Fatalf("push consumer stop: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range n {
			if k := fmt.Sprintf("push-%d", i); seen[k] != 1 {
				t.Errorf("%s consumed %d times", k, seen[k])
			}
		}
	})

	t.Run("tag and SQL92 filters", func(t *testing.T) {
		topic := uniq(t, "GrpcFilter")
		c.createTopic(topic, 2)
		p := startSDKProducer(t, c, topic)
		for i := range 10 {
			m := &rmq.Message{Topic: topic, Body: fmt.Appendf(nil, "f-%d", i)}
			if i%2 == 0 {
				m.SetTag("TagA")
			} else {
				m.SetTag("TagB")
			}
			m.AddProperty("n", fmt.Sprint(i))
			if _, err := p.Send(ctx, m); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		for _, tc := range []struct {
			name string
			expr *rmq.FilterExpression
			want []string
		}{
			{"tag", rmq.NewFilterExpressionWithType("TagA", rmq.TAG), []string{"f-0", "f-2", "f-4", "f-6", "f-8"}},
			{"tags", rmq.NewFilterExpressionWithType("TagB || TagX", rmq.TAG), []string{"f-1", "f-3", "f-5", "f-7", "f-9"}},
			{"sql", rmq.NewFilterExpressionWithType("n >= 7 OR n = 2", rmq.SQL92), []string{"f-2", "f-7", "f-8", "f-9"}},
			{"sql with tag", rmq.NewFilterExpressionWithType("TAGS = 'TagB' AND n < 4", rmq.SQL92), []string{"f-1", "f-3"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				sc, err := rmq.NewSimpleConsumer(sdkConfig(c, uniq(t, "GrpcFilterGroup")),
					rmq.WithSimpleAwaitDuration(5*time.Second),
					rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: tc.expr}))
				if err != nil {
					t.Fatal(err)
				}
				if err := sc.Start(); err != nil {
					t.Fatalf("simple consumer start: %v", err)
				}
				defer func() { _ = sc.GracefulStop() }()
				got := receiveN(t, sc, len(tc.want), 20*time.Second, 30*time.Second)
				bodies := map[string]bool{}
				for _, mv := range got {
					bodies[string(mv.GetBody())] = true
					if err := sc.Ack(ctx, mv); err != nil {
						t.Fatalf("ack: %v", err)
					}
				}
				for _, w := range tc.want {
					if !bodies[w] {
						t.Errorf("%s not received; got %v", w, bodies)
					}
				}
				// Nothing else matches: one more long poll is empty.
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				if mvs, _ := sc.Receive(rctx, 16, 20*time.Second); len(mvs) != 0 {
					t.Fatalf("filter %s let through %q", tc.name, mvs[0].GetBody())
				}
			})
		}
	})

	t.Run("simple consumers share a group", func(t *testing.T) {
		topic, group := uniq(t, "GrpcShare"), uniq(t, "GrpcShareGroup")
		c.createTopic(topic, 4)
		const n, consumers = 40, 4
		p := startSDKProducer(t, c, topic)
		var mu sync.Mutex
		acked := map[string]int{}
		perConsumer := make([]int, consumers)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for k := range consumers {
			sc := startSDKSimpleConsumer(t, c, group, topic)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					mvs, _ := sc.Receive(rctx, 2, 30*time.Second)
					cancel()
					for _, mv := range mvs {
						if err := sc.Ack(ctx, mv); err != nil {
							t.Errorf("consumer %d ack %s: %v", k, mv.GetMessageId(), err)
							continue
						}
						mu.Lock()
						acked[mv.GetMessageId()]++
						perConsumer[k]++
						mu.Unlock()
					}
				}
			}()
		}
		// Sent while all consumers long-poll, so that they compete.
		sent := map[string]bool{}
		for i := range n {
			rs, err := p.Send(ctx, &rmq.Message{Topic: topic, Body: fmt.Appendf(nil, "s-%d", i)})
			if err != nil || len(rs) != 1 {
				t.Fatalf("send %d: %v", i, err)
			}
			sent[rs[0].MessageID] = true
		}
		wait.For(t, 60*time.Second, "all messages acked", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) >= n
		})
		close(stop)
		wg.Wait()
		for id := range sent {
			if acked[id] != 1 {
				t.Errorf("message %s acked %d times", id, acked[id])
			}
		}
		if len(acked) != n {
			t.Errorf("acked %d distinct ids, sent %d", len(acked), n)
		}
		t.Logf("acks per consumer: %v", perConsumer)
	})

	t.Run("dead-letter queue after max attempts", func(t *testing.T) {
		topic, group := uniq(t, "GrpcDlq"), uniq(t, "GrpcDlqGroup")
		c.createTopic(topic, 1)
		gc := protocol.NewSubscriptionGroupConfig(group)
		gc.RetryMaxTimes = 1 // two delivery attempts
		body, err := protocol.MarshalFastJSON(&gc)
		if err != nil {
			t.Fatal(err)
		}
		if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
			t.Fatalf("create group: %d %s", r.Code, r.Remark)
		}
		p := startSDKProducer(t, c, topic)
		rs, err := p.Send(ctx, &rmq.Message{Topic: topic, Body: []byte("poison")})
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		id := rs[0].MessageID
		sc := startSDKSimpleConsumer(t, c, group, topic)
		// Never acked: each delivery is made visible again in 1 s.
		for attempt := int32(1); attempt <= 2; attempt++ {
			got := receiveN(t, sc, 1, 20*time.Second, 60*time.Second)
			if got[0].GetMessageId() != id || got[0].GetDeliveryAttempt() != attempt {
				t.Fatalf("delivery %d: id %s attempt %d, want %s attempt %d", attempt, got[0].GetMessageId(), got[0].GetDeliveryAttempt(), id, attempt)
			}
			if err := sc.ChangeInvisibleDuration(got[0], time.Second); err != nil {
				t.Fatalf("change invisible duration: %v", err)
			}
		}
		dlq := "%DLQ%" + group
		wait.For(t, 60*time.Second, "message in "+dlq, func() bool {
			// Receiving drives the move: the proxy forwards a message
			// past its attempts instead of answering it.
			rctx, cancel := context.WithTimeout(ctx, 6*time.Second)
			mvs, _ := sc.Receive(rctx, 1, 20*time.Second)
			cancel()
			for _, mv := range mvs {
				t.Fatalf("delivered again: id %s attempt %d", mv.GetMessageId(), mv.GetDeliveryAttempt())
			}
			return c.b.Store().MaxOffset(dlq, 0) == 1
		})
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if mvs, _ := sc.Receive(rctx, 1, 20*time.Second); len(mvs) != 0 {
			t.Fatalf("dead letter delivered again: attempt %d", mvs[0].GetDeliveryAttempt())
		}
		// The dead letter carries the message.
		dc, err := rmq.NewSimpleConsumer(sdkConfig(c, uniq(t, "GrpcDlqReader")),
			rmq.WithSimpleAwaitDuration(5*time.Second),
			rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{dlq: rmq.SUB_ALL}))
		if err != nil {
			t.Fatal(err)
		}
		if err := dc.Start(); err != nil {
			t.Fatalf("DLQ reader start: %v", err)
		}
		defer func() { _ = dc.GracefulStop() }()
		got := receiveN(t, dc, 1, 20*time.Second, 30*time.Second)
		if string(got[0].GetBody()) != "poison" || got[0].GetMessageId() != id {
			t.Fatalf("DLQ holds %q id %s, want poison id %s", got[0].GetBody(), got[0].GetMessageId(), id)
		}
	})

	t.Run("FIFO message past max attempts goes to the DLQ on receive", func(t *testing.T) {
		// An orderly pop's redeliveries never pass through the broker's
		// revive: the max attempts are checked where Java's proxy checks
		// them, on receive (PopMessageResultFilterImpl's TO_DLQ).
		topic, group := uniq(t, "GrpcFifoDlq"), uniq(t, "GrpcFifoDlqGroup")
		c.createTypedTopic(topic, 1, protocol.MessageTypeFIFO)
		gc := protocol.NewSubscriptionGroupConfig(group)
		gc.ConsumeMessageOrderly = true
		gc.RetryMaxTimes = 1 // two delivery attempts
		body, err := protocol.MarshalFastJSON(&gc)
		if err != nil {
			t.Fatal(err)
		}
		if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
			t.Fatalf("create group: %d %s", r.Code, r.Remark)
		}
		p := startSDKProducer(t, c, topic)
		var ids []string
		for _, b := range []string{"poison", "next"} {
			m := &rmq.Message{Topic: topic, Body: []byte(b)}
			m.SetMessageGroup("g1")
			rs, err := p.Send(ctx, m)
			if err != nil {
				t.Fatalf("send %s: %v", b, err)
			}
			ids = append(ids, rs[0].MessageID)
		}
		sc := startSDKSimpleConsumer(t, c, group, topic)
		for attempt := int32(1); attempt <= 2; attempt++ {
			got := receiveN(t, sc, 1, 20*time.Second, 60*time.Second)
			if got[0].GetMessageId() != ids[0] || got[0].GetDeliveryAttempt() != attempt {
				t.Fatalf("delivery %d: %q attempt %d, want poison attempt %d", attempt, got[0].GetBody(), got[0].GetDeliveryAttempt(), attempt)
			}
			if err := sc.ChangeInvisibleDuration(got[0], time.Second); err != nil {
				t.Fatalf("change invisible duration: %v", err)
			}
		}
		// The third receive forwards poison to the DLQ and acks it; the
		// message group goes on with next.
		got := receiveN(t, sc, 1, 20*time.Second, 60*time.Second)
		if got[0].GetMessageId() != ids[1] || got[0].GetDeliveryAttempt() != 1 {
			t.Fatalf("after poison's attempts received %q attempt %d, want next attempt 1", got[0].GetBody(), got[0].GetDeliveryAttempt())
		}
		if err := sc.Ack(ctx, got[0]); err != nil {
			t.Fatalf("ack next: %v", err)
		}
		dlq := "%DLQ%" + group
		wait.For(t, 10*time.Second, "poison in "+dlq, func() bool { return c.b.Store().MaxOffset(dlq, 0) == 1 })
	})

	t.Run("push consumer failures end in the DLQ", func(t *testing.T) {
		topic, group := uniq(t, "GrpcPushDlq"), uniq(t, "GrpcPushDlqGroup")
		c.createTopic(topic, 1)
		gc := protocol.NewSubscriptionGroupConfig(group)
		gc.RetryMaxTimes = 1 // two delivery attempts
		body, err := protocol.MarshalFastJSON(&gc)
		if err != nil {
			t.Fatal(err)
		}
		if r := c.invoke(c.b.Addr(), protocol.UpdateAndCreateSubscriptionGroup, nil, body); r.Code != protocol.Success {
			t.Fatalf("create group: %d %s", r.Code, r.Remark)
		}
		var mu sync.Mutex
		var attempts []int32
		pc, err := rmq.NewPushConsumer(sdkConfig(c, group),
			rmq.WithPushAwaitDuration(5*time.Second),
			rmq.WithPushSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}),
			rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
				mu.Lock()
				attempts = append(attempts, mv.GetDeliveryAttempt())
				mu.Unlock()
				return rmq.FAILURE
			}}))
		if err != nil {
			t.Fatal(err)
		}
		if err := pc.Start(); err != nil {
			t.Fatalf("push consumer start: %v", err)
		}
		defer func() { _ = pc.GracefulStop() }()
		p := startSDKProducer(t, c, topic)
		if _, err := p.Send(ctx, &rmq.Message{Topic: topic, Body: []byte("fails")}); err != nil {
			t.Fatalf("send: %v", err)
		}
		// The SDK (v5.1.4) answers each failure with a change of
		// invisible time by the group's backoff (1 s, 5 s); after the
		// second one the broker's revive moves the message to the DLQ.
		// Before the pop fix a failure in the millisecond of the receive
		// lost the message here.
		dlq := "%DLQ%" + group
		wait.For(t, 60*time.Second, "message in "+dlq, func() bool {
			return c.b.Store().MaxOffset(dlq, 0) == 1
		})
		if err := pc.GracefulStop(); err != nil {
			t.Fatalf("push consumer stop: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(attempts) != "[1 2]" {
			t.Fatalf("delivery attempts %v, want [1 2]", attempts)
		}
	})
}
