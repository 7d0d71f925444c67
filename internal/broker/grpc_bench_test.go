package broker_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/testutil/wait"
)

// BenchmarkGRPCReceiveAck is the SimpleConsumer's work per message over
// the gRPC endpoint of a whole in-process broker: ReceiveMessage of 32
// messages of 1 KiB from a backlog, then one AckMessage RPC per message
// (as the Go SDK's SimpleConsumer does), raw gRPC client and server in
// this process. The backlog is filled before the timer.
func BenchmarkGRPCReceiveAck(b *testing.B) { benchGRPCReceiveAck(b, 1) }

// BenchmarkGRPCReceiveAckConcurrent is BenchmarkGRPCReceiveAck with 16
// consumers of the group, each on its own connection, as the harness's
// gconsume runs them: their acks reach the store at once. cpu-ns/op is
// the CPU this process (clients and server) used per message.
func BenchmarkGRPCReceiveAckConcurrent(b *testing.B) { benchGRPCReceiveAck(b, 16) }

func benchGRPCReceiveAck(b *testing.B, consumers int) {
	c := startCluster(b, func(bc *config.BrokerConfig) { bc.GrpcServerEnable = true })
	topic, group := uniq(b, "GrpcBench"), uniq(b, "GrpcBenchGroup")
	c.createTopic(topic, 8)
	clis := make([]v2.MessagingServiceClient, consumers)
	for i := range clis {
		conn, err := grpc.NewClient(c.b.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		clis[i] = v2.NewMessagingServiceClient(conn)
	}
	cli := clis[0]
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "x-mq-client-id", uniq(b, "bench")), 10*time.Minute)
	defer cancel()
	res := &v2.Resource{Name: topic}
	body := make([]byte, 1024)
	for sent := 0; sent < b.N; {
		var msgs []*v2.Message
		for i := 0; i < 32 && sent+i < b.N; i++ {
			msgs = append(msgs, &v2.Message{Topic: res, Body: body, UserProperties: map[string]string{"k": "v"},
				SystemProperties: &v2.SystemProperties{MessageId: fmt.Sprintf("BENCH%d", sent+i), MessageType: v2.MessageType_NORMAL, Tag: proto("T")}})
		}
		r, err := cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: msgs})
		if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
			b.Fatalf("send: %v %v", err, r.GetStatus())
		}
		sent += len(msgs)
	}
	wait.For(b, time.Minute, "backlog dispatched", func() bool {
		var n int64
		for q := range int32(8) {
			n += c.b.Store().MaxOffset(topic, q)
		}
		return n == int64(b.N)
	})
	g := &v2.Resource{Name: group}
	recv := &v2.ReceiveMessageRequest{Group: g, MessageQueue: &v2.MessageQueue{Topic: res, Id: -1}, BatchSize: 32,
		InvisibleDuration: durationpb.New(time.Minute), LongPollingTimeout: durationpb.New(5 * time.Second),
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	rctx, rcancel := context.WithCancel(ctx) // ends the receives held once all are acked
	defer rcancel()
	var (
		acked atomic.Int64
		wg    sync.WaitGroup
		errs  = make(chan error, len(clis))
	)
	for _, cli := range clis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for acked.Load() < int64(b.N) {
				st, err := cli.ReceiveMessage(rctx, recv)
				if err != nil {
					if rctx.Err() == nil {
						errs <- err
					}
					return
				}
				var msgs []*v2.Message
				for {
					r, err := st.Recv()
					if err != nil {
						break // io.EOF: the server completed the stream
					}
					if m := r.GetMessage(); m != nil {
						msgs = append(msgs, m)
					}
				}
				for _, m := range msgs {
					sp := m.GetSystemProperties()
					r, err := cli.AckMessage(ctx, &v2.AckMessageRequest{Group: g, Topic: res,
						Entries: []*v2.AckMessageEntry{{MessageId: sp.GetMessageId(), ReceiptHandle: sp.GetReceiptHandle()}}})
					if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
						errs <- fmt.Errorf("ack: %v %v", err, r.GetStatus())
						return
					}
				}
				if acked.Add(int64(len(msgs))) >= int64(b.N) {
					rcancel()
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if consumers > 1 {
		b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	}
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}
