package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/rocketd/rocketd/bench/internal/child"
	"github.com/rocketd/rocketd/internal/message"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// position is where a message was found.
type position struct {
	queueID     int
	queueOffset int64
}

// check is the state of every message acknowledged so far.
type check struct {
	acked, ok, lost, duplicated, moved, corrupt, unackedStored int
	lostKeys                                                   []string
}

// verify reads every queue of the topic from addr and compares it with
// the ledger: the messages acknowledged before the read began (the load
// may go on meanwhile; later ones are checked by the next read).
func verify(ctx context.Context, rc *remoting.Client, addr string, bodySize int, led *ledger) (check, error) {
	led.mu.Lock()
	acked := maps.Clone(led.acked)
	led.mu.Unlock()
	byKey := map[string][]position{}
	badBody := map[string]bool{}
	for qid := range queues {
		minOff, err := queueOffset(ctx, rc, addr, protocol.GetMinOffset, qid)
		if err != nil {
			return check{}, err
		}
		maxOff, err := queueOffset(ctx, rc, addr, protocol.GetMaxOffset, qid)
		if err != nil {
			return check{}, err
		}
		if err := readQueue(ctx, rc, addr, qid, minOff, maxOff, bodySize, byKey, badBody); err != nil {
			return check{}, err
		}
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	c := check{acked: len(acked)}
	for key, a := range acked {
		found := byKey[key]
		switch {
		case len(found) == 0:
			c.lost++
			c.lostKeys = append(c.lostKeys, key)
		case !slices.Contains(found, position{a.queueID, a.queueOffset}):
			c.moved++
		case len(found) == 1 && !badBody[key]:
			c.ok++
		}
	}
	for key, found := range byKey {
		if len(found) > 1 {
			c.duplicated++
		}
		if badBody[key] {
			c.corrupt++
		}
		if led.notAcked[key] {
			if _, ok := led.acked[key]; !ok {
				c.unackedStored++
			}
		}
	}
	slices.Sort(c.lostKeys)
	return c, nil
}

func invoke(ctx context.Context, rc *remoting.Client, addr string, code int32, h interface{ AppendExt(map[string]string) }) (*remoting.Command, error) {
	var last error
	for attempt := range 5 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := rc.Invoke(cctx, addr, remoting.NewRequest(code, protocol.Ext(h), nil))
		cancel()
		if err == nil && resp.Code != protocol.SystemError && resp.Code != protocol.ServiceNotAvailable {
			return resp, nil
		}
		if err == nil {
			err = fmt.Errorf("code %d: %s", resp.Code, resp.Remark)
		}
		last = err
	}
	return nil, fmt.Errorf("request %d to %s: %w", code, addr, last)
}

func queueOffset(ctx context.Context, rc *remoting.Client, addr string, code int32, qid int) (int64, error) {
	resp, err := invoke(ctx, rc, addr, code, &protocol.QueueRequestHeader{Topic: topic, QueueID: int32(qid)})
	if err != nil {
		return 0, err
	}
	if resp.Code != protocol.Success {
		return 0, fmt.Errorf("queue %d offset: code %d: %s", qid, resp.Code, resp.Remark)
	}
	return strconv.ParseInt(resp.ExtField("offset"), 10, 64)
}

func readQueue(ctx context.Context, rc *remoting.Client, addr string, qid int, from, to int64, bodySize int,
	byKey map[string][]position, badBody map[string]bool) error {
	sc := message.NewScanner(nil, true)
	for off := from; off < to; {
		h := protocol.PullMessageRequestHeader{ConsumerGroup: "failover_reader", Topic: topic, QueueID: int32(qid),
			QueueOffset: off, MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: "*",
			ExpressionType: protocol.ExpressionTag}
		resp, err := invoke(ctx, rc, addr, protocol.PullMessage, &h)
		if err != nil {
			return fmt.Errorf("pull queue %d at %d: %w", qid, off, err)
		}
		next, err := strconv.ParseInt(resp.ExtField("nextBeginOffset"), 10, 64)
		if err != nil {
			return fmt.Errorf("pull queue %d at %d: nextBeginOffset %q", qid, off, resp.ExtField("nextBeginOffset"))
		}
		switch resp.Code {
		case protocol.Success:
			sc.Reset(resp.Body)
			for sc.Next() {
				rec := sc.Record()
				off = rec.QueueOffset + 1
				key, ok := message.Property(rec.Properties, "KEYS")
				if !ok {
					continue
				}
				byKey[key] = append(byKey[key], position{int(rec.QueueID), rec.QueueOffset})
				if !bytes.Equal(rec.Body, child.Body(key, bodySize)) {
					badBody[key] = true
				}
			}
			if err := sc.Err(); err != nil {
				return fmt.Errorf("pull queue %d: body: %w", qid, err)
			}
		case protocol.PullNotFound, protocol.PullRetryImmediately, protocol.PullOffsetMoved:
			if next <= off {
				return fmt.Errorf("pull queue %d at %d (max %d): code %d: %s", qid, off, to, resp.Code, resp.Remark)
			}
		default:
			return fmt.Errorf("pull queue %d at %d: code %d: %s", qid, off, resp.Code, resp.Remark)
		}
		off = max(off, next)
	}
	return nil
}
