package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/rocketd/rocketd/bench/internal/child"
)

// ack is where the broker said (SEND_OK) it stored a message.
type ack struct {
	queueID     int
	queueOffset int64
	offsetMsgID string
	cycle       int
}

// ledger records every send of the run: the acknowledged ones by key with
// their position, the others by key (they may or may not be stored) and by
// outcome per cycle.
type ledger struct {
	mu        sync.Mutex
	acked     map[string]ack
	notAcked  map[string]string         // key -> outcome
	outcomes  map[int]map[string]int    // cycle -> outcome -> count; "SEND_OK" included
	firstOK   map[int]time.Time         // cycle -> the first SEND_OK after markFault
	faultMark map[int]time.Time         // cycle -> when the fault was cleared
	refused   map[int]time.Time         // cycle -> the first refusal after the fault began
	faultOn   map[int]time.Time         // cycle -> when the fault began
	errSample map[int]map[string]string // cycle -> outcome -> one full error text
}

func newLedger() *ledger {
	return &ledger{acked: map[string]ack{}, notAcked: map[string]string{}, outcomes: map[int]map[string]int{},
		firstOK: map[int]time.Time{}, faultMark: map[int]time.Time{}, refused: map[int]time.Time{},
		faultOn: map[int]time.Time{}, errSample: map[int]map[string]string{}}
}

func (l *ledger) record(cycle int, key string, start time.Time, r *primitive.SendResult, err error) {
	outcome := sendOutcome(r, err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.outcomes[cycle] == nil {
		l.outcomes[cycle] = map[string]int{}
		l.errSample[cycle] = map[string]string{}
	}
	l.outcomes[cycle][outcome]++
	if outcome != "SEND_OK" {
		l.notAcked[key] = outcome
		if err != nil && l.errSample[cycle][outcome] == "" {
			l.errSample[cycle][outcome] = err.Error()
		}
		if on, ok := l.faultOn[cycle]; ok && !start.Before(on) {
			if _, seen := l.refused[cycle]; !seen {
				l.refused[cycle] = time.Now()
			}
		}
		return
	}
	l.acked[key] = ack{queueID: r.MessageQueue.QueueId, queueOffset: r.QueueOffset, offsetMsgID: r.OffsetMsgID, cycle: cycle}
	if m, ok := l.faultMark[cycle]; ok && !start.Before(m) {
		if _, seen := l.firstOK[cycle]; !seen {
			l.firstOK[cycle] = time.Now()
		}
	}
}

// markFault notes when the fault of cycle began: a refusal of a send that
// started after it counts as "the broker refused" (refusedSince).
func (l *ledger) markFault(cycle int, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faultOn[cycle] = t
}

// refusedSince returns when the first send begun after the fault was
// refused.
func (l *ledger) refusedSince(cycle int) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.refused[cycle]
	return t, ok
}

// markCleared notes when the fault of cycle was cleared: the first SEND_OK
// of a send begun after it is the load's recovery.
func (l *ledger) markCleared(cycle int, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faultMark[cycle] = t
}

// loadRecovery is the time from the clearing of the fault to the load's
// first SEND_OK, if there was one.
func (l *ledger) loadRecovery(cycle int) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok, seen := l.firstOK[cycle]
	if !seen {
		return 0, false
	}
	return ok.Sub(l.faultMark[cycle]), true
}

// sendOutcome names a send's result: SEND_OK, the non-OK statuses by their
// Java names, or the error reduced to its kind.
func sendOutcome(r *primitive.SendResult, err error) string {
	if err != nil {
		s := err.Error()
		switch {
		case strings.Contains(s, "CODE: "):
			code, _, _ := strings.Cut(s[strings.Index(s, "CODE: ")+6:], ",")
			return "error code " + strings.TrimSpace(code)
		case strings.Contains(s, "timeout") || strings.Contains(s, "deadline"):
			return "error timeout"
		case strings.Contains(s, "connection refused"):
			return "error connection refused"
		case strings.Contains(s, "EOF") || strings.Contains(s, "reset by peer") || strings.Contains(s, "broken pipe"):
			return "error connection lost"
		}
		return "error other"
	}
	switch r.Status {
	case primitive.SendOK:
		return "SEND_OK"
	case primitive.SendFlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	case primitive.SendFlushSlaveTimeout:
		return "FLUSH_SLAVE_TIMEOUT"
	case primitive.SendSlaveNotAvailable:
		return "SLAVE_NOT_AVAILABLE"
	}
	return fmt.Sprintf("status %d", r.Status)
}

// loadGen is the official Go client's producer, shared by the workers.
type loadGen struct {
	p        rocketmq.Producer
	topic    string
	workers  int
	bodySize int
	perCycle int // most messages a cycle sends
	led      *ledger
}

func newLoadGen(nsAddr, topic string, workers, bodySize, perCycle int, led *ledger) (*loadGen, error) {
	// No retries: a retried send that had been stored would be a duplicate
	// made by the client, not by the broker.
	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{nsAddr}), producer.WithGroupName("chaos_pg"),
		producer.WithRetry(0), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		return nil, err
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start producer: %w", err)
	}
	return &loadGen{p: p, topic: topic, workers: workers, bodySize: bodySize, perCycle: perCycle, led: led}, nil
}

func (g *loadGen) close() error { return g.p.Shutdown() }

// start begins cycle's load; the returned function stops it and waits for
// the sends in flight (each ends within the client's send timeout).
func (g *loadGen) start(cycle int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for w := range g.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				mu.Lock()
				if sent >= g.perCycle {
					mu.Unlock()
					return
				}
				sent++
				mu.Unlock()
				key := fmt.Sprintf("c%03d-w%02d-%07d", cycle, w, i)
				msg := primitive.NewMessage(g.topic, child.Body(key, g.bodySize))
				msg.WithKeys([]string{key})
				start := time.Now()
				r, err := g.p.SendSync(context.Background(), msg)
				g.led.record(cycle, key, start, r, err)
				if err != nil {
					// The broker is down or refusing: do not spin.
					select {
					case <-ctx.Done():
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}
