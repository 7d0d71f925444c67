package grpc

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// newLifeOnly is a Server with only its lifetime set: enough for
// untilClosed.
func newLifeOnly() *Server {
	s := &Server{}
	s.life, s.endLife = context.WithCancel(context.Background())
	return s
}

// TestUntilClosedStartsNoGoroutine: open streams each hold an untilClosed
// context; none of them costs a goroutine waiting for the client or the
// server to go away (before: one per stream, blocked in a select).
func TestUntilClosedStartsNoGoroutine(t *testing.T) {
	s := newLifeOnly()
	defer s.endLife()
	before := goleak.IgnoreCurrent()
	const streams = 64
	cancels := make([]context.CancelFunc, 0, streams)
	for range streams {
		_, cancel := s.untilClosed(context.Background())
		cancels = append(cancels, cancel)
	}
	if err := goleak.Find(before); err != nil {
		t.Errorf("%d open stream contexts started goroutines: %v", streams, err)
	}
	for _, cancel := range cancels {
		cancel()
	}
}

// TestUntilClosedEnds: the context ends with its parent (the client went
// away), with the server's close, and with its own cancel; a cancelled
// one is no longer tied to the server.
func TestUntilClosedEnds(t *testing.T) {
	s := newLifeOnly()
	defer s.endLife()

	parent, endParent := context.WithCancel(context.Background())
	byParent, cancel1 := s.untilClosed(parent)
	defer cancel1()
	endParent()
	<-byParent.Done() // a cancelled parent ends a child at once

	own, cancel2 := s.untilClosed(context.Background())
	cancel2()
	if err := own.Err(); err != context.Canceled {
		t.Fatalf("after its cancel: %v", err)
	}

	held, cancel3 := s.untilClosed(context.Background())
	defer cancel3()
	if err := held.Err(); err != nil {
		t.Fatalf("live stream context already ended: %v", err)
	}
	s.endLife()
	select {
	case <-held.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server's close did not end a held stream's context")
	}
}
