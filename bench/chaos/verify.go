package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/bench/internal/child"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// position is where a message was found: queue and queue offset.
type position struct {
	queueID     int
	queueOffset int64
}

// topicScan is everything one read of the topic found.
type topicScan struct {
	byKey     map[string][]position
	badBody   map[string]bool // a copy of the key whose body is not child.Body(key)
	minOffset []int64         // per queue
	maxOffset []int64
	messages  int
	holes     int // queue offsets in [min, max) that returned no message
	foreign   int // messages without a chaos key
}

// reader pulls a topic from the master with rocketd's remoting client:
// PULL_MESSAGE with its own subscription ("*"), no long polling.
type reader struct {
	rc       *remoting.Client
	addr     string
	topic    string
	queues   int
	bodySize int
}

func (r *reader) invoke(ctx context.Context, code int32, h interface{ AppendExt(map[string]string) }) (*remoting.Command, error) {
	// A broker that just restarted may drop the first call: retry a few
	// times before calling the read incomplete.
	var lastErr error
	for attempt := range 5 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := r.rc.Invoke(cctx, r.addr, remoting.NewRequest(code, protocol.Ext(h), nil))
		cancel()
		if err == nil && resp.Code != protocol.SystemError && resp.Code != protocol.ServiceNotAvailable {
			return resp, nil
		}
		if err == nil {
			err = fmt.Errorf("code %d: %s", resp.Code, resp.Remark)
		}
		lastErr = err
	}
	return nil, fmt.Errorf("request %d to %s: %w", code, r.addr, lastErr)
}

func (r *reader) queueOffset(ctx context.Context, code int32, qid int) (int64, error) {
	resp, err := r.invoke(ctx, code, &protocol.QueueRequestHeader{Topic: r.topic, QueueID: int32(qid)})
	if err != nil {
		return 0, err
	}
	if resp.Code != protocol.Success {
		return 0, fmt.Errorf("queue %d offset (request %d): code %d: %s", qid, code, resp.Code, resp.Remark)
	}
	return strconv.ParseInt(resp.ExtField("offset"), 10, 64)
}

// readAll reads every queue from its min offset to its max offset. An
// error means the read is incomplete: a check without it is no check.
func (r *reader) readAll(ctx context.Context) (*topicScan, error) {
	s := &topicScan{byKey: map[string][]position{}, badBody: map[string]bool{},
		minOffset: make([]int64, r.queues), maxOffset: make([]int64, r.queues)}
	for qid := range r.queues {
		minOff, err := r.queueOffset(ctx, protocol.GetMinOffset, qid)
		if err != nil {
			return nil, err
		}
		maxOff, err := r.queueOffset(ctx, protocol.GetMaxOffset, qid)
		if err != nil {
			return nil, err
		}
		s.minOffset[qid], s.maxOffset[qid] = minOff, maxOff
		if err := r.readQueue(ctx, s, qid, minOff, maxOff); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (r *reader) readQueue(ctx context.Context, s *topicScan, qid int, from, to int64) error {
	sc := message.NewScanner(nil, true)
	for off := from; off < to; {
		h := protocol.PullMessageRequestHeader{ConsumerGroup: "chaos_reader", Topic: r.topic, QueueID: int32(qid),
			QueueOffset: off, MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: "*",
			ExpressionType: protocol.ExpressionTag}
		resp, err := r.invoke(ctx, protocol.PullMessage, &h)
		if err != nil {
			return fmt.Errorf("pull queue %d at %d: %w", qid, off, err)
		}
		next, err := strconv.ParseInt(resp.ExtField("nextBeginOffset"), 10, 64)
		if err != nil {
			return fmt.Errorf("pull queue %d at %d: nextBeginOffset %q: %w", qid, off, resp.ExtField("nextBeginOffset"), err)
		}
		switch resp.Code {
		case protocol.Success:
			start := off
			sc.Reset(resp.Body)
			for sc.Next() {
				rec := sc.Record()
				if rec.QueueOffset < off || rec.QueueID != int32(qid) {
					return fmt.Errorf("pull queue %d at %d: got a message of queue %d at offset %d", qid, off, rec.QueueID, rec.QueueOffset)
				}
				s.holes += int(rec.QueueOffset - off)
				off = rec.QueueOffset + 1
				s.messages++
				key, ok := message.Property(rec.Properties, "KEYS")
				if !ok {
					s.foreign++
					continue
				}
				s.byKey[key] = append(s.byKey[key], position{queueID: int(rec.QueueID), queueOffset: rec.QueueOffset})
				if !bytes.Equal(rec.Body, child.Body(key, r.bodySize)) {
					s.badBody[key] = true
				}
			}
			if err := sc.Err(); err != nil {
				return fmt.Errorf("pull queue %d: response body: %w", qid, err)
			}
			if off == start && next <= off {
				return fmt.Errorf("pull queue %d at %d: SUCCESS without a message or progress", qid, off)
			}
		case protocol.PullNotFound, protocol.PullRetryImmediately, protocol.PullOffsetMoved:
			if next <= off {
				// Nothing readable where the queue says it has messages.
				return fmt.Errorf("pull queue %d at %d (max %d): code %d, next %d: %s", qid, off, to, resp.Code, next, resp.Remark)
			}
		default:
			return fmt.Errorf("pull queue %d at %d: code %d: %s", qid, off, resp.Code, resp.Remark)
		}
		if next > off {
			// Offsets the broker skipped: no message there.
			s.holes += int(min(next, to) - off)
			off = next
		}
	}
	return nil
}

// check is the state of every message acknowledged so far after a cycle.
type check struct {
	acked         int            // acknowledged so far
	ok            int            // at its recorded position, body intact, once
	lost          int            // found nowhere, at or above its queue's min offset
	expired       int            // found nowhere, below its queue's min offset (deleted by the store's cleanup)
	duplicated    int            // keys (acknowledged or not) found more than once
	moved         int            // acknowledged, found, but not at the recorded position
	corrupt       int            // a copy with a wrong body
	unackedStored int            // not acknowledged, yet stored
	storedBy      map[string]int // unackedStored by the send's outcome
	holes         int            // queue offsets in [min, max) without a message
	messages      int            // read in all
	lostKeys      []string
	readErr       error
}

// classify compares the ledger with what was read.
func classify(acked map[string]ack, notAcked map[string]string, s *topicScan) check {
	c := check{acked: len(acked), holes: s.holes, messages: s.messages, storedBy: map[string]int{}}
	for key, a := range acked {
		found := s.byKey[key]
		switch {
		case len(found) == 0:
			if a.queueID < len(s.minOffset) && a.queueOffset < s.minOffset[a.queueID] {
				c.expired++
			} else {
				c.lost++
				c.lostKeys = append(c.lostKeys, key)
			}
			continue
		case !slices.Contains(found, position{queueID: a.queueID, queueOffset: a.queueOffset}):
			c.moved++
		case len(found) == 1 && !s.badBody[key]:
			c.ok++
		}
	}
	for key, found := range s.byKey {
		if len(found) > 1 {
			c.duplicated++
		}
		if s.badBody[key] {
			c.corrupt++
		}
		if _, isAcked := acked[key]; !isAcked {
			if outcome, sent := notAcked[key]; sent {
				c.unackedStored++
				c.storedBy[outcome]++
			}
		}
	}
	slices.Sort(c.lostKeys)
	return c
}

// failed reports whether the check found what the run must not have:
// a loss, a corruption, a duplicate, a moved message or an incomplete read.
func (c check) failed() bool {
	return c.readErr != nil || c.lost > 0 || c.corrupt > 0 || c.duplicated > 0 || c.moved > 0
}
