package client

import (
	"slices"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func TestConsumerRegisterReportsChanges(t *testing.T) {
	r := newRegistry(t, Config{})
	a, b := newFakeChan(), newFakeChan()

	c := r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "*", 1), sub("%RETRY%cg", "*", 1)), true)
	if !c.ChannelAdded || !c.SubscriptionsChanged {
		t.Fatalf("first heartbeat: %+v", c)
	}
	c = r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "*", 1), sub("%RETRY%cg", "*", 1)), true)
	if c.Changed() {
		t.Fatalf("same heartbeat again: %+v", c)
	}
	// A newer subVersion replaces the subscription quietly.
	c = r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "TagA", 2), sub("%RETRY%cg", "*", 1)), true)
	if c.Changed() {
		t.Fatalf("newer subVersion: %+v", c)
	}
	if s, ok := r.FindSubscription("cg", "T"); !ok || s.SubString != "TagA" {
		t.Fatalf("subscription = %+v, %v", s, ok)
	}
	// An older one does not.
	r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "TagB", 1), sub("%RETRY%cg", "*", 1)), true)
	if s, _ := r.FindSubscription("cg", "T"); s.SubString != "TagA" {
		t.Fatalf("older subVersion replaced the subscription: %+v", s)
	}
	// A new topic is a change, and so is a topic left out.
	if c = r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "TagA", 2), sub("U", "*", 1), sub("%RETRY%cg", "*", 1)), true); !c.SubscriptionsChanged || c.ChannelAdded {
		t.Fatalf("new topic: %+v", c)
	}
	if c = r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("U", "*", 1), sub("%RETRY%cg", "*", 1)), true); !c.SubscriptionsChanged {
		t.Fatalf("topic removed: %+v", c)
	}
	if _, ok := r.FindSubscription("cg", "T"); ok {
		t.Fatal("a topic no longer subscribed is still found")
	}
	if c = r.RegisterConsumer(b, info("c2"), consumerData("cg", sub("U", "*", 1), sub("%RETRY%cg", "*", 1)), true); !c.ChannelAdded || c.SubscriptionsChanged {
		t.Fatalf("second member: %+v", c)
	}
	if got := r.GroupsSubscribing("U"); !slices.Equal(got, []string{"cg"}) {
		t.Fatalf("groups subscribing U = %v", got)
	}
	if got := r.GroupsSubscribing("T"); len(got) != 0 {
		t.Fatalf("groups subscribing T = %v", got)
	}
}

func TestConsumerNotifications(t *testing.T) {
	r := newRegistry(t, Config{})
	a, b := newFakeChan(), newFakeChan()
	r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "*", 1)), true)
	wait.For(t, 5*time.Second, "a notified of its own join", func() bool { return len(a.notifications()) == 1 })

	r.RegisterConsumer(b, info("c2"), consumerData("cg", sub("T", "*", 1)), true)
	wait.For(t, 5*time.Second, "both notified of b's join", func() bool {
		return len(a.notifications()) == 2 && len(b.notifications()) == 1
	})
	if got := a.notifications(); got[0] != "cg" || got[1] != "cg" {
		t.Fatalf("notified groups = %v", got)
	}

	// Unchanged heartbeats notify nobody; notify=false silences a change.
	r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "*", 1)), true)
	c := newFakeChan()
	r.RegisterConsumer(c, info("c3"), consumerData("cg", sub("T", "*", 1)), false)
	// Unregister with notify: the rest hear about it (the marker that
	// everything before was processed).
	if !r.UnregisterConsumer("cg", c, true) {
		t.Fatal("unregister failed")
	}
	wait.For(t, 5*time.Second, "unregister notification", func() bool {
		return len(a.notifications()) == 3 && len(b.notifications()) == 2
	})
	if n := len(c.notifications()); n != 0 {
		t.Fatalf("a channel registered with notify=false got %d notifications", n)
	}
	if r.UnregisterConsumer("cg", c, true) {
		t.Fatal("second unregister succeeded")
	}
}

