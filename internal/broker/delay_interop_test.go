package broker_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// fastLevels makes every delay level 1 s: retries come back quickly.
func fastLevels(bc *config.BrokerConfig) {
	bc.MessageDelayLevel = strings.TrimSpace(strings.Repeat("1s ", 18))
}

// consumeWith starts a clustering push consumer of group on topic with fn
// as the callback (batch size 1).
func (c *cluster) consumeWith(group, topic string,
	fn func(context.Context, *primitive.MessageExt) consumer.ConsumeResult, opts ...consumer.Option) {
	c.t.Helper()
	c.startPushConsumer(group, topic, "*",
		func(ctx context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range ms {
				if r := fn(ctx, m); r != consumer.ConsumeSuccess {
					return r, nil
				}
			}
			return consumer.ConsumeSuccess, nil
		}, append([]consumer.Option{consumer.WithConsumeMessageBatchMaxSize(1)}, opts...)...)
}

// deliveries records what a callback saw, in order.
type deliveries struct {
	mu   sync.Mutex
	msgs []*primitive.MessageExt
	at   []time.Time
}

func (d *deliveries) add(m *primitive.MessageExt) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.msgs = append(d.msgs, m)
	d.at = append(d.at, time.Now())
	return len(d.msgs)
}

func (d *deliveries) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.msgs)
}

func (d *deliveries) get(i int) (*primitive.MessageExt, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.msgs[i], d.at[i]
}

// TestGoClientRetryOnce: "retry later" once, the message comes back from
// %RETRY%group with reconsume times 1, its ORIGIN_MESSAGE_ID and topic kept.
func TestGoClientRetryOnce(t *testing.T) {
	t.Parallel()
	c := startCluster(t, fastLevels)
	topic, group := uniq(t, "T"), uniq(t, "cg")
	c.createTopic(topic, 1)
	c.createTopic("%RETRY%"+group, 1) // else the client finds its route only after 30 s
	var got deliveries
	c.consumeWith(group, topic, func(_ context.Context, m *primitive.MessageExt) consumer.ConsumeResult {
		if got.add(m) == 1 {
			return consumer.ConsumeRetryLater
		}
		return consumer.ConsumeSuccess
	})
	p := c.newProducer()
	msg := primitive.NewMessage(topic, []byte("retry-me"))
	msg.WithTag("TagR")
	if _, err := p.SendSync(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 40*time.Second, "redelivery", func() bool { return got.len() >= 2 })
	first, _ := got.get(0)
	second, _ := got.get(1)
	if second.ReconsumeTimes != 1 || string(second.Body) != "retry-me" || second.Topic != topic || second.GetTags() != "TagR" {
		t.Fatalf("redelivered: reconsumeTimes %d body %q topic %q tags %q", second.ReconsumeTimes, second.Body, second.Topic, second.GetTags())
	}
	origin := second.GetProperty(primitive.PropertyOriginMessageId)
	if origin == "" || (origin != first.MsgId && origin != first.OffsetMsgId) {
		t.Fatalf("ORIGIN_MESSAGE_ID %q, first delivery had id %s / offset id %s", origin, first.MsgId, first.OffsetMsgId)
	}
	if second.GetProperty(primitive.PropertyRetryTopic) != topic {
		t.Fatalf("RETRY_TOPIC %q", second.GetProperty(primitive.PropertyRetryTopic))
	}
}

// TestGoClientDeadLetter: with max reconsume times 2 a message always
// answered "retry later" lands in %DLQ%group, where a consumer reads it.
func TestGoClientDeadLetter(t *testing.T) {
	t.Parallel()
	c := startCluster(t, fastLevels)
	topic, group := uniq(t, "T"), uniq(t, "cg")
	c.createTopic(topic, 1)
	c.createTopic("%RETRY%"+group, 1)
	var got deliveries
	c.consumeWith(group, topic, func(_ context.Context, m *primitive.MessageExt) consumer.ConsumeResult {
		got.add(m)
		return consumer.ConsumeRetryLater
	}, consumer.WithMaxReconsumeTimes(2))
	p := c.newProducer()
	if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("doomed"))); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 40*time.Second, "three deliveries", func() bool { return got.len() >= 3 })
	dlq := "%DLQ%" + group
	c.waitRoute(dlq, 1)
	var dead deliveries
	c.consumeWith(uniq(t, "dlqreader"), dlq, func(_ context.Context, m *primitive.MessageExt) consumer.ConsumeResult {
		dead.add(m)
		return consumer.ConsumeSuccess
	})
	wait.For(t, 40*time.Second, "the dead letter", func() bool { return dead.len() >= 1 })
	m, _ := dead.get(0)
	if string(m.Body) != "doomed" || m.ReconsumeTimes != 3 {
		t.Fatalf("dead letter: body %q reconsumeTimes %d", m.Body, m.ReconsumeTimes)
	}
	if n := got.len(); n != 3 {
		t.Fatalf("the group consumed %d times, want 3 (first + 2 retries)", n)
	}
}

