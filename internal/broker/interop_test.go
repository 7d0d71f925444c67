package broker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/proc"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func init() { rlog.SetLogLevel("error") }

// newProducer starts an official Go client producer on the cluster.
func (c *cluster) newProducer(opts ...producer.Option) interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
	SendAsync(context.Context, func(context.Context, *primitive.SendResult, error), ...*primitive.Message) error
	SendOneWay(context.Context, ...*primitive.Message) error
	Shutdown() error
} {
	c.t.Helper()
	all := append([]producer.Option{
		producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName(uniq(c.t, "pg")),
		producer.WithInstanceName(uniq(c.t, "p")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5 * time.Second),
	}, opts...)
	p, err := producer.NewDefaultProducer(all...)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// received collects what a push consumer got, keyed by message body.
type received struct {
	mu   sync.Mutex
	msgs map[string]*primitive.MessageExt
	dups int
	seq  []*primitive.MessageExt
}

func newReceived() *received { return &received{msgs: map[string]*primitive.MessageExt{}} }

func (r *received) add(ms ...*primitive.MessageExt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range ms {
		if _, dup := r.msgs[string(m.Body)]; dup {
			r.dups++
		}
		r.msgs[string(m.Body)] = m
		r.seq = append(r.seq, m)
	}
}

func (r *received) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

// describe lists what r received, in order, as body@broker/queue/offset.
func (r *received) describe() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, m := range r.seq {
		fmt.Fprintf(&b, "%s@%s/%d/%d ", m.Body, m.Queue.BrokerName, m.Queue.QueueId, m.QueueOffset)
	}
	return b.String()
}

func (r *received) get(body string) (*primitive.MessageExt, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.msgs[body]
	return m, ok
}

// newPushConsumer starts a clustering push consumer of group on topic with
// the tag expression expr, collecting into rec.
func (c *cluster) newPushConsumer(group, topic, expr string, rec *received, opts ...consumer.Option) interface{ Shutdown() error } {
	c.t.Helper()
	return c.startPushConsumer(group, topic, expr, func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		rec.add(ms...)
		return consumer.ConsumeSuccess, nil
	}, opts...)
}

// startPushConsumer starts a clustering push consumer of group (its own
// client instance, from the first offset) on topic with the tag expression
// expr and the callback cb; opts come after the defaults. The test's
// cleanup shuts it down, as does the returned Shutdown (once).
func (c *cluster) startPushConsumer(group, topic, expr string,
	cb func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error), opts ...consumer.Option) interface{ Shutdown() error } {
	c.t.Helper()
	all := append([]consumer.Option{
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName(group),
		consumer.WithInstance(uniq(c.t, "c")),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}, opts...)
	pc, err := consumer.NewPushConsumer(all...)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: expr}, cb); err != nil {
		c.t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		c.t.Fatal(err)
	}
	started := time.Now()
	var once sync.Once
	stop := func() error {
		var err error
		once.Do(func() { err = shutdownSettled(pc, started) })
		return err
	}
	c.t.Cleanup(func() {
		c.quietGroup(group)
		_ = stop()
	})
	return pushConsumer{stop: stop, persist: pc.PersistConsumerOffset}
}

