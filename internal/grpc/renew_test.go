package grpc

import (
	"context"
	"testing"
)

// TestRenewalsTake: the client's ack finds the message by id and the
// handle it got, gets the current (renewed) handle, waits for a renewal
// in flight, and ends the renewal; an unknown message is not renewed.
func TestRenewalsTake(t *testing.T) {
	var r renewals
	k := renewKey{"client-1", "g"}
	e := &renewEntry{topic: "T", msgID: "m1", orig: "h0", handle: "h0"}
	r.add(k, e)
	if _, ok := r.take(context.Background(), k, "m1", "other"); ok {
		t.Fatal("took a message by a handle it was not delivered with")
	}
	if _, ok := r.take(context.Background(), renewKey{"client-2", "g"}, "m1", "h0"); ok {
		t.Fatal("took another client's message")
	}
	// A renewal in flight: take waits for its new handle.
	r.mu.Lock()
	e.renewing = make(chan struct{})
	r.mu.Unlock()
	got := make(chan string)
	go func() {
		h, _ := r.take(context.Background(), k, "m1", "h0")
		got <- h
	}()
	r.mu.Lock()
	e.handle = "h1"
	close(e.renewing)
	e.renewing = nil
	r.mu.Unlock()
	if h := <-got; h != "h1" {
		t.Fatalf("take returned %q, want the renewed handle h1", h)
	}
	if !e.taken || len(r.groups) != 0 {
		t.Fatalf("taken %v, groups %v: the renewal did not end", e.taken, r.groups)
	}
}

func TestNextVisibleOf(t *testing.T) {
	at, ok := nextVisibleOf("0 1700000000000 60000 1 0 broker-a 0 5 123")
	if !ok || at.UnixMilli() != 1700000060000 {
		t.Fatalf("next visible %v %v", at, ok)
	}
	if _, ok := nextVisibleOf("0 x 60000"); ok {
		t.Fatal("parsed a bad handle")
	}
}