// warmConsumer starts a consumer on topic and waits until it consumes a
// first message, so that later timings measure delivery only.
func warmConsumer(t *testing.T, c *cluster, topic string, p interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
}) *deliveries {
	t.Helper()
	var got deliveries
	c.consumeWith(uniq(t, "cg"), topic, func(_ context.Context, m *primitive.MessageExt) consumer.ConsumeResult {
		got.add(m)
		return consumer.ConsumeSuccess
	})
	if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("warm-up"))); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "warm-up message", func() bool { return got.len() >= 1 })
	return &got
}

// TestGoClientDelayLevel2: a level-2 message (5 s) arrives no earlier than
// 5 s after it was sent and within 6.5 s.
func TestGoClientDelayLevel2(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	c.createTopic(topic, 1)
	p := c.newProducer()
	got := warmConsumer(t, c, topic, p)
	msg := primitive.NewMessage(topic, []byte("level-2"))
	msg.WithDelayTimeLevel(2)
	sent := time.Now()
	if _, err := p.SendSync(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the delayed message", func() bool { return got.len() >= 2 })
	m, at := got.get(1)
	// Due times count from the store timestamp, a whole millisecond that
	// may be the one sent fell in.
	sent = time.UnixMilli(sent.UnixMilli())
	if took := at.Sub(sent); took < 5*time.Second || took > 6500*time.Millisecond {
		t.Fatalf("level 2 arrived after %v, want [5s, 6.5s]", took)
	}
	if string(m.Body) != "level-2" || m.GetProperty(primitive.PropertyDelayTimeLevel) != "" {
		t.Fatalf("delivered %q with DELAY=%q", m.Body, m.GetProperty(primitive.PropertyDelayTimeLevel))
	}
}

// TestGoClientTimerMessage: TIMER_DELIVER_MS = now + 3 s arrives on time
// (not before, within 1 s after).
func TestGoClientTimerMessage(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	c.createTopic(topic, 1)
	p := c.newProducer()
	got := warmConsumer(t, c, topic, p)
	due := time.Now().Add(3 * time.Second)
	msg := primitive.NewMessage(topic, []byte("timer"))
	msg.WithDelayTimestamp(due)
	if _, err := p.SendSync(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the timer message", func() bool { return got.len() >= 2 })
	m, at := got.get(1)
	// The client sends the due time in whole milliseconds
	// (TIMER_DELIVER_MS): that millisecond is what may not be early.
	due = time.UnixMilli(due.UnixMilli())
	if early := due.Sub(at); early > 0 {
		t.Fatalf("arrived %v early", early)
	}
	if late := at.Sub(due); late > time.Second {
		t.Fatalf("arrived %v late", late)
	}
	if string(m.Body) != "timer" {
		t.Fatalf("delivered %q", m.Body)
	}
}

// TestGoClientTimerRefusals: a delay beyond timerMaxDelaySec, or any timer
// message with timerWheelEnable=false, is refused (MESSAGE_ILLEGAL).
func TestGoClientTimerRefusals(t *testing.T) {
	t.Parallel()
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.TimerMaxDelaySec = 60 })
	topic := uniq(t, "T")
	c.createTopic(topic, 1)
	p := c.newProducer()
	msg := primitive.NewMessage(topic, []byte("too far"))
	msg.WithDelayTimestamp(time.Now().Add(2 * time.Minute))
	if _, err := p.SendSync(context.Background(), msg); err == nil || !strings.Contains(err.Error(), "timerMaxDelaySec") {
		t.Fatalf("send beyond the max delay: %v", err)
	}
	msg = primitive.NewMessage(topic, []byte("near"))
	msg.WithDelayTimestamp(time.Now().Add(30 * time.Second))
	if _, err := p.SendSync(context.Background(), msg); err != nil {
		t.Fatalf("send within the max delay: %v", err)
	}
}
