package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/store"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// txnTune shortens the transaction timings: a half message is checked 1 s
// after it was born, in rounds every 300 ms, at most checkMax times.
func txnTune(checkMax int) func(*config.BrokerConfig) {
	return func(bc *config.BrokerConfig) {
		bc.TransactionTimeout = time.Second
		bc.TransactionCheckInterval = 300 * time.Millisecond
		bc.TransactionCheckMax = checkMax
	}
}

// txnListener decides a transaction by the message body's prefix:
//
//	commit-   local transaction commits
//	rollback- local transaction rolls back
//	uc-       unknown, then the check answers commit
//	ur-       unknown, then the check answers rollback
//	never-    unknown, and every check answers unknown
//
// It counts the checks per body. The "all" field overrides everything with
// one state (restart tests).
type txnListener struct {
	mu     sync.Mutex
	checks map[string]int
	all    primitive.LocalTransactionState // 0: by prefix
}

func newTxnListener() *txnListener { return &txnListener{checks: map[string]int{}} }

func (l *txnListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	l.mu.Lock()
	all := l.all
	l.mu.Unlock()
	if all != 0 {
		return all
	}
	switch b := string(m.Body); {
	case strings.HasPrefix(b, "commit-"):
		return primitive.CommitMessageState
	case strings.HasPrefix(b, "rollback-"):
		return primitive.RollbackMessageState
	default:
		return primitive.UnkonwnState
	}
}

func (l *txnListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := string(m.Body)
	l.checks[b]++
	if l.all != 0 {
		return l.all
	}
	switch {
	case strings.HasPrefix(b, "uc-"):
		return primitive.CommitMessageState
	case strings.HasPrefix(b, "ur-"):
		return primitive.RollbackMessageState
	default:
		return primitive.UnkonwnState
	}
}

func (l *txnListener) checkCount(body string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checks[body]
}

func (l *txnListener) setAll(s primitive.LocalTransactionState) {
	l.mu.Lock()
	l.all = s
	l.mu.Unlock()
}

type txnProducer interface {
	SendMessageInTransaction(context.Context, *primitive.Message) (*primitive.TransactionSendResult, error)
	Shutdown() error
}

// newTxnProducer starts an official Go client transaction producer of
// group, sends one committed message "warm-<instance>" to topic (so the
// client knows the broker before its first heartbeat, 1 s after start) and
// waits until the broker has the group's connection: check-backs need it.
func (c *cluster) newTxnProducer(group, topic string, l *txnListener) txnProducer {
	c.t.Helper()
	return c.newTxnProducerOn(c.b.Addr(), group, topic, l)
}

// newTxnProducerOn is newTxnProducer for the broker at brokerAddr.
func (c *cluster) newTxnProducerOn(brokerAddr, group, topic string, l *txnListener) txnProducer {
	c.t.Helper()
	inst := uniq(c.t, "tp")
	p, err := producer.NewTransactionProducer(l,
		producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName(group),
		producer.WithInstanceName(inst),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
	)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		c.t.Fatal(err)
	}
	var once sync.Once
	stop := func() error {
		var err error
		once.Do(func() { err = p.Shutdown() })
		return err
	}
	c.t.Cleanup(func() { _ = stop() })
	warm := primitive.NewMessage(topic, []byte("warm-"+inst))
	l.mu.Lock()
	prev := l.all
	l.mu.Unlock()
	l.setAll(primitive.CommitMessageState)
	if res, err := p.SendMessageInTransaction(context.Background(), warm); err != nil || res.State != primitive.CommitMessageState {
		c.t.Fatalf("warm-up transaction: %v %+v", err, res)
	}
	l.setAll(prev)
	c.waitProducer(brokerAddr, group)
	return txnProducerFuncs{p, stop}
}

type txnProducerFuncs struct {
	txnProducer
	stop func() error
}

func (t txnProducerFuncs) Shutdown() error { return t.stop() }

// waitProducer waits until the broker lists a connection of group (the
// client's heartbeat arrived).
func (c *cluster) waitProducer(brokerAddr, group string) {
	c.t.Helper()
	wait.For(c.t, 40*time.Second, "producer heartbeat of "+group, func() bool {
		r := c.invoke(brokerAddr, protocol.GetProducerConnectionList,
			&protocol.GetProducerConnectionListRequestHeader{ProducerGroup: group}, nil)
		return r.Code == protocol.Success
	})
}

