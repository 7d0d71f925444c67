package broker_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketd/rocketd/internal/broker"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// portPair returns a loopback port P such that P and P-2 were both free:
// a listen address whose VIP channel (P-2) can be bound too. Ports come
// from the kernel's ephemeral range; the pair is re-drawn if P-2 is taken.
func portPair(t testing.TB) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		vip, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p-2)))
		_ = ln.Close()
		if err == nil {
			_ = vip.Close()
			return p
		}
	}
	t.Fatal("no free port pair P, P-2 on 127.0.0.1")
	return 0
}

// TestVIPChannel: the broker also serves listenPort-2 (Java's
// fastRemotingServer) with the same handlers: sends, heartbeats and admin
// calls; pulls are refused there as Java's VIP server refuses them; it
// stops with the broker.
func TestVIPChannel(t *testing.T) {
	port := portPair(t)
	c := startClusterOn(t, nil, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	vip := net.JoinHostPort("127.0.0.1", strconv.Itoa(port-2))
	if got := c.b.VIPAddr(); got != vip {
		t.Fatalf("VIP address %s, want %s", got, vip)
	}
	topic := uniq(t, "VIP")
	c.createTopic(topic, 2)

	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: 1, BornTimestamp: time.Now().UnixMilli()}
	if r := c.invoke(vip, protocol.SendMessage, &h, []byte("via vip")); r.Code != protocol.Success {
		t.Fatalf("send on the VIP channel: %d %s", r.Code, r.Remark)
	}
	wait.For(t, 10*time.Second, "the VIP send dispatched (GET_MAX_OFFSET on the VIP channel)", func() bool {
		r := c.invoke(vip, protocol.GetMaxOffset, &protocol.GetMaxOffsetRequestHeader{Topic: topic, QueueID: 1}, nil)
		return r.Code == protocol.Success && r.ExtFields["offset"] == "1"
	})
	pull := protocol.PullMessageRequestHeader{ConsumerGroup: "cg", Topic: topic, QueueID: 1, MaxMsgNums: 1,
		SysFlag: protocol.PullFlagSubscription, Subscription: "*"}
	if r := c.invoke(vip, protocol.PullMessage, &pull, nil); r.Code != protocol.RequestCodeNotSupported {
		t.Fatalf("pull on the VIP channel: %d %s, want REQUEST_CODE_NOT_SUPPORTED", r.Code, r.Remark)
	}
	if r := c.invoke(c.b.Addr(), protocol.PullMessage, &pull, nil); r.Code != protocol.Success {
		t.Fatalf("pull on the main channel: %d %s", r.Code, r.Remark)
	}

	c.stopBroker()
	c.rc.CloseConn(vip)
	if conn, err := net.DialTimeout("tcp", vip, time.Second); err == nil {
		_ = conn.Close()
		t.Fatal("VIP channel still accepts after Shutdown")
	}
}

// TestVIPPortTakenFailsStart: as Java's bind, a taken listenPort-2 stops
// the start, loudly, and releases the main port again.
func TestVIPPortTakenFailsStart(t *testing.T) {
	port := portPair(t)
	taken, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port-2)))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	c := &cluster{t: t, dir: t.TempDir()}
	bc := c.brokerConfig()
	bc.NamesrvAddr = ""
	main := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	b, err := broker.Start(broker.Config{Broker: bc, ListenAddr: main})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
		t.Fatal("broker started with its VIP port taken")
	}
	if !strings.Contains(err.Error(), strconv.Itoa(port-2)) {
		t.Fatalf("error does not name the VIP port: %v", err)
	}
	ln, err := net.Listen("tcp", main)
	if err != nil {
		t.Fatalf("main port not released after the failed start: %v", err)
	}
	_ = ln.Close()
}

// TestVIPEphemeralWithEphemeralMain: a main port of 0 gives an ephemeral
// VIP port (Java clamps listenPort-2 below 0 to 0), so tests on :0 never
// collide.
func TestVIPEphemeralWithEphemeralMain(t *testing.T) {
	c := startCluster(t, nil)
	host, port, err := net.SplitHostPort(c.b.VIPAddr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("VIP address %q (%v)", c.b.VIPAddr(), err)
	}
}