// quietGroup turns NOTIFY_CONSUMER_IDS_CHANGED off for group before the
// tests' cleanup shuts its consumers down. rocketmq-client-go races with
// itself (-race reports it) when Shutdown overlaps a rebalance, and a
// consumer leaving makes the broker notify the ones that stay, which then
// rebalance while their own cleanup shuts them down. A broker already
// stopped has nobody to notify: errors are ignored.
func (c *cluster) quietGroup(group string) {
	if c.b == nil {
		return
	}
	gc := protocol.NewSubscriptionGroupConfig(group)
	gc.NotifyConsumerIdsChangedEnable = false
	body, err := protocol.MarshalFastJSON(&gc)
	if err != nil {
		c.t.Error(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = c.rc.Invoke(ctx, c.b.Addr(), remoting.NewRequest(protocol.UpdateAndCreateSubscriptionGroup, nil, body))
}

// consumerSettle is the least time a push consumer runs before the tests
// shut it down (see shutdownSettled).
const consumerSettle = 500 * time.Millisecond

// shutdownSettled shuts down a Go client consumer started at started, no
// sooner than consumerSettle after it. rocketmq-client-go races with itself
// (-race reports it) when Shutdown overlaps a rebalance: Shutdown writes
// rmqClient.close, InvokeSync reads it. The broker's
// NOTIFY_CONSUMER_IDS_CHANGED for the consumer's own registration (Java
// sends it too) starts such a rebalance a few milliseconds after Start, and
// a fast test can be over by then.
func shutdownSettled(pc interface{ Shutdown() error }, started time.Time) error {
	if wait := consumerSettle - time.Since(started); wait > 0 {
		time.Sleep(wait)
	}
	return pc.Shutdown()
}

// pushConsumer is a started Go client push consumer: Shutdown (once),
// and PersistConsumerOffset for tests that read its progress.
type pushConsumer struct {
	stop, persist func() error
}

func (p pushConsumer) Shutdown() error              { return p.stop() }
func (p pushConsumer) PersistConsumerOffset() error { return p.persist() }

func TestGoClientSendAndConsume(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	c.createTopic(topic, 4)
	p := c.newProducer()
	const n = 20
	for i := range n {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("sync-%d", i)))
		m.WithTag("TagA")
		m.WithKeys([]string{fmt.Sprintf("key-%d", i)})
		m.WithProperty("color", "blue")
		res, err := p.SendSync(context.Background(), m)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if res.Status != primitive.SendOK || len(res.OffsetMsgID) != 32 {
			t.Fatalf("send %d: %+v", i, res)
		}
	}
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 30*time.Second, "all messages", func() bool { return rec.len() == n })
	for i := range n {
		m, ok := rec.get(fmt.Sprintf("sync-%d", i))
		if !ok {
			t.Fatalf("message %d missing", i)
		}
		if m.GetTags() != "TagA" || m.GetKeys() != fmt.Sprintf("key-%d", i) || m.GetProperty("color") != "blue" {
			t.Fatalf("message %d: tags %q keys %q color %q", i, m.GetTags(), m.GetKeys(), m.GetProperty("color"))
		}
	}
}

// sendN sends n messages "prefix-i" with tag and returns the bodies.
func sendN(t *testing.T, p interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
}, topic, prefix, tag string, n int) []string {
	t.Helper()
	bodies := make([]string, n)
	for i := range n {
		bodies[i] = fmt.Sprintf("%s-%d", prefix, i)
		m := primitive.NewMessage(topic, []byte(bodies[i]))
		if tag != "" {
			m.WithTag(tag)
		}
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatalf("send %s: %v", bodies[i], err)
		}
	}
	return bodies
}