// sendTxn sends body in a transaction and checks the send result.
func sendTxn(t *testing.T, p txnProducer, topic, body string, want primitive.LocalTransactionState) {
	t.Helper()
	res, err := p.SendMessageInTransaction(context.Background(), primitive.NewMessage(topic, []byte(body)))
	if err != nil {
		t.Fatalf("send %s: %v", body, err)
	}
	if res.Status != primitive.SendOK || res.State != want || len(res.OffsetMsgID) != 32 {
		t.Fatalf("send %s: status %v state %v offsetMsgId %q", body, res.Status, res.State, res.OffsetMsgID)
	}
}

// queueBodies reads every message of topic's queues from the store and
// counts them by body.
func queueBodies(t *testing.T, s *store.Store, topic string, queues int32) map[string]int {
	t.Helper()
	got := map[string]int{}
	for q := range queues {
		for off := s.MinOffset(topic, q); off < s.MaxOffset(topic, q); {
			res, err := s.GetMessage("test", topic, q, off, 32, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != store.Found {
				res.Release()
				t.Fatalf("read %s/%d@%d: %v", topic, q, off, res.Status)
			}
			for _, m := range res.Messages {
				r := primitive.DecodeMessage(m.Bytes)
				if len(r) != 1 {
					t.Fatalf("decode %s/%d@%d: %d messages", topic, q, m.QueueOffset, len(r))
				}
				got[string(r[0].Body)]++
			}
			off = res.NextBeginOffset
			res.Release()
		}
	}
	return got
}

func TestGoClientTransactions(t *testing.T) {
	const checkMax = 3
	c := startCluster(t, txnTune(checkMax))
	topic := uniq(t, "T")
	c.createTopic(topic, 2)
	group := uniq(t, "tg")
	l := newTxnListener()
	p := c.newTxnProducer(group, topic, l)

	sendTxn(t, p, topic, "commit-1", primitive.CommitMessageState)
	sendTxn(t, p, topic, "rollback-1", primitive.RollbackMessageState)
	sendTxn(t, p, topic, "uc-1", primitive.UnkonwnState)
	sendTxn(t, p, topic, "ur-1", primitive.UnkonwnState)
	sendTxn(t, p, topic, "never-1", primitive.UnkonwnState)

	rec := newReceived()
	c.newPushConsumer(uniq(t, "cg"), topic, "*", rec)
	wait.For(t, 30*time.Second, "committed messages", func() bool {
		_, a := rec.get("commit-1")
		_, b := rec.get("uc-1")
		return a && b
	})
	m, _ := rec.get("commit-1")
	if m.GetProperty(primitive.PropertyTransactionPrepared) != "true" || m.TransactionId == "" {
		t.Fatalf("committed message: TRAN_MSG %q transactionId %q", m.GetProperty(primitive.PropertyTransactionPrepared), m.TransactionId)
	}

	// "never-1" is checked checkMax times, then parked.
	wait.For(t, 30*time.Second, "never-1 in "+meta.TransCheckMaxTopic, func() bool {
		return queueBodies(t, c.b.Store(), meta.TransCheckMaxTopic, 1)["never-1"] == 1
	})
	if n := l.checkCount("never-1"); n != checkMax {
		t.Fatalf("never-1 checked %d times, want %d", n, checkMax)
	}
	// A check answered by the client after the next round started is asked
	// again (the answer is then a repeat the broker ignores): at least one.
	if l.checkCount("uc-1") < 1 || l.checkCount("ur-1") < 1 || l.checkCount("commit-1") != 0 || l.checkCount("rollback-1") != 0 {
		t.Fatalf("checks: %v", l.checks)
	}
	// A few more rounds: nothing else shows up, nothing is checked again.
	waitCheckRounds(t, c.b, 5)
	got := queueBodies(t, c.b.Store(), topic, 2)
	want := map[string]int{"commit-1": 1, "uc-1": 1}
	for b, n := range got {
		if strings.HasPrefix(b, "warm-") {
			continue
		}
		if want[b] != n {
			t.Fatalf("stored in %s: %v, want %v (and the warm-up)", topic, got, want)
		}
	}
	if len(got) != len(want)+1 {
		t.Fatalf("stored in %s: %v, want %v (and the warm-up)", topic, got, want)
	}
	for _, b := range []string{"rollback-1", "ur-1", "never-1"} {
		if _, ok := rec.get(b); ok {
			t.Fatalf("%s delivered", b)
		}
	}
	if rec.dups != 0 {
		t.Fatalf("%d duplicate deliveries", rec.dups)
	}
	if n := l.checkCount("never-1"); n != checkMax {
		t.Fatalf("never-1 checked %d times after being parked", n)
	}
}

func TestTransactionRejected(t *testing.T) {
	c := startCluster(t, func(bc *config.BrokerConfig) { bc.RejectTransactionMessage = true })
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: 0, SysFlag: 4, BornTimestamp: time.Now().UnixMilli(),
		Properties: "TRAN_MSG\x01true\x02PGROUP\x01pg"}
	r := c.invoke(c.b.Addr(), protocol.SendMessage, &h, []byte("x"))
	if r.Code != protocol.NoPermission {
		t.Fatalf("half message with rejectTransactionMessage: %d %s", r.Code, r.Remark)
	}
}

