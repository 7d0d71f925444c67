package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/config"
)

// startRocketd runs a NameServer and a rocketd master broker in this process
// on loopback ephemeral ports and returns the NameServer address.
func startRocketd(t *testing.T) string {
	t.Helper()
	return startRocketdWith(t, nil)
}

// startRocketdWith is startRocketd with the broker config adjusted by tune.
func startRocketdWith(t *testing.T, tune func(*config.BrokerConfig)) string {
	t.Helper()
	ns, _ := startRocketdBroker(t, tune)
	return ns
}

// startRocketdBroker is startRocketdWith that also returns the broker.
func startRocketdBroker(t *testing.T, tune func(*config.BrokerConfig)) (string, *broker.Broker) {
	t.Helper()
	ns := startEmptyNamesrv(t)
	bc := config.NewBrokerConfig()
	bc.BrokerIP1 = "127.0.0.1"
	bc.NamesrvAddr = ns
	bc.StorePathRootDir = filepath.Join(t.TempDir(), "store")
	bc.MappedFileSizeCommitLog = 32 << 20
	bc.MappedFileSizeConsumeQueue = 30000 * 20
	if tune != nil {
		tune(&bc)
	}
	b, err := broker.Start(broker.Config{Broker: bc, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			t.Errorf("broker shutdown: %v", err)
		}
	})
	waitFor(t, 10*time.Second, "the broker to register", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "cluster", "list")
		return err == nil && strings.Contains(out, b.Addr()), out
	})
	return ns, b
}

func TestCLIAgainstRocketd(t *testing.T) {
	exerciseCLI(t, startRocketd(t))
}

// TestConsumeFollow checks that a following consume long-polls: it waits for
// a message sent after it started and stops after -c messages.
func TestConsumeFollow(t *testing.T) {
	ns, b := startRocketdBroker(t, nil)
	mustRun(t, "-n", ns, "topic", "create", "-t", "FollowTopic", "-r", "2", "-w", "2")
	waitFor(t, 10*time.Second, "the topic route", func() (bool, string) {
		out, err := rocketctl(t, "-n", ns, "topic", "route", "-t", "FollowTopic")
		return err == nil, out
	})
	var (
		wg     sync.WaitGroup
		out    string
		runErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		out, runErr = rocketctl(t, "-n", ns, "consume", "-t", "FollowTopic", "--follow", "-c", "2", "-g", "follow_group", "--suspend", "5s")
	}()
	// Both queues' pulls are held when the messages arrive: the wake-up
	// path, not the first pull, finds them.
	waitFor(t, 10*time.Second, "the consumer's two pulls held", func() (bool, string) {
		n := b.HeldRequests()
		return n == 2, fmt.Sprintf("%d held", n)
	})
	mustRun(t, "-n", ns, "send", "-t", "FollowTopic", "-b", "first", "--count", "1")
	mustRun(t, "-n", ns, "send", "-t", "FollowTopic", "-b", "second", "-q", "1")
	wg.Wait()
	if runErr != nil {
		t.Fatalf("consume --follow: %v\n%s", runErr, out)
	}
	if !strings.Contains(out, "body: first") || !strings.Contains(out, "body: second") {
		t.Fatalf("consume --follow output:\n%s", out)
	}
	if p := mustRun(t, "-n", ns, "group", "progress", "-g", "follow_group", "-t", "FollowTopic"); !strings.Contains(p, "total lag: 0") {
		t.Errorf("progress after follow:\n%s", p)
	}
}
