package broker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// grpcClientAt is rawGRPC for a MessagingService at addr.
func grpcClientAt(t *testing.T, addr string) (v2.MessagingServiceClient, context.Context) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "x-mq-client-id", uniq(t, "crash")), 2*time.Minute)
	t.Cleanup(cancel)
	return v2.NewMessagingServiceClient(conn), ctx
}

// Two messages sent and received over gRPC, one acked, then the rocketd
// process killed with SIGKILL while the other's receipt is in flight and
// started again on the same data: the unacked message is received again
// (delivery attempt 2, once its 10 s invisible time is over), the acked
// one never.
func TestGRPCReceiptsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rocketd")
	}
	sp := newServeProc(t, "reviveInterval=100\nflushConsumerOffsetInterval=100\n")
	bin, nsAddr, addr, grpcAddr, dir, data, args := sp.bin, sp.nsAddr, sp.addr, sp.grpcAddr, sp.dir, sp.data, sp.args
	rc := remoting.NewClient(remoting.ClientConfig{})
	defer rc.Close()
	c := &cluster{t: t, dir: dir, nsAddr: nsAddr, rc: rc}
	rd := startRocketd(t, bin, args...)

	topic, group := uniq(t, "GrpcKill"), uniq(t, "GrpcKillGroup")
	th := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: protocol.SingleTag}
	if r := c.invoke(addr, protocol.UpdateAndCreateTopic, &th, nil); r.Code != protocol.Success {
		t.Fatalf("create topic: %d %s", r.Code, r.Remark)
	}
	cli, ctx := grpcClientAt(t, grpcAddr)
	res := &v2.Resource{Name: topic}
	for _, b := range []string{"acked", "unacked"} {
		sr, err := cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: res, Body: []byte(b),
			SystemProperties: &v2.SystemProperties{MessageId: "KILL-" + b, MessageType: v2.MessageType_NORMAL}}}})
		if err != nil || sr.GetStatus().GetCode() != v2.Code_OK {
			t.Fatalf("send %s: %v %v", b, err, sr)
		}
	}
	var got []*v2.Message
	wait.For(t, 20*time.Second, "both received", func() bool {
		_, msgs := rawReceive(t, ctx, cli, group, topic, 2)
		got = append(got, msgs...)
		return len(got) >= 2
	})
	received := time.Now()
	if len(got) != 2 {
		t.Fatalf("received %d messages, want 2", len(got))
	}
	for _, m := range got {
		if string(m.GetBody()) != "acked" {
			continue
		}
		r, err := cli.AckMessage(ctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: res,
			Entries: []*v2.AckMessageEntry{{MessageId: m.GetSystemProperties().GetMessageId(), ReceiptHandle: m.GetSystemProperties().GetReceiptHandle()}}})
		if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
			t.Fatalf("ack: %v %v", err, r)
		}
	}
	// The group's pop offset is on disk (consumerOffset.json, every 100 ms).
	offsets := filepath.Join(data, "store", "config", "consumerOffset.json")
	wait.For(t, 10*time.Second, "pop offset persisted", func() bool {
		b, _ := os.ReadFile(offsets)
		return regexp.MustCompile(fmt.Sprintf(`"%s@%s":\{0:2\s`, topic, group)).Match(b)
	})

	stopRocketd(t, rd, syscall.SIGKILL)
	rc.CloseConn(addr)
	rc.CloseConn(nsAddr)
	rd = startRocketd(t, bin, args...)
	defer stopRocketd(t, rd, syscall.SIGTERM)
	if !strings.Contains(rd.Log(), "cleanLastExit=false") {
		t.Fatalf("restart after SIGKILL did not recover abnormally:\n%s", rd.Log())
	}

	cli, ctx = grpcClientAt(t, grpcAddr)
	var back []*v2.Message
	wait.For(t, 40*time.Second, "the unacked message back", func() bool {
		_, msgs := rawReceive(t, ctx, cli, group, topic, 2)
		back = append(back, msgs...)
		return len(back) > 0
	})
	if since := time.Since(received); since < 10*time.Second {
		t.Fatalf("received again %v after the first receive, before its 10 s invisible time", since)
	}
	if len(back) != 1 || string(back[0].GetBody()) != "unacked" || back[0].GetSystemProperties().GetDeliveryAttempt() != 2 {
		for _, m := range back {
			t.Logf("received %q attempt %d", m.GetBody(), m.GetSystemProperties().GetDeliveryAttempt())
		}
		t.Fatalf("after the restart received %d messages, want only the unacked one, attempt 2", len(back))
	}
	r, err := cli.AckMessage(ctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: res,
		Entries: []*v2.AckMessageEntry{{MessageId: "KILL-unacked", ReceiptHandle: back[0].GetSystemProperties().GetReceiptHandle()}}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("ack after restart: %v %v", err, r)
	}
	// Both acked now: a receive long-polls and finds nothing.
	if code, msgs := rawReceive(t, ctx, cli, group, topic, 2); len(msgs) != 0 || code != v2.Code_MESSAGE_NOT_FOUND {
		t.Fatalf("after both acks: %v, %d messages", code, len(msgs))
	}
}