func TestGoClientAsyncOnewayAndBatch(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	c.createTopic(topic, 4)
	p := c.newProducer()
	var want []string

	// Async: every callback reports success.
	const n = 10
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		body := fmt.Sprintf("async-%d", i)
		want = append(want, body)
		wg.Add(1)
		err := p.SendAsync(context.Background(), func(_ context.Context, r *primitive.SendResult, err error) {
			defer wg.Done()
			if err == nil && r.Status != primitive.SendOK {
				err = fmt.Errorf("status %v", r.Status)
			}
			errs <- err
		}, primitive.NewMessage(topic, []byte(body)))
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("async send: %v", err)
		}
	}
	// Oneway.
	for i := range n {
		body := fmt.Sprintf("oneway-%d", i)
		want = append(want, body)
		if err := p.SendOneWay(context.Background(), primitive.NewMessage(topic, []byte(body))); err != nil {
			t.Fatal(err)
		}
	}
	// Batch: one SEND_BATCH_MESSAGE.
	var batch []*primitive.Message
	for i := range n {
		body := fmt.Sprintf("batch-%d", i)
		want = append(want, body)
		m := primitive.NewMessage(topic, []byte(body)).WithTag("B")
		m.WithProperty("idx", fmt.Sprint(i))
		batch = append(batch, m)
	}
	res, err := p.SendSync(context.Background(), batch...)
	if err != nil || res.Status != primitive.SendOK {
		t.Fatalf("batch: %v %+v", err, res)
	}

	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 30*time.Second, "all messages", func() bool { return rec.len() == len(want) })
	for _, body := range want {
		m, ok := rec.get(body)
		if !ok {
			t.Fatalf("%s missing", body)
		}
		if idx := m.GetProperty("idx"); strings.HasPrefix(body, "batch-") && (m.GetTags() != "B" || "batch-"+idx != body) {
			t.Fatalf("%s: tag %q idx %q", body, m.GetTags(), idx)
		}
	}
	if rec.dups != 0 {
		t.Fatalf("%d duplicates", rec.dups)
	}
}

func TestGoClientTagFilter(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	c.createTopic(topic, 2)
	p := c.newProducer()
	a := sendN(t, p, topic, "a", "A", 5)
	b := sendN(t, p, topic, "b", "B", 5)
	sendN(t, p, topic, "c", "C", 5)
	sendN(t, p, topic, "none", "", 5)
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "A || B", rec)
	wait.For(t, 30*time.Second, "A and B messages", func() bool { return rec.len() >= 10 })
	for _, body := range append(a, b...) {
		if _, ok := rec.get(body); !ok {
			t.Fatalf("%s missing", body)
		}
	}
	if n := rec.len(); n != 10 {
		t.Fatalf("received %d messages, want 10 (A and B only)", n)
	}
	// The Go client filters by tag again itself, so the listener never
	// sees what the broker let through wrongly: pull every queue directly
	// with the consumer's expression and check what the broker answers.
	var tags []string
	raw := uniq(t, "raw")
	for q := range int32(2) {
		for offset := int64(0); ; {
			h := protocol.PullMessageRequestHeader{ConsumerGroup: raw, Topic: topic, QueueID: q, QueueOffset: offset,
				MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: "A || B", ExpressionType: "TAG"}
			r := c.invoke(c.b.Addr(), protocol.PullMessage, &h, nil)
			if r.Code != protocol.Success {
				break // past the end (or nothing matched to the end)
			}
			var ph protocol.PullMessageResponseHeader
			if err := ph.Decode(r.ExtFields); err != nil {
				t.Fatal(err)
			}
			var sc message.Scanner
			for sc.Reset(r.Body); sc.Next(); {
				tag, _ := message.Property(sc.Record().Properties, message.PropertyTags)
				tags = append(tags, tag)
			}
			if ph.NextBeginOffset <= offset {
				break
			}
			offset = ph.NextBeginOffset
		}
	}
	slices.Sort(tags)
	if want := slices.Repeat([]string{"A"}, 5); len(tags) != 10 || !slices.Equal(tags[:5], want) || tags[5] != "B" || tags[9] != "B" {
		t.Fatalf("the broker's answers to A || B hold tags %q, want five A and five B", tags)
	}
}

func TestGoClientTwoGroupsEachGetEverything(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	c.createTopic(topic, 4)
	p := c.newProducer()
	bodies := sendN(t, p, topic, "m", "", 20)
	r1, r2 := newReceived(), newReceived()
	c.newPushConsumer(uniq(t, "g1"), topic, "*", r1)
	c.newPushConsumer(uniq(t, "g2"), topic, "*", r2)
	wait.For(t, 30*time.Second, "both groups", func() bool { return r1.len() == len(bodies) && r2.len() == len(bodies) })
}

