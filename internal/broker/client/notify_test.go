package client

import (
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

func TestNotificationsAreMergedWhileQueued(t *testing.T) {
	// Not started: jobs stay queued, so the merge is observable.
	r, err := New(Config{NotifyWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := newFakeChan()
	r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "*", 1)), true)
	for i := range 10 {
		// Each heartbeat switches topics: a change every time.
		topic := []string{"U", "T"}[i%2]
		if c := r.RegisterConsumer(a, info("c1"), consumerData("cg", sub(topic, "*", 1)), true); !c.Changed() {
			t.Fatal("expected a change")
		}
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 5*time.Second, "one notification", func() bool { return len(a.notifications()) == 1 })
	// Nothing else comes: the marker below is queued after everything.
	b := newFakeChan()
	r.RegisterConsumer(b, info("c2"), consumerData("marker"), true)
	wait.For(t, 5*time.Second, "marker", func() bool { return len(b.notifications()) == 1 })
	if n := len(a.notifications()); n != 1 {
		t.Fatalf("%d notifications for 11 queued changes, want 1", n)
	}
	_ = r.Close()
}

func TestNotificationQueueFullDrops(t *testing.T) {
	r, err := New(Config{NotifyQueueLen: 2})
	if err != nil {
		t.Fatal(err)
	}
	chans := []*fakeChan{newFakeChan(), newFakeChan(), newFakeChan(), newFakeChan()}
	for i, ch := range chans {
		r.RegisterConsumer(ch, info(string(rune('a'+i))), consumerData("g"+string(rune('a'+i))), true)
	}
	if n := len(r.notifier.jobs); n != 2 {
		t.Fatalf("%d queued, want the queue bound 2", n)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 5*time.Second, "queued notifications sent", func() bool {
		return len(chans[0].notifications()) == 1 && len(chans[1].notifications()) == 1
	})
	_ = r.Close()
	if len(chans[2].notifications())+len(chans[3].notifications()) != 0 {
		t.Fatal("dropped notifications were sent")
	}
}

func TestCloseUnsticksABlockedNotification(t *testing.T) {
	r, err := New(Config{NotifyWorkers: 1, NotifyGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	stuck := newFakeChan()
	stuck.block = true
	r.RegisterConsumer(stuck, info("c1"), consumerData("cg"), true)
	wait.For(t, 5*time.Second, "send started", func() bool { return stuck.sends.Load() == 1 })

	// The caller is never blocked by the stuck send.
	other := newFakeChan()
	start := time.Now()
	r.RegisterConsumer(other, info("c2"), consumerData("cg"), true)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("RegisterConsumer blocked %v behind a stuck notification", d)
	}

	start = time.Now()
	_ = r.Close()
	if !stuck.isClosed() {
		t.Fatal("the stuck connection was not closed")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("Close returned after %v, before the grace period", d)
	}
	if len(other.notifications()) != 0 {
		t.Fatal("a queued notification was sent after Close")
	}
	_ = r.Close() // idempotent
}

func TestStartAfterCloseFails(t *testing.T) {
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	if err := r.Start(); err == nil {
		t.Fatal("Start after Close succeeded")
	}
	// Still usable as a table.
	r.RegisterConsumer(newFakeChan(), info("c1"), consumerData("cg"), true)
	if ids := r.ConsumerIDs("cg"); len(ids) != 1 {
		t.Fatalf("ids = %v", ids)
	}
}

func TestConfigValidate(t *testing.T) {
	if _, err := New(Config{ChannelExpiry: -1}); err == nil {
		t.Fatal("negative expiry accepted")
	}
	if _, err := New(Config{NotifyWorkers: -1}); err == nil {
		t.Fatal("negative workers accepted")
	}
}

func TestNotifyDisabledAndConfigFromBroker(t *testing.T) {
	b := config.NewBrokerConfig()
	if cfg := ConfigFromBroker(&b); cfg.NotifyDisabled {
		t.Fatal("notifications off by default")
	}
	b.NotifyConsumerIdsChangedEnable = false
	// Not started: whatever is queued stays visible.
	r, err := New(ConfigFromBroker(&b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, b2 := newFakeChan(), newFakeChan()
	r.RegisterConsumer(a, info("c1"), consumerData("cg", sub("T", "*", 1)), true)
	r.RegisterConsumer(b2, info("c2"), consumerData("cg", sub("T", "*", 1)), true)
	r.RemoveChannel(b2)
	if n := len(r.notifier.jobs); n != 0 {
		t.Fatalf("%d notifications queued with the broker switch off", n)
	}
}