func TestConsumerIDs(t *testing.T) {
	r := newRegistry(t, Config{})
	if ids := r.ConsumerIDs("cg"); ids != nil {
		t.Fatalf("unknown group: %v", ids)
	}
	// c2 dials the broker on two addresses: two channels, one consumer.
	r.RegisterConsumer(newFakeChan(), info("c2"), consumerData("cg"), false)
	r.RegisterConsumer(newFakeChan(), info("c1"), consumerData("cg"), false)
	r.RegisterConsumer(newFakeChan(), info("c2"), consumerData("cg"), false)
	if ids := r.ConsumerIDs("cg"); !slices.Equal(ids, []string{"c1", "c2"}) {
		t.Fatalf("ids = %v", ids)
	}
	ci, ok := r.FindConsumerChannel("cg", "c1")
	if !ok || ci.ClientID != "c1" {
		t.Fatalf("find c1: %+v %v", ci, ok)
	}
	if _, ok := r.FindConsumerChannel("cg", "nobody"); ok {
		t.Fatal("found an unknown client")
	}
}

func TestRemoveChannelNotifiesTheRest(t *testing.T) {
	var asked []string
	r := newRegistry(t, Config{NotifyEnabled: func(g string) bool {
		asked = append(asked, g) // called from this goroutine: RemoveChannel is synchronous
		return g != "quiet"
	}})
	a, b := newFakeChan(), newFakeChan()
	for _, g := range []string{"cg", "quiet", "solo"} {
		r.RegisterConsumer(a, info("c1"), consumerData(g, sub("T", "*", 1)), false)
	}
	r.RegisterConsumer(b, info("c2"), consumerData("cg", sub("T", "*", 1)), false)
	r.RegisterConsumer(b, info("c2"), consumerData("quiet", sub("T", "*", 1)), false)

	r.RemoveChannel(a)
	wait.For(t, 5*time.Second, "b notified", func() bool { return len(b.notifications()) == 1 })
	if got := b.notifications(); got[0] != "cg" {
		t.Fatalf("b notified for %v", got)
	}
	if slices.Sort(asked); !slices.Equal(asked, []string{"cg", "quiet"}) {
		t.Fatalf("NotifyEnabled asked for %v (an emptied group has nobody to notify)", asked)
	}
	if got := r.ConsumerGroups(); !slices.Equal(got, []string{"cg", "quiet"}) {
		t.Fatalf("groups = %v: an emptied group must be forgotten", got)
	}
	if _, ok := r.FindSubscription("solo", "T"); ok {
		t.Fatal("subscription of a forgotten group still found")
	}
	if ids := r.ConsumerIDs("cg"); !slices.Equal(ids, []string{"c2"}) {
		t.Fatalf("ids = %v", ids)
	}
	if len(a.notifications()) != 0 {
		t.Fatal("the closed channel was notified")
	}
}

func TestConsumerExpiry(t *testing.T) {
	clock := newFakeClock()
	r := newRegistry(t, Config{Now: clock.Now, ChannelExpiry: 30 * time.Second})
	old, fresh := newFakeChan(), newFakeChan()
	r.RegisterConsumer(old, info("old"), consumerData("cg", sub("T", "*", 1)), false)
	clock.Advance(20 * time.Second)
	r.RegisterConsumer(fresh, info("fresh"), consumerData("cg", sub("T", "*", 1)), false)
	clock.Advance(11 * time.Second)
	r.scan()
	if !old.isClosed() || fresh.isClosed() {
		t.Fatal("only the idle channel must be closed")
	}
	if ids := r.ConsumerIDs("cg"); !slices.Equal(ids, []string{"fresh"}) {
		t.Fatalf("ids = %v", ids)
	}
	wait.For(t, 5*time.Second, "survivor notified", func() bool { return len(fresh.notifications()) == 1 })

	clock.Advance(31 * time.Second)
	r.scan()
	if got := r.ConsumerGroups(); len(got) != 0 {
		t.Fatalf("groups = %v", got)
	}
}