func TestGoClientTwoConsumersSplitQueues(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	const queues = 4
	c.createTopic(topic, queues)
	p := c.newProducer(producer.WithQueueSelector(producer.NewManualQueueSelector()))
	group := uniq(t, "cg")
	r1, r2 := newReceived(), newReceived()
	c.newPushConsumer(group, topic, "*", r1)
	c.newPushConsumer(group, topic, "*", r2)

	// sendRound sends one message to each queue and returns the bodies.
	round := 0
	sendRound := func() []string {
		var bodies []string
		for q := range queues {
			body := fmt.Sprintf("r%d-q%d", round, q)
			m := primitive.NewMessage(topic, []byte(body))
			m.Queue = &primitive.MessageQueue{Topic: topic, BrokerName: "broker-a", QueueId: q}
			if _, err := p.SendSync(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, body)
		}
		round++
		return bodies
	}
	// owner reports which consumer got body (0 none, 1, 2, 3 both).
	owner := func(body string) int {
		o := 0
		if _, ok := r1.get(body); ok {
			o |= 1
		}
		if _, ok := r2.get(body); ok {
			o |= 2
		}
		return o
	}
	// Rebalancing settles when a round is split two queues each, each
	// message delivered once.
	deadline := time.Now().Add(40 * time.Second)
	for {
		bodies := sendRound()
		var got [4]int
		wait.For(t, 10*time.Second, "a round", func() bool {
			for _, b := range bodies {
				if owner(b) == 0 {
					return false
				}
			}
			return true
		})
		for _, b := range bodies {
			got[owner(b)]++
		}
		if got[1] == queues/2 && got[2] == queues/2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumers never split the queues: last round %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Now every message goes to exactly one consumer, each of them half.
	var all []string
	for range 5 {
		all = append(all, sendRound()...)
	}
	wait.For(t, 20*time.Second, "the messages", func() bool {
		for _, b := range all {
			if owner(b) == 0 {
				return false
			}
		}
		return true
	})
	var n1, n2 int
	for _, b := range all {
		switch owner(b) {
		case 1:
			n1++
		case 2:
			n2++
		default:
			t.Fatalf("%s delivered to both consumers", b)
		}
	}
	if n1 != len(all)/2 || n2 != len(all)/2 {
		t.Fatalf("split %d/%d, want %d each", n1, n2, len(all)/2)
	}
}

func TestGoClientOffsetsSurviveRestart(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	const queues = 2
	c.createTopic(topic, queues)
	group := uniq(t, "cg")
	p := c.newProducer()
	first := sendN(t, p, topic, "before", "", 10)
	rec := newReceived()
	cons := c.newPushConsumer(group, topic, "*", rec)
	wait.For(t, 30*time.Second, "first messages", func() bool { return rec.len() == len(first) })
	if err := cons.Shutdown(); err != nil {
		t.Fatal(err)
	}
	// The consumer persisted its offsets at shutdown (or at its 5 s timer).
	wait.For(t, 20*time.Second, "committed offsets", func() bool {
		var sum int64
		for q := range int32(queues) {
			r := c.invoke(c.b.Addr(), protocol.QueryConsumerOffset,
				&protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q}, nil)
			if r.Code != protocol.Success {
				return false
			}
			var h protocol.OffsetResponseHeader
			if err := h.Decode(r.ExtFields); err != nil {
				t.Fatal(err)
			}
			sum += h.Offset
		}
		return sum == int64(len(first))
	})

	c.stopBroker()
	c.startBroker() // a new port: clients learn it from the NameServer
	c.waitRoute(topic, queues)

	p2 := c.newProducer()
	second := sendN(t, p2, topic, "after", "", 10)
	rec2 := newReceived()
	cons2 := c.newPushConsumer(group, topic, "*", rec2)
	wait.For(t, 30*time.Second, "second messages", func() bool { return rec2.len() >= len(second) })
	// Everything stored has been through the listener: a replay would
	// have been received.
	wait.For(t, 30*time.Second, "the consumer at the end of every queue", func() bool {
		return c.consumedAll(cons2, group, topic, queues)
	})
	if n := rec2.len(); n != len(second) {
		t.Fatalf("after restart received %d messages, want only the %d new ones", n, len(second))
	}
	for _, b := range second {
		if _, ok := rec2.get(b); !ok {
			t.Fatalf("%s missing", b)
		}
	}
}

