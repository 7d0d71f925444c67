package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/rocketd/rocketd/bench/internal/child"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// ack is where the broker said (SEND_OK) it stored a message.
type ack struct {
	queueID     int
	queueOffset int64
	offsetMsgID string // store host and CommitLog offset
	at          time.Time
}

// ledger records the sends: acknowledged ones by key with their
// position, the others by key, and per cycle the count of each and the
// first SEND_OK of a send begun after the cycle's kill.
type ledger struct {
	mu       sync.Mutex
	acked    map[string]ack
	notAcked map[string]bool
	cycle    int
	killedAt time.Time
	firstOK  time.Time
	perCycle map[int][2]int // cycle -> {acknowledged, not}
}

func newLedger() *ledger {
	return &ledger{acked: map[string]ack{}, notAcked: map[string]bool{}, perCycle: map[int][2]int{}}
}

func (l *ledger) record(key string, begun time.Time, r *primitive.SendResult, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.perCycle[l.cycle]
	if err != nil || r.Status != primitive.SendOK {
		l.notAcked[key] = true
		n[1]++
		l.perCycle[l.cycle] = n
		return
	}
	n[0]++
	l.perCycle[l.cycle] = n
	l.acked[key] = ack{queueID: r.MessageQueue.QueueId, queueOffset: r.QueueOffset, offsetMsgID: r.OffsetMsgID, at: time.Now()}
	if !l.killedAt.IsZero() && l.firstOK.IsZero() && begun.After(l.killedAt) {
		l.firstOK = time.Now()
	}
}

// killed starts cycle's clock.
func (l *ledger) killed(cycle int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cycle, l.killedAt, l.firstOK = cycle, at, time.Time{}
}

// clientResume is the time from the kill to the Go client's first SEND_OK
// for a send begun after it.
func (l *ledger) clientResume() (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.firstOK.IsZero() {
		return 0, false
	}
	return l.firstOK.Sub(l.killedAt), true
}

// load is the official Go client's producer shared by the workers, which
// run until stop.
type load struct {
	p      rocketmq.Producer
	led    *ledger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startLoad(nsAddr string, workers, bodySize int, led *ledger) (*load, error) {
	// No retries: a duplicate is then the brokers' doing.
	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{nsAddr}), producer.WithGroupName("failover_pg"),
		producer.WithRetry(0), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		return nil, err
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start producer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &load{p: p, led: led, cancel: cancel}
	for w := range workers {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("w%02d-%08d", w, i)
				msg := primitive.NewMessage(topic, child.Body(key, bodySize))
				msg.WithKeys([]string{key})
				begun := time.Now()
				r, err := p.SendSync(context.Background(), msg)
				led.record(key, begun, r, err)
				if err != nil {
					select {
					case <-ctx.Done():
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		}()
	}
	return g, nil
}

func (g *load) stop() {
	g.cancel()
	g.wg.Wait()
	_ = g.p.Shutdown()
}

// probeWrite sends to FailoverProbe on the master the controller names,
// every 20 ms, until one is acknowledged by a master other than old; it
// returns when that happened.
func (c *cluster) probeWrite(ctx context.Context, old string, timeout time.Duration) (time.Time, string, error) {
	var at time.Time
	var by string
	err := poll(ctx, timeout, "a SEND_OK from the new master", func() (bool, error) {
		mi, err := c.replicaInfo(ctx)
		if err != nil || !mi.HasMaster || mi.MasterAddress == old {
			return false, nil
		}
		h := protocol.SendMessageRequestHeader{ProducerGroup: "failover_probe", Topic: "FailoverProbe", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli()}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		r, err := c.rc.Invoke(cctx, mi.MasterAddress, remoting.NewRequest(protocol.SendMessage, protocol.Ext(&h), []byte("probe")))
		if err == nil && r.Code == protocol.Success {
			at, by = time.Now(), mi.MasterAddress
			return true, nil
		}
		return false, nil
	})
	return at, by, err
}