func TestConsumerGroupSnapshot(t *testing.T) {
	r := newRegistry(t, Config{})
	if _, ok := r.ConsumerGroup("cg"); ok {
		t.Fatal("unknown group found")
	}
	a := newFakeChan()
	d := consumerData("cg", sub("T", "A || B", 1))
	d.MessageModel = protocol.Broadcasting
	r.RegisterConsumer(a, info("c1"), d, false)
	g, ok := r.ConsumerGroup("cg")
	if !ok || len(g.Channels) != 1 || g.MessageModel != protocol.Broadcasting || g.Subscriptions["T"].SubString != "A || B" {
		t.Fatalf("snapshot = %+v", g)
	}
	cc := g.ConsumerConnection()
	if len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].ClientAddr != a.addr ||
		cc.SubscriptionTable["T"].SubString != "A || B" || cc.ConsumeType != protocol.ConsumePassively {
		t.Fatalf("connection body = %+v", cc)
	}
}

func TestFindSubscriptionAllocatesNothing(t *testing.T) {
	r := newRegistry(t, Config{})
	r.RegisterConsumer(newFakeChan(), info("c1"), consumerData("cg", sub("T", "*", 1)), false)
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := r.FindSubscription("cg", "T"); !ok {
			t.Fatal("not found")
		}
	})
	if allocs != 0 {
		t.Fatalf("FindSubscription allocates %v times", allocs)
	}
}

func TestMessageModel(t *testing.T) {
	r := newRegistry(t, Config{})
	if _, ok := r.MessageModel("cg"); ok {
		t.Fatal("unknown group online")
	}
	d := consumerData("cg")
	d.MessageModel = protocol.Broadcasting
	r.RegisterConsumer(newFakeChan(), info("c1"), d, false)
	if m, ok := r.MessageModel("cg"); !ok || m != protocol.Broadcasting {
		t.Fatalf("model = %q %v", m, ok)
	}
}

// TestScanLoopRuns checks the scan goroutine itself (the other expiry tests
// call scan directly).
func TestScanLoopRuns(t *testing.T) {
	clock := newFakeClock()
	r := newRegistry(t, Config{Now: clock.Now, ScanInterval: 5 * time.Millisecond, ChannelExpiry: time.Minute})
	ch := newFakeChan()
	r.RegisterConsumer(ch, info("c1"), consumerData("cg"), false)
	r.RegisterProducer("pg", ch, info("c1"))
	r.Locks().TryLockBatch("cg", "c1", mqs(0))
	clock.Advance(time.Minute + time.Second)
	wait.For(t, 5*time.Second, "the idle channel closed by the scan loop", ch.isClosed)
	wait.For(t, 5*time.Second, "groups emptied", func() bool {
		return len(r.ConsumerGroups()) == 0 && len(r.ProducerGroups()) == 0
	})
	wait.For(t, 5*time.Second, "the expired lock forgotten", func() bool {
		r.Locks().mu.Lock()
		defer r.Locks().mu.Unlock()
		return len(r.Locks().groups) == 0
	})
}

func TestHeartbeatOnClosedConnectionRegistersNothing(t *testing.T) {
	r := newRegistry(t, Config{})
	closed := newFakeChan()
	_ = closed.Close()
	if c := r.RegisterConsumer(closed, info("c1"), consumerData("cg", sub("T", "*", 1)), true); c.Changed() {
		t.Fatalf("change = %+v", c)
	}
	r.RegisterProducer("pg", closed, info("c1"))

	// Closing while the heartbeat is registered (after the first look).
	racing := newFakeChan()
	racing.closeAfterChecks = 2
	r.RegisterConsumer(racing, info("c2"), consumerData("cg", sub("T", "*", 1)), true)
	racingP := newFakeChan()
	racingP.closeAfterChecks = 2
	r.RegisterProducer("pg", racingP, info("c2"))

	if g := r.ConsumerGroups(); len(g) != 0 {
		t.Fatalf("consumer groups = %v", g)
	}
	if g := r.ProducerGroups(); len(g) != 0 {
		t.Fatalf("producer groups = %v", g)
	}
}