func TestGoClientOrderly(t *testing.T) {
	if raceEnabled {
		// rocketmq-client-go's processQueue is written by the pull
		// goroutine and read by the orderly consume goroutine without a
		// lock, which -race reports. Run this test in a build without the
		// race detector instead of skipping it.
		proc.RerunWithoutRace(t)
		return
	}
	c := startCluster(t, nil)
	topic := uniq(t, "T")
	c.createTopic(topic, 4)
	p := c.newProducer(producer.WithQueueSelector(producer.NewHashQueueSelector()))
	const n = 50
	for i := range n {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("order-%03d", i)))
		m.WithShardingKey("order-key-1")
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	rec := newReceived()
	// Shorter lockAll period: the client starts consuming a newly assigned
	// queue only after its next lock round (go-client-wire.md §0 item 15).
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec,
		consumer.WithConsumerOrder(true), consumer.WithRebalanceLockInterval(200*time.Millisecond))
	wait.For(t, 40*time.Second, "ordered messages", func() bool { return rec.len() == n })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, m := range rec.seq[:n] {
		if want := fmt.Sprintf("order-%03d", i); string(m.Body) != want {
			t.Fatalf("message %d is %q, want %q", i, m.Body, want)
		}
	}
}

func TestGoClientLargeMessages(t *testing.T) {
	const maxSize = 2 << 20
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.MaxMessageSize = maxSize })
	topic := uniq(t, "T")
	c.createTopic(topic, 1)
	p := c.newProducer()

	// 1 MiB of incompressible bytes (the client zlib-compresses bodies
	// over 4 KiB; the broker stores and returns them as sent).
	big := make([]byte, 1<<20)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rnd.Uint32())
	}
	if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, big)); err != nil {
		t.Fatalf("1 MiB: %v", err)
	}
	// Over maxMessageSize: refused by the broker (the Go client has no
	// local size check).
	huge := make([]byte, maxSize+1024)
	for i := range huge {
		huge[i] = byte(rnd.Uint32())
	}
	_, err := p.SendSync(context.Background(), primitive.NewMessage(topic, huge))
	if err == nil || !strings.Contains(err.Error(), "CODE: 13") || !strings.Contains(err.Error(), "maxMessageSize") {
		t.Fatalf("oversized message: %v", err)
	}
	// The same through rocketd's own client, header and all.
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli()}
	r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, make([]byte, maxSize+1))
	if r.Code != protocol.MessageIllegal || !strings.Contains(r.Remark, "exceeds maxMessageSize") {
		t.Fatalf("oversized via remoting: %d %q", r.Code, r.Remark)
	}
	if r.ExtFields["MSG_REGION"] == "" || r.ExtFields["TRACE_ON"] == "" {
		t.Fatalf("refusal without MSG_REGION/TRACE_ON: %v", r.ExtFields)
	}

	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 30*time.Second, "the 1 MiB message", func() bool { return rec.len() == 1 })
	if _, ok := rec.get(string(big)); !ok {
		t.Fatal("1 MiB message body changed")
	}
}

// TestGoClientAutoCreateTopic is the newcomer's path: a producer sends to a
// topic nobody created (the client falls back to TBW102's route, the broker
// creates the topic and re-registers), then a consumer finds its route.
func TestGoClientAutoCreateTopic(t *testing.T) {
	c := startCluster(t, nil)
	topic := uniq(t, "Auto")
	p := c.newProducer()
	bodies := sendN(t, p, topic, "auto", "", 8)
	c.waitRoute(topic, 4) // the Go client asks for 4 queues
	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 30*time.Second, "auto-created topic's messages", func() bool { return rec.len() == len(bodies) })
}
