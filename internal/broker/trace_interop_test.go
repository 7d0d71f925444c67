package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

const traceTopic = "RMQ_SYS_TRACE_TOPIC"

// TestGoClientTraceFoundByMessageID: a Go client producer with tracing on
// sends its trace to RMQ_SYS_TRACE_TOPIC keyed by the message id, which
// QUERY_MESSAGE finds (what the dashboard's and mqadmin's
// QueryMsgTraceById do). The broker creates the topic at startup
// (traceTopicEnable): unlike Java's, the Go client's trace dispatcher does
// not fall back to TBW102's route, so it needs the topic to exist. Its
// trace client has a fixed instance name bound to the first NameServer it
// saw: one such test per process.
func TestGoClientTraceFoundByMessageID(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) {
		bc.MaxHashSlotNum, bc.MaxIndexNum = 4096, 40000
		bc.TraceTopicEnable = true
	})
	c.waitRoute(traceTopic, 1)
	topic := uniq(t, "Traced")
	c.createTopic(topic, 2)
	p := c.newProducer(producer.WithTrace(&primitive.TraceConfig{
		GroupName: uniq(t, "tg"), Access: primitive.Local, NamesrvAddrs: []string{c.nsAddr},
	}))
	m := primitive.NewMessage(topic, []byte("traced body"))
	m.WithKeys([]string{"traced-key"})
	res, err := p.SendSync(context.Background(), m)
	if err != nil || res.Status != primitive.SendOK {
		t.Fatalf("send: %v %+v", err, res)
	}
	wait.For(t, 30*time.Second, "the trace of "+res.MsgID, func() bool {
		return len(c.queryByKey(traceTopic, res.MsgID, false)) > 0
	})
}
