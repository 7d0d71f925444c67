package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
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
	sel := consumer.MessageSelector{Type: consumer.TAG, Expression: expr}
	err = pc.Subscribe(topic, sel, func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		rec.add(ms...)
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		c.t.Fatal(err)
	}
	var once sync.Once
	stop := func() error {
		var err error
		once.Do(func() { err = pc.Shutdown() })
		return err
	}
	c.t.Cleanup(func() { _ = stop() })
	return shutdowner(stop)
}

type shutdowner func() error

func (s shutdowner) Shutdown() error { return s() }

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
	waitFor(t, 30*time.Second, "all messages", func() bool { return rec.len() == n })
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
