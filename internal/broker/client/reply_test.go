package client

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// replyChan is a fakeChan whose Invoke answers with invoke.
type replyChan struct {
	*fakeChan
	invoke func(ctx context.Context, req *remoting.Command) (*remoting.Command, error)
}

func (c *replyChan) Invoke(ctx context.Context, req *remoting.Command) (*remoting.Command, error) {
	return c.invoke(ctx, req)
}

func TestFindProducerChannelFollowsRegistrations(t *testing.T) {
	clock := newFakeClock()
	r := newRegistry(t, Config{Now: clock.Now, ScanInterval: time.Hour})
	a, b := newFakeChan(), newFakeChan()
	if _, ok := r.FindProducerChannel("c1"); ok {
		t.Fatal("found a client before any heartbeat")
	}
	r.RegisterProducer("pg1", a, info("c1"))
	r.RegisterProducer("pg2", a, info("c1")) // same channel, second group
	r.RegisterProducer("pg1", b, info("c2"))
	if ch, ok := r.FindProducerChannel("c1"); !ok || ch != a {
		t.Fatalf("c1 -> %v, %v; want a", ch, ok)
	}
	// Leaving one group keeps the channel: it is still in pg2.
	r.UnregisterProducer("pg1", a)
	if ch, ok := r.FindProducerChannel("c1"); !ok || ch != a {
		t.Fatalf("after leaving pg1: %v, %v", ch, ok)
	}
	r.UnregisterProducer("pg2", a)
	if _, ok := r.FindProducerChannel("c1"); ok {
		t.Fatal("c1 found after leaving every group")
	}
	// A heartbeat that changes the channel's client id moves the index.
	r.RegisterProducer("pg1", b, info("c3"))
	if _, ok := r.FindProducerChannel("c2"); ok {
		t.Fatal("old client id still indexed")
	}
	if ch, ok := r.FindProducerChannel("c3"); !ok || ch != b {
		t.Fatalf("c3 -> %v, %v", ch, ok)
	}
	// Close and expiry drop it too.
	r.RemoveChannel(b)
	if _, ok := r.FindProducerChannel("c3"); ok {
		t.Fatal("closed channel still indexed")
	}
	r.RegisterProducer("pg1", a, info("c1"))
	clock.Advance(DefaultChannelExpiry + time.Second)
	r.scan()
	if _, ok := r.FindProducerChannel("c1"); ok {
		t.Fatal("expired channel still indexed")
	}
	if n := len(r.producers.byClient); n != 0 {
		t.Fatalf("index keeps %d empty entries", n)
	}
}

func TestFindProducerChannelPrefersOpen(t *testing.T) {
	r := newRegistry(t, Config{})
	closed, open := newFakeChan(), newFakeChan()
	r.RegisterProducer("pg1", closed, info("c1"))
	r.RegisterProducer("pg2", open, info("c1")) // the client dialled twice
	_ = closed.Close()                          // its removal not processed yet
	for range 20 {                              // map order is random
		if ch, ok := r.FindProducerChannel("c1"); !ok || ch != open {
			t.Fatalf("c1 -> %v, %v; want the open channel", ch, ok)
		}
	}
}

func TestPushReply(t *testing.T) {
	r := newRegistry(t, Config{ReplyPushTimeout: 50 * time.Millisecond})
	req := remoting.NewRequest(protocol.PushReplyMessageToClient, nil, nil)

	if _, err := r.PushReply(context.Background(), "nobody", req); !errors.Is(err, ErrRequesterNotFound) {
		t.Fatalf("unknown client: %v", err)
	}

	var got *remoting.Command
	answering := &replyChan{fakeChan: newFakeChan(), invoke: func(_ context.Context, req *remoting.Command) (*remoting.Command, error) {
		got = req
		return remoting.NewResponse(protocol.Success, ""), nil
	}}
	r.RegisterProducer("pg", answering, info("c1"))
	resp, err := r.PushReply(context.Background(), "c1", req)
	if err != nil || resp.Code != protocol.Success || got != req {
		t.Fatalf("push: resp %+v err %v, request seen %v", resp, err, got)
	}

	// A requester that never answers costs the timeout, no more.
	silent := &replyChan{fakeChan: newFakeChan(), invoke: func(ctx context.Context, _ *remoting.Command) (*remoting.Command, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	r.RegisterProducer("pg", silent, info("c2"))
	start := time.Now()
	_, err = r.PushReply(context.Background(), "c2", req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("silent requester: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("push waited %v", waited)
	}
	// The registry stays usable meanwhile: no lock was held.
	if _, ok := r.FindProducerChannel("c1"); !ok {
		t.Fatal("c1 lost")
	}
}

// TestFindProducerChannelSeveralChannels: one client id on three channels
// (the first held inline in the index, the others beside it) keeps being
// found while any of them is registered, whichever leaves first.
func TestFindProducerChannelSeveralChannels(t *testing.T) {
	r := newRegistry(t, Config{})
	a, b, c := newFakeChan(), newFakeChan(), newFakeChan()
	for _, ch := range []*fakeChan{a, b, c} {
		r.RegisterProducer("pg1", ch, info("c1"))
	}
	r.RegisterProducer("pg2", b, info("c1"))
	r.RemoveChannel(a)
	for _, left := range []struct {
		gone  func()
		still []Channel
	}{
		{func() {}, []Channel{b, c}},
		{func() { r.UnregisterProducer("pg1", b) }, []Channel{b, c}}, // b is still in pg2
		{func() { r.RemoveChannel(c) }, []Channel{b}},
		{func() { r.UnregisterProducer("pg2", b) }, nil},
	} {
		left.gone()
		ch, ok := r.FindProducerChannel("c1")
		if len(left.still) == 0 {
			if ok {
				t.Fatalf("found %v after every channel left", ch)
			}
			continue
		}
		if !ok || !slices.Contains(left.still, ch) {
			t.Fatalf("c1 -> %v, %v; want one of %v", ch, ok, left.still)
		}
	}
	if n := len(r.producers.byClient); n != 0 {
		t.Fatalf("index keeps %d empty entries", n)
	}
}
