package client

import (
	"testing"
	"time"
)

func TestProducerRegisterUnregister(t *testing.T) {
	clock := newFakeClock()
	r := newRegistry(t, Config{Now: clock.Now})
	a, b := newFakeChan(), newFakeChan()
	r.RegisterProducer("pg", a, info("c1"))
	r.RegisterProducer("pg", b, info("c2"))
	r.RegisterProducer("other", a, info("c1"))

	if got := r.ProducerGroups(); len(got) != 2 || got[0] != "other" || got[1] != "pg" {
		t.Fatalf("groups = %v", got)
	}
	chans := r.ProducerChannels("pg")
	if len(chans) != 2 || chans[0].ClientID != "c1" || chans[1].ClientID != "c2" {
		t.Fatalf("channels = %+v", chans)
	}
	conn := chans[0].Connection()
	if conn.Language != "GO" || conn.Version != 317 || conn.ClientAddr != a.addr || conn.ClientID != "c1" {
		t.Fatalf("connection = %+v", conn)
	}

	if pc := r.ProducerConnection("pg"); len(pc.ConnectionSet) != 2 || pc.ConnectionSet[1].ClientAddr != b.addr {
		t.Fatalf("producer connection body = %+v", pc)
	}
	if pc := r.ProducerConnection("none"); pc.ConnectionSet == nil || len(pc.ConnectionSet) != 0 {
		t.Fatalf("unknown group body = %+v", pc)
	}

	// A heartbeat refreshes, it does not duplicate.
	clock.Advance(time.Second)
	r.RegisterProducer("pg", a, info("c1"))
	if chans := r.ProducerChannels("pg"); len(chans) != 2 || !chans[0].LastUpdate.Equal(clock.Now()) {
		t.Fatalf("after refresh: %+v", chans)
	}

	if !r.UnregisterProducer("pg", a) || r.UnregisterProducer("pg", a) {
		t.Fatal("unregister should succeed once")
	}
	if r.UnregisterProducer("nope", a) {
		t.Fatal("unregister from an unknown group succeeded")
	}
	if chans := r.ProducerChannels("pg"); len(chans) != 1 || chans[0].Channel != b {
		t.Fatalf("after unregister: %+v", chans)
	}
	r.UnregisterProducer("pg", b)
	if got := r.ProducerGroups(); len(got) != 1 || got[0] != "other" {
		t.Fatalf("empty group kept: %v", got)
	}
}

func TestPickProducerChannelSpreads(t *testing.T) {
	r := newRegistry(t, Config{})
	if _, ok := r.PickProducerChannel("pg"); ok {
		t.Fatal("picked from an empty group")
	}
	chans := []*fakeChan{newFakeChan(), newFakeChan(), newFakeChan()}
	for i, ch := range chans {
		r.RegisterProducer("pg", ch, info(string(rune('a'+i))))
	}
	seen := map[Channel]int{}
	for range 300 {
		ci, ok := r.PickProducerChannel("pg")
		if !ok {
			t.Fatal("no channel picked")
		}
		seen[ci.Channel]++
	}
	if len(seen) != 3 {
		t.Fatalf("picked %d distinct channels of 3: %v", len(seen), seen)
	}
}

func TestRemoveChannelDropsProducer(t *testing.T) {
	r := newRegistry(t, Config{})
	a, b := newFakeChan(), newFakeChan()
	r.RegisterProducer("pg", a, info("c1"))
	r.RegisterProducer("pg2", a, info("c1"))
	r.RegisterProducer("pg", b, info("c2"))
	r.RemoveChannel(a)
	if got := r.ProducerGroups(); len(got) != 1 || got[0] != "pg" {
		t.Fatalf("groups = %v", got)
	}
	if chans := r.ProducerChannels("pg"); len(chans) != 1 || chans[0].Channel != b {
		t.Fatalf("channels = %+v", chans)
	}
}

func TestProducerExpiry(t *testing.T) {
	clock := newFakeClock()
	r := newRegistry(t, Config{Now: clock.Now})
	old, fresh := newFakeChan(), newFakeChan()
	r.RegisterProducer("pg", old, info("old"))
	clock.Advance(100 * time.Second)
	r.RegisterProducer("pg", fresh, info("fresh"))

	clock.Advance(20 * time.Second) // old: exactly 120 s, not yet expired
	r.scan()
	if len(r.ProducerChannels("pg")) != 2 || old.isClosed() {
		t.Fatal("channel expired at exactly the expiry time")
	}
	clock.Advance(time.Millisecond)
	r.scan()
	if chans := r.ProducerChannels("pg"); len(chans) != 1 || chans[0].Channel != fresh {
		t.Fatalf("after expiry: %+v", chans)
	}
	if !old.isClosed() || fresh.isClosed() {
		t.Fatal("the expired channel must be closed, only it")
	}
}

func TestPickProducerChannelSkipsClosed(t *testing.T) {
	r := newRegistry(t, Config{})
	open, closed := newFakeChan(), newFakeChan()
	r.RegisterProducer("pg", open, info("open"))
	r.RegisterProducer("pg", closed, info("closed"))
	_ = closed.Close() // its removal has not happened yet
	for range 50 {
		if ci, ok := r.PickProducerChannel("pg"); !ok || ci.Channel != open {
			t.Fatalf("picked %+v %v", ci, ok)
		}
	}
	_ = open.Close()
	if ci, ok := r.PickProducerChannel("pg"); !ok || ci.Channel == nil {
		t.Fatalf("all closed: picked %+v %v, want some channel", ci, ok)
	}
}