// startBrokerAt starts the broker again on addr (the address the clients
// and the NameServer already know).
//
// The ports are taken again after they were released: another process's
// outgoing connection may hold one of them (the HA port, listenPort+1, is
// no listener's reservation) for a moment, so a bind failure is retried.
func (c *cluster) startBrokerAt(addr string) {
	c.t.Helper()
	wait.For(c.t, 10*time.Second, "the broker's ports to be free again", func() bool {
		b, err := broker.Start(broker.Config{Broker: c.brokerConfig(), ListenAddr: addr})
		if err != nil {
			if !errors.Is(err, syscall.EADDRINUSE) {
				c.t.Fatal(err)
			}
			return false
		}
		c.b = b
		return true
	})
}

// Half messages whose producer said "unknown" (each checked at least once
// and so re-appended), a clean broker restart, then a producer of the same
// group that answers commit: each is stored in the real topic exactly once,
// none is parked.
func TestGoClientTransactionsAcrossRestart(t *testing.T) {
	c := startCluster(t, txnTune(50))
	topic := uniq(t, "T")
	c.createTopic(topic, 2)
	group := uniq(t, "tg")
	l := newTxnListener()
	l.setAll(primitive.UnkonwnState)
	p := c.newTxnProducer(group, topic, l)
	const n = 5
	for i := range n {
		sendTxn(t, p, topic, fmt.Sprintf("half-%d", i), primitive.UnkonwnState)
	}
	wait.For(t, 20*time.Second, "a check of every half message", func() bool {
		for i := range n {
			if l.checkCount(fmt.Sprintf("half-%d", i)) == 0 {
				return false
			}
		}
		return true
	})
	// The first producer stays up (shutting the Go client down while it
	// answers a check is a data race of the client's own); its connection
	// to the old process closes with it, and it keeps answering "unknown"
	// should it be asked again.
	addr := c.b.Addr()
	c.stopBroker()
	c.startBrokerAt(addr)
	c.waitRoute(topic, 2)

	l2 := newTxnListener()
	l2.setAll(primitive.CommitMessageState)
	c.newTxnProducer(group, topic, l2)
	wait.For(t, 30*time.Second, "every half message committed", func() bool {
		got := queueBodies(t, c.b.Store(), topic, 2)
		for i := range n {
			if got[fmt.Sprintf("half-%d", i)] == 0 {
				return false
			}
		}
		return true
	})
	waitCheckRounds(t, c.b, 5) // more rounds: a second commit would show by now
	got := queueBodies(t, c.b.Store(), topic, 2)
	for i := range n {
		if b := fmt.Sprintf("half-%d", i); got[b] != 1 {
			t.Fatalf("%s stored %d times: %v", b, got[b], got)
		}
	}
	if parked := queueBodies(t, c.b.Store(), meta.TransCheckMaxTopic, 1); len(parked) != 0 {
		t.Fatalf("parked: %v", parked)
	}
}

// waitCheckRounds waits until the broker's check-back has finished n more
// rounds, so that what a round could do wrong (check a settled message
// again, commit it twice) has had n chances; a stalled check-back fails
// the wait instead of passing an empty sleep.
func waitCheckRounds(t *testing.T, b *broker.Broker, n int64) {
	t.Helper()
	from := broker.TxnCheckRounds(b)
	wait.For(t, 30*time.Second, fmt.Sprintf("%d more transaction check rounds", n), func() bool { return broker.TxnCheckRounds(b) >= from+n })
}
